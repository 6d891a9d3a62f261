// npm run build: bundle src/ with esbuild, build dist/istio-job-run (a single executable of the pinned
// Node, for this machine's architecture) and dist/bundle/ (the portable bundle: the same executable with
// its C libraries, its loader and a static launcher, for images without any libc).
// scripts/release.ts reuses these steps for every architecture.

import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { Script } from 'node:vm';
import * as esbuild from 'esbuild';
import { HTTP_ASSET, HTTP_CACHE_ASSET, wrapCommonJs } from '../src/load-http.ts';
import { nodeBinary, pinnedNode, root } from './pinned-node.ts';

export const dist = join(root, 'dist');
export const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

export type Arch = 'x64' | 'arm64';

interface Target {
  readonly arch: Arch;
  readonly triplet: string;
  readonly loader: string;
  /** Built on this machine's own architecture: native tools, and a V8 code cache (it is architecture-specific). */
  readonly native: boolean;
}

export function target(arch: Arch): Target {
  const triplet = arch === 'x64' ? 'x86_64-linux-gnu' : 'aarch64-linux-gnu';
  const loader = arch === 'x64' ? 'ld-linux-x86-64.so.2' : 'ld-linux-aarch64.so.1';
  return { arch, triplet, loader, native: arch === process.arch };
}

const tool = (t: Target, name: string): string => (t.native ? name : `${t.triplet}-${name}`);
const libDirs = (t: Target): string[] => (t.native ? [`/lib/${t.triplet}`, `/usr/lib/${t.triplet}`, '/lib64'] : [`/usr/${t.triplet}/lib`]);

/** The main script without the HTTP client: src/load-http.ts loads that from an asset, in classic mode only. */
const httpApart: esbuild.Plugin = {
  name: 'http-apart',
  setup(build) {
    build.onResolve({ filter: /\/http\.ts$/ }, (args) =>
      args.importer.endsWith('load-http.ts') ? { path: args.path, external: true } : undefined,
    );
  },
};

export interface Scripts {
  /** The single executable's main script. */
  readonly main: string;
  /** src/http.ts with undici, as CommonJS: an asset of the executable. */
  readonly http: string;
}

/** esbuild: src/ into the main script and the HTTP client's script, both CommonJS. */
export async function bundleJs(dir: string): Promise<Scripts> {
  const scripts = { main: join(dir, 'istio-job-run.cjs'), http: join(dir, HTTP_ASSET) };
  await esbuildCommonJs(join(root, 'src/index.ts'), scripts.main, [httpApart]);
  await esbuildCommonJs(join(root, 'src/http.ts'), scripts.http, []);
  return scripts;
}

async function esbuildCommonJs(entry: string, outfile: string, plugins: esbuild.Plugin[]): Promise<void> {
  await esbuild.build({
    entryPoints: [entry],
    outfile,
    plugins,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    // A CommonJS bundle has no import.meta: a silent empty one kills the executable at start.
    logOverride: { 'empty-import-meta': 'error' },
    define: {
      ISTIO_JOB_RUN_VERSION: JSON.stringify(version),
      'import.meta.url': '__istioJobRunUrl',
    },
    // yargs-parser's ESM build calls createRequire(import.meta.url); in the executable that is its own path.
    banner: { js: 'var __istioJobRunUrl = require("node:url").pathToFileURL(__filename).href;' },
  });
}

/**
 * V8's code cache of the HTTP client, made by running its top level once with the pinned Node (the same V8
 * as the executable's). Architecture-specific: another architecture gets an empty one, which V8 ignores.
 */
function httpCodeCache(t: Target, httpJs: string, work: string): string {
  const cache = join(work, `${HTTP_CACHE_ASSET}-${t.arch}`);
  if (!t.native) {
    writeFileSync(cache, '');
    return cache;
  }
  // This script runs on the pinned Node, the executable's own V8 with the same flags: make the cache here.
  const script = new Script(wrapCommonJs(readFileSync(httpJs, 'utf8')), { filename: `istio-job-run/${HTTP_ASSET}` });
  const module = { exports: {} };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(httpJs), module, httpJs, work);
  writeFileSync(cache, script.createCachedData());
  return cache;
}

