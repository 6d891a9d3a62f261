// The engines the tests of test/engines/ run: the judge of --admission-policy (test/engines/admission/, a Go
// program on Kubernetes' own admission code, built once per API version from its pinned go.mod) and Helm 4, built
// from helm.sh/helm/v4 at HELM_VERSION. Both come from the Go module proxy and are built with the machine's Go;
// the programs are kept under CACHE by a key of everything they are built from, and Go's own module and build
// caches keep the rest, so a second run builds nothing. `node scripts/engines.ts --prepare` builds them all
// (`npm run setup -- --tests` runs it); without Go it says so in one line and exits 0, or 1 under CI=true.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { POLICY_VERSIONS, type PolicyVersion } from '../src/config/tool-flags.ts';
import { root } from './root.ts';
import { runMain, StepError } from './tools.ts';

/** The Helm the plugin is run by. */
export const HELM_VERSION = 'v4.3.2';
const HELM_MODULE = 'helm.sh/helm/v4';

/** Where the built engines are kept between runs. */
export const CACHE = join(process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'istio-job-run', 'engines');

const ADMISSION = join(root, 'test', 'engines', 'admission');

/** Each policy version's module file and build tag: v1 on the release that serves it, v1beta1 on the one before. */
const MODULES: Readonly<Record<PolicyVersion, { modfile: string; tags: string }>> = {
  v1: { modfile: 'go.mod', tags: '' },
  v1beta1: { modfile: 'go.v1beta1.mod', tags: 'v1beta1' },
};

/** The machine's go, or undefined. */
export function goCommand(): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    const candidate = join(dir || '.', 'go');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** The one line said where Go is missing. */
export const NO_GO =
  'go is not on PATH: the engines tests (Kubernetes admission code, Helm 4) are skipped; install Go 1.26+ (https://go.dev/dl) to run them';

/** Whether a missing Go fails (CI) rather than skips. */
export const goRequired = (): boolean => process.env['CI'] === 'true';

function go(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const command = goCommand();
  if (command === undefined) throw new StepError(NO_GO);
  const result = spawnSync(command, args, {
    cwd: options.cwd ?? root,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    timeout: 30 * 60_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (result.status !== 0) {
    const why = (result.stderr || String(result.error ?? '')).trim().split('\n').slice(-5).join(' | ');
    throw new StepError(`go ${args.join(' ')} failed: ${why}`);
  }
  return result.stdout;
}

const key = (...parts: readonly (string | Buffer)[]): string => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex').slice(0, 16);
};

/** Builds into CACHE/NAME-KEY, unless it is there; returns the path. */
function cached(name: string, hash: string, build: (output: string) => void): string {
  const path = join(CACHE, `${name}-${hash}`);
  if (existsSync(path)) return path;
  mkdirSync(CACHE, { recursive: true });
  // Older builds of the same engine go: the key changed.
  for (const old of readdirSync(CACHE)) if (old.startsWith(`${name}-`)) rmSync(join(CACHE, old), { recursive: true, force: true });
  const partial = `${path}.partial-${process.pid}`;
  try {
    build(partial);
    renameSync(partial, path);
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  return path;
}

/** The judge of the VERSION policy, built from test/engines/admission with that version's go.mod. */
export function admissionJudge(version: PolicyVersion): string {
  const { modfile, tags } = MODULES[version];
  const sources = readdirSync(ADMISSION)
    .filter((file) => file.endsWith('.go') || file === modfile || file === modfile.replace(/\.mod$/, '.sum'))
    .sort()
    .map((file) => readFileSync(join(ADMISSION, file)));
  const hash = key(go(['version']), version, ...sources);
  return cached(`admission-${version}`, hash, (output) =>
    go(['build', `-modfile=${modfile}`, ...(tags === '' ? [] : ['-tags', tags]), '-o', output, '.'], {
      cwd: ADMISSION,
      env: { GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local' },
    }),
  );
}

/** The k8s.io/apiserver release VERSION's judge is built on, from its go.mod. */
export function apiserverRelease(version: PolicyVersion): string {
  const text = readFileSync(join(ADMISSION, MODULES[version].modfile), 'utf8');
  return /^\s*k8s\.io\/apiserver (v\S+)/m.exec(text)?.[1] ?? 'unknown';
}

/** Helm at HELM_VERSION, built from its module with `go install`; its path. */
export function helm(): string {
  const dir = cached('helm', key(go(['version']), HELM_VERSION), (output) => {
    mkdirSync(output, { recursive: true });
    // The version a released helm reports, as Helm's own build sets it.
    go(['install', `-ldflags=-X ${HELM_MODULE}/internal/version.version=${HELM_VERSION}`, `${HELM_MODULE}/cmd/helm@${HELM_VERSION}`], {
      env: { GOBIN: output, GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local' },
    });
  });
  return join(dir, 'helm');
}

async function prepare(): Promise<void> {
  if (goCommand() === undefined) {
    if (goRequired()) throw new StepError(`${NO_GO} (CI=true: they may not be skipped)`);
    process.stderr.write(`setup: ${NO_GO}\n`);
    return;
  }
  const started = Date.now();
  for (const version of POLICY_VERSIONS) admissionJudge(version);
  helm();
  process.stderr.write(`setup: engines ready in ${CACHE} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
}

if (import.meta.main) {
  if (process.argv[2] !== '--prepare') {
    process.stderr.write('engines: usage: node scripts/engines.ts --prepare\n');
    process.exit(2);
  }
  await runMain('engines', prepare);
}
