// A private copy of dist/ for one run: others may rebuild dist/ meanwhile (npm test builds it), and one
// run must measure one build. The copy is checked whole, synced to disk, and removed when the run ends.

import { cpSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIST_BUNDLE, DIST_WRAPPER, SNAPSHOT_RETRY_MS, SNAPSHOT_TRIES, TIMEOUT_MS } from './settings.ts';
import { sleep, toolOutput } from './process.ts';
import { buildTimer } from './rusage.ts';
import { sha256 } from './size.ts';

export interface Build {
  readonly dir: string;
  /** What users run: the bundle's launcher (dist/istio-job-run links to it), Node behind it as its child. */
  readonly launcher: string;
  /** The single executable inside the bundle (its size is the size target's). */
  readonly executable: string;
  /** The bench's timer (rusage.c), built for this run. */
  readonly timer: string;
  readonly bundleDir: string;
  readonly sha256: string;
}

/** The bundle's executable and launcher, in dist/ or in the copy. */
const bundled = (bundleDir: string): string => join(bundleDir, 'istio-job-run.lib', 'istio-job-run');
const launcherOf = (bundleDir: string): string => join(bundleDir, 'istio-job-run');

/** One try: copy, then check that the copies and dist/ are one and the same build. */
async function copyOnce(): Promise<Build | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-bench-'));
  const bundleDir = join(dir, 'bundle');
  try {
    // dist/istio-job-run is a link to the bundle's launcher: copying the bundle copies what it names.
    if (realpathSync(DIST_WRAPPER) !== realpathSync(launcherOf(DIST_BUNDLE))) throw new Error('dist/istio-job-run names something else');
    cpSync(DIST_BUNDLE, bundleDir, { recursive: true });
    const [copy, original, copiedLauncher, launcher] = await Promise.all([
      sha256(bundled(bundleDir)),
      sha256(bundled(DIST_BUNDLE)),
      sha256(launcherOf(bundleDir)),
      sha256(launcherOf(DIST_BUNDLE)),
    ]);
    if (copy === original && copiedLauncher === launcher) {
      const build = { dir, bundleDir, launcher: launcherOf(bundleDir), executable: bundled(bundleDir), timer: buildTimer(dir) };
      return { ...build, sha256: copy };
    }
  } catch {
    // dist/ was being rewritten: try again.
  }
  rmSync(dir, { recursive: true, force: true });
  return undefined;
}

/** A consistent copy of dist/, synced so that dirty page-cache pages do not inflate RSS or start-up. */
export async function snapshot(): Promise<Build> {
  for (let i = 0; i < SNAPSHOT_TRIES; i++) {
    if (i > 0) await sleep(SNAPSHOT_RETRY_MS);
    const build = await copyOnce();
    if (build === undefined) continue;
    toolOutput('sync', [], TIMEOUT_MS.tool);
    return build;
  }
  throw new Error(`no consistent copy of dist/ after ${SNAPSHOT_TRIES} tries: is a build running? (npm run build)`);
}

/** Removes the copy. */
export function discard(build: Build | undefined): void {
  if (build !== undefined) rmSync(build.dir, { recursive: true, force: true });
}

/** Whether dist/ still holds the build that was measured. */
export async function stillInDist(build: Build): Promise<boolean> {
  try {
    return (await sha256(bundled(DIST_BUNDLE))) === build.sha256;
  } catch {
    return false;
  }
}