/** The single executable for one architecture, from the pinned Node of that architecture, stripped first. */
export async function buildExecutable(t: Target, scripts: Scripts, output: string, work: string): Promise<void> {
  const node = join(work, `node-${t.arch}`);
  copyFileSync(await nodeBinary(t.arch), node);
  // Strip before the blob goes in: stripping afterwards would cut it out.
  execFileSync(tool(t, 'strip'), ['--strip-all', node]);
  const config = join(work, `sea-${t.arch}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      main: scripts.main,
      assets: { [HTTP_ASSET]: scripts.http, [HTTP_CACHE_ASSET]: httpCodeCache(t, scripts.http, work) },
      output,
      executable: node,
      disableExperimentalSEAWarning: true,
      useCodeCache: t.native,
      useSnapshot: false,
      // No --disable-sigusr1: in Node 26 it blocks SIGUSR1 outright, so a USR1 meant for the job would never
      // arrive. The wrapper's own USR1 listener, installed first thing, replaces the inspector's.
      execArgv: [],
      // NODE_OPTIONS belongs to the job: it must not run code inside the wrapper.
      execArgvExtension: 'none',
    }),
  );
  execFileSync(pinnedNode(), ['--build-sea', config], { stdio: ['ignore', 'ignore', 'inherit'] });
  rmSync(node);
}

/** The portable bundle: DIR/istio-job-run (static launcher) and DIR/istio-job-run.lib/ (loader, libraries, executable). */
export function buildBundle(t: Target, executable: string, outDir: string): void {
  rmSync(outDir, { recursive: true, force: true });
  const lib = join(outDir, 'istio-job-run.lib');
  mkdirSync(lib, { recursive: true });
  execFileSync(
    tool(t, 'gcc'),
    [
      '-static',
      '-Os',
      '-s',
      '-Wall',
      '-Wextra',
      '-Werror',
      `-DLOADER="${t.loader}"`,
      '-o',
      join(outDir, 'istio-job-run'),
      join(root, 'src', 'launcher.c'),
    ],
    { stdio: 'inherit' },
  );
  copyFileSync(executable, join(lib, 'istio-job-run'));
  for (const library of [t.loader, ...neededLibraries(t, executable)]) {
    copyFileSync(findLibrary(t, library), join(lib, library));
  }
  chmodSync(join(lib, t.loader), 0o755);
}

/** Every shared library the executable needs, directly or through another library. */
function neededLibraries(t: Target, executable: string): string[] {
  const found = new Set<string>();
  const visit = (file: string): void => {
    const dynamic = execFileSync('readelf', ['-d', file], { encoding: 'utf8' });
    for (const [, name] of dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)) {
      if (name === undefined || name === t.loader || found.has(name)) continue;
      found.add(name);
      visit(findLibrary(t, name));
    }
  };
  visit(executable);
  return [...found].sort();
}

function findLibrary(t: Target, name: string): string {
  for (const dir of libDirs(t)) {
    const path = join(dir, name);
    if (existsSync(path)) return realpathSync(path);
  }
  throw new Error(
    `${name} for ${t.arch} is not in ${libDirs(t).join(', ')}` +
      (t.native ? '' : ` (install Debian's ${basename(name).split('.so')[0]}-${t.arch}-cross packages)`),
  );
}

async function build(): Promise<void> {
  const work = join(dist, '.build');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const scripts = await bundleJs(work);
    const host = target(process.arch as Arch);
    // Built aside and renamed into place, so a test or a benchmark running meanwhile never sees half a file.
    const executable = join(work, 'istio-job-run');
    await buildExecutable(host, scripts, executable, work);
    buildBundle(host, executable, join(work, 'bundle'));
    renameSync(executable, join(dist, 'istio-job-run'));
    rmSync(join(dist, 'bundle'), { recursive: true, force: true });
    renameSync(join(work, 'bundle'), join(dist, 'bundle'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.stderr.write(`built dist/istio-job-run and dist/bundle/ (istio-job-run ${version}, linux-${process.arch})\n`);
}

if (import.meta.main) await build();
