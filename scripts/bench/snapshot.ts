// A private copy of dist/ for one run: others may rebuild dist/ meanwhile (npm test builds it), and one
// run must measure one build. The copy is checked whole, synced to disk, and removed when the run ends.

import { copyFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIST_BUNDLE, DIST_WRAPPER, SNAPSHOT_RETRY_MS, SNAPSHOT_TRIES, TIMEOUT_MS } from './settings.ts';
import { sleep, toolOutput } from './process.ts';
import { sha256 } from './size.ts';

export interface Build {
  readonly dir: string;
  readonly executable: string;
  readonly bundleDir: string;
  readonly sha256: string;
}

/** The bundle's own copy of the executable: equal to dist/istio-job-run when both come from one build. */
const bundled = (bundleDir: string): string => join(bundleDir, 'istio-job-run.lib', 'istio-job-run');

/** One try: copy, then check that the copies and dist/ are one and the same build. */
async function copyOnce(): Promise<Build | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-bench-'));
  const build = { dir, executable: join(dir, 'istio-job-run'), bundleDir: join(dir, 'bundle') };
  try {
    copyFileSync(DIST_WRAPPER, build.executable);
    cpSync(DIST_BUNDLE, build.bundleDir, { recursive: true });
    const [copy, inBundle, original] = await Promise.all([
      sha256(build.executable),
      sha256(bundled(build.bundleDir)),
      sha256(DIST_WRAPPER),
    ]);
    if (copy === inBundle && copy === original) return { ...build, sha256: copy };
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
    return (await sha256(DIST_WRAPPER)) === build.sha256;
  } catch {
    return false;
  }
}
