// npm run build: bundle src/ with esbuild, build dist/istio-job-run (a single executable of the pinned
// Node, for this machine's architecture) and dist/bundle/ (the portable bundle: the same executable with
// its C libraries, its loader and a static launcher, for images without any libc).
// scripts/release.ts reuses these steps for every architecture.

import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import * as esbuild from 'esbuild';
import { APP_ASSET, APP_CACHE_ASSET, HTTP_ASSET, HTTP_CACHE_ASSET, MANIFEST_ASSET } from '../src/bundle/assets.ts';
import { IDENTITY_FILE, writeIdentity } from '../src/bundle/identity.ts';
import { LIB_DIR as LIB, PROGRAM } from '../src/bundle/self.ts';
import { runForCache } from './cache-run.ts';
import { LAUNCHER_HEADER, launcherHeader } from './launcher-header.ts';
import { NOTICES, renderNotices } from './notices.ts';
import { root } from './root.ts';
import { nodeBinary, pinnedNode } from './pinned-node.ts';
import {
  debianComponent,
  linkedComponents,
  nodeComponent,
  npmComponent,
  npmPackageDirs,
  ours,
  OURS_REF,
  uniqueComponents,
  type BundleFile,
  type Component,
} from './provenance.ts';
import { howToGet, need, runMain, runTool, StepError } from './tools.ts';

export const dist = join(root, 'dist');
export const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

export type Arch = 'x64' | 'arm64';

interface Target {
  readonly arch: Arch;
  readonly triplet: string;
  readonly loader: string;
  /** The launcher's compiler: gcc with Debian's musl headers, crt files and libc.a of that architecture. */
  readonly muslGcc: string;
  /** Built on this machine's own architecture: native tools, and a V8 code cache (it is architecture-specific). */
  readonly native: boolean;
}

export function target(arch: Arch): Target {
  const triplet = arch === 'x64' ? 'x86_64-linux-gnu' : 'aarch64-linux-gnu';
  const loader = arch === 'x64' ? 'ld-linux-x86-64.so.2' : 'ld-linux-aarch64.so.1';
  const muslGcc = arch === 'x64' ? 'x86_64-linux-musl-gcc' : 'aarch64-linux-musl-gcc';
  return { arch, triplet, loader, muslGcc, native: arch === process.arch };
}

const tool = (t: Target, name: string): string => (t.native ? name : `${t.triplet}-${name}`);
const libDirs = (t: Target): string[] => (t.native ? [`/lib/${t.triplet}`, `/usr/lib/${t.triplet}`, '/lib64'] : [`/usr/${t.triplet}/lib`]);

/**
 * The main script without the HTTP client and the manifest tools: src/bundle/load-http.ts and
 * src/manifest/cli/load.ts load those from assets, for an https: URL and for --check/--inject only.
 */
const apart: esbuild.Plugin = {
  name: 'apart',
  setup(build) {
    build.onResolve({ filter: /\/undici\.ts$/ }, (args) =>
      args.importer.endsWith('load-http.ts') ? { path: args.path, external: true } : undefined,
    );
    build.onResolve({ filter: /\/cli\.ts$/ }, (args) =>
      args.importer.endsWith('manifest/cli/load.ts') ? { path: args.path, external: true } : undefined,
    );
  },
};

/**
 * undici's HTTP/2 client requires node:http2 when it loads, and falls back to an empty stand-in when that
 * throws. The wrapper speaks HTTP/1.1 to the sidecar only (no allowH2, no TLS): loading node:http2 would load
 * tls and crypto with it, OpenSSL's pages and allocations among them (docs/PERFORMANCE.md measures it).
 */
const noHttp2: esbuild.Plugin = {
  name: 'no-http2',
  setup(build) {
    build.onResolve({ filter: /^node:http2$/ }, (args) =>
      args.importer.endsWith('client-h2.js') ? { path: 'http2', namespace: 'no-http2' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'no-http2' }, () => ({
      contents: 'throw new Error("node:http2 is left out of the HTTP client (scripts/build.ts)");',
      loader: 'js',
    }));
  },
};

/**
 * The shell parser for bundles. Its two WebAssembly files, inlined: src/manifest/script/shell-grammar.ts reads
 * them from node_modules when run from source; in a bundle its place is taken by their bytes (esbuild's binary loader).
 */
export const shellGrammarInline: esbuild.Plugin = {
  name: 'shell-grammar-inline',
  setup(build) {
    // Its CommonJS build: the ES module one imports node:module with import(), which a script of the
    // executable cannot (src/bundle/assets.ts).
    build.onResolve({ filter: /^web-tree-sitter$/ }, () => ({
      path: join(root, 'node_modules', 'web-tree-sitter', 'web-tree-sitter.cjs'),
    }));
    build.onLoad({ filter: /[\\/]shell-grammar\.ts$/ }, () => ({
      contents: [
        "import runtime from 'web-tree-sitter/web-tree-sitter.wasm';",
        "import bash from 'tree-sitter-bash/tree-sitter-bash.wasm';",
        'export const grammarFiles = () => ({ runtime, bash });',
      ].join('\n'),
      loader: 'ts',
      resolveDir: root,
    }));
  },
};

export interface Scripts {
  /** The single executable's main script (src/bundle/main.ts): it runs the app from its asset. */
  readonly main: string;
  /** The wrapper itself (src/index.ts), as CommonJS: an asset of the executable. */
  readonly app: string;
  /** src/http/undici.ts with undici, as CommonJS: an asset of the executable. */
  readonly http: string;
  /** src/manifest/cli/cli.ts with yaml, as CommonJS: an asset of the executable. */
  readonly manifest: string;
  /** Every file esbuild read for them (its metafile), relative to the repository, sorted. */
  readonly inputs: readonly string[];
}

/** esbuild: src/ into the main script, the app's and the HTTP client's scripts, all CommonJS. */
export async function bundleJs(dir: string): Promise<Scripts> {
  const main = join(dir, 'sea-main.cjs');
  const app = join(dir, APP_ASSET);
  const http = join(dir, HTTP_ASSET);
  const manifest = join(dir, MANIFEST_ASSET);
  const inputs = [
    ...(await esbuildCommonJs('src/bundle/main.ts', main, [])),
    ...(await esbuildCommonJs('src/index.ts', app, [apart])),
    ...(await esbuildCommonJs('src/http/undici.ts', http, [noHttp2])),
    ...(await esbuildCommonJs('src/manifest/cli/cli.ts', manifest, [shellGrammarInline])),
  ];
  return { main, app, http, manifest, inputs: [...new Set(inputs)].sort() };
}

/** One CommonJS bundle; the files it read. Paths are relative to the repository, so no clone's path gets in. */
/**
 * import.meta in a CommonJS bundle, which has none: yargs-parser's ESM build calls createRequire(import.meta.url),
 * so it is the bundle's own path; a silent empty one would kill the program at start.
 */
export const COMMONJS_IMPORT_META = {
  logOverride: { 'empty-import-meta': 'error' },
  define: { 'import.meta.url': '__istioJobRunUrl' },
  banner: { js: 'var __istioJobRunUrl = require("node:url").pathToFileURL(__filename).href;' },
} as const satisfies Pick<esbuild.BuildOptions, 'logOverride' | 'define' | 'banner'>;

async function esbuildCommonJs(entry: string, outfile: string, plugins: esbuild.Plugin[]): Promise<string[]> {
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile,
    plugins,
    metafile: true,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    loader: { '.wasm': 'binary' },
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    ...COMMONJS_IMPORT_META,
    define: { ISTIO_JOB_RUN_VERSION: JSON.stringify(version), ...COMMONJS_IMPORT_META.define },
  });
  // esbuild escapes what is not ASCII everywhere but in regular expressions; one such character makes V8 hold
  // the whole script as two-byte text, slower to decode and to compile at every start.
  const wide = readFileSync(outfile, 'latin1').search(/[^\x00-\x7f]/);
  if (wide !== -1) throw new StepError(`${basename(outfile)} is not ASCII at offset ${wide}: escape that character in its source`);
  // Files only: a module a plugin makes up (namespace:path, such as the missing node:http2) is in no file.
  return Object.keys(result.metafile.inputs).filter((input) => !/^[a-z0-9-]+:/.test(input));
}

/**
 * V8 writes its random string hash seed into every code cache (the SEA's main script's and the HTTP client's):
 * with --predictable the seed is fixed, so the caches are byte-for-byte the same on every build. The flag is
 * not part of the flag hash V8 checks when it loads a cache, and the strings are rehashed on loading.
 */
const PREDICTABLE = ['--predictable'];

/**
 * V8's code cache of one of the executable's scripts, made by running it once with the pinned Node (the same
 * V8 as the executable's): the HTTP client's top level, or the app's whole classic job (scripts/cache-run.ts),
 * in an empty environment. Architecture-specific: another architecture gets an empty one, which V8 ignores.
 */
async function codeCache(t: Target, js: string, cacheAsset: string, work: string, app: boolean): Promise<string> {
  const cache = join(work, `${cacheAsset}-${t.arch}`);
  if (!t.native) {
    writeFileSync(cache, '');
    return cache;
  }
  // The pinned Node is the executable's own V8; --predictable makes the cache's bytes the same every time.
  const args = [...PREDICTABLE, join(root, 'scripts', 'code-cache.ts'), basename(js), cache];
  if (app) {
    await runForCache(pinnedNode(), args, dirname(js));
    return cache;
  }
  const run = spawnSync(pinnedNode(), args, { cwd: dirname(js), stdio: ['ignore', 'ignore', 'inherit'], env: {} });
  if (run.status !== 0) throw new StepError(`the code cache of ${basename(js)}: exit ${run.status ?? run.signal}`);
  return cache;
}

/**
 * Node's flags in the executable. In Node 26 --disable-sigusr1 blocks SIGUSR1 outright: no USR1 can ever open
 * the inspector. A USR1 for the job reaches the launcher (src/launcher/launcher.c), which relays it to this process over a
 * pipe. One V8 worker thread, not one per core: the wrapper's heap is small, and every thread counts against a
 * pod's pids limit.
 */
export const SEA_EXEC_ARGV: readonly string[] = ['--disable-sigusr1', '--v8-pool-size=1'];

/** The single executable for one architecture, from the pinned Node of that architecture, stripped first. */
export async function buildExecutable(
  t: Target,
  scripts: Scripts,
  output: string,
  work: string,
  /** More of Node's flags, for a variant built to be measured; none in what ships. */
  extraExecArgv: readonly string[] = [],
): Promise<void> {
  const node = join(work, `node-${t.arch}`);
  copyFileSync(await nodeBinary(t.arch), node);
  // Strip before the blob goes in: stripping afterwards would cut it out.
  runTool(tool(t, 'strip'), ['--strip-all', node]);
  const config = join(work, `sea-${t.arch}.json`);
  // Paths relative to WORK (node runs there): the blob holds no clone's path.
  const inWork = (path: string): string => relative(work, path);
  writeFileSync(
    config,
    JSON.stringify({
      main: inWork(scripts.main),
      assets: {
        [APP_ASSET]: inWork(scripts.app),
        [APP_CACHE_ASSET]: inWork(await codeCache(t, scripts.app, APP_CACHE_ASSET, work, true)),
        [HTTP_ASSET]: inWork(scripts.http),
        [HTTP_CACHE_ASSET]: inWork(await codeCache(t, scripts.http, HTTP_CACHE_ASSET, work, false)),
        [MANIFEST_ASSET]: inWork(scripts.manifest),
      },
      output: inWork(output),
      executable: inWork(node),
      disableExperimentalSEAWarning: true,
      useCodeCache: t.native,
      useSnapshot: false,
      execArgv: [...SEA_EXEC_ARGV, ...extraExecArgv],
      // NODE_OPTIONS belongs to the job: it must not run code inside the wrapper.
      execArgvExtension: 'none',
    }),
  );
  runTool(pinnedNode(), [...PREDICTABLE, '--build-sea', inWork(config)], { cwd: work, stdio: ['ignore', 'ignore', 'inherit'] });
  rmSync(node);
}

/** What a bundle holds: each file and what it is made of, and those parts with their licence texts. */
export interface Bundle {
  readonly files: readonly BundleFile[];
  readonly components: readonly Component[];
}

/**
 * The launcher's C files: the init, its own lines, the checks before the wrapper starts, the last-resort quit, and
 * the state they share.
 */
const LAUNCHER_SOURCES = ['launcher.c', 'log.c', 'preflight.c', 'quit.c', 'shared.c'].map((file) => `src/launcher/${file}`);
const LAUNCHER_HEADER_SOURCE = 'src/launcher/launcher.h';

/**
 * The launcher's compiler flags. Static against musl (MIT, docs/RELEASE.md says why), _GNU_SOURCE for
 * signalfd, pipe2 and syscall (defined empty, as a `#define _GNU_SOURCE` in the source would: the same
 * definition twice is no error under -Werror), and nothing of the build machine in the output: the source's
 * path is rewritten to ".", and no build id.
 */
const LAUNCHER_CFLAGS = ['-Os', '-std=gnu11', '-D_GNU_SOURCE=', '-Wall', '-Wextra', '-Werror', `-ffile-prefix-map=${root}=.`];
export const LAUNCHER_LDFLAGS = ['-static', '-s', '-Wl,--build-id=none'];

/**
 * The portable bundle: DIR/istio-job-run (static launcher) and DIR/istio-job-run.lib/ (loader, libraries,
 * executable, NOTICES, and the IDENTITY of them all). Every file gets a fixed mode, so the umask of the build
 * does not show in a tarball.
 */
export async function buildBundle(t: Target, executable: string, scripts: Scripts, outDir: string): Promise<Bundle> {
  rmSync(outDir, { recursive: true, force: true });
  const lib = join(outDir, LIB);
  mkdirSync(lib, { recursive: true });
  const launcher = buildLauncher(t, join(outDir, PROGRAM), dirname(outDir));
  copyFileSync(executable, join(lib, PROGRAM));
  const libraries = [t.loader, ...neededLibraries(t, executable)].map((name) => ({ name, path: findLibrary(t, name) }));
  for (const { name, path } of libraries) copyFileSync(path, join(lib, name));

  const npm = npmPackageDirs(scripts.inputs).map(npmComponent);
  const node = nodeComponent(t.arch, await nodeBinary(t.arch));
  const debian = libraries.map(({ name, path }) => ({ name, component: debianComponent(path) }));
  const files: BundleFile[] = [
    { path: PROGRAM, madeOf: [OURS_REF, ...launcher.map((c) => c.ref)], sources: [...LAUNCHER_SOURCES, LAUNCHER_HEADER_SOURCE] },
    {
      path: `${LIB}/${PROGRAM}`,
      madeOf: [OURS_REF, node.ref, ...npm.map((c) => c.ref)],
      sources: scripts.inputs.filter((input) => !input.includes('node_modules/')),
    },
    ...debian.map(({ name, component }) => ({ path: `${LIB}/${name}`, madeOf: [component.ref], sources: [] })),
    { path: `${LIB}/${NOTICES}`, madeOf: [], sources: [] },
    { path: `${LIB}/${IDENTITY_FILE}`, madeOf: [], sources: [] },
  ].sort((a, b) => a.path.localeCompare(b.path));
  const components = uniqueComponents([ours(version), node, ...npm, ...launcher, ...debian.map(({ component }) => component)]);
  writeFileSync(join(lib, NOTICES), renderNotices(files, components, `istio-job-run ${version} for linux-${t.arch}`));
  // Last: it covers every other file of the folder. --install reads it instead of hashing 120 MB.
  writeIdentity(lib);

  for (const dir of [outDir, lib]) chmodSync(dir, 0o755);
  for (const file of files) {
    const executableFile = file.path === PROGRAM || file.path === `${LIB}/${PROGRAM}` || file.path === `${LIB}/${t.loader}`;
    chmodSync(join(outDir, file.path), executableFile ? 0o755 : 0o644);
  }
  return { files, components };
}

/**
 * The compiler's arguments for the launcher's C files (one command), the protocol's header
 * (scripts/launcher-header.ts) written into `work` first and its id given as LAUNCHER_PROTOCOL_WANTED: `-c` for
 * the bundle's objects, or flags and an output for a test's build.
 */
export function launcherCompile(loader: string, work: string, rest: readonly string[]): string[] {
  const header = launcherHeader(loader);
  writeFileSync(join(work, LAUNCHER_HEADER), header.text);
  const wanted = `-DLAUNCHER_PROTOCOL_WANTED=${header.id}`;
  return [...LAUNCHER_CFLAGS, wanted, '-iquote', work, ...rest, ...LAUNCHER_SOURCES.map((source) => join(root, source))];
}

/** The launcher, static against musl; the Debian packages of what the link put in beside our code. */
function buildLauncher(t: Target, output: string, work: string): Component[] {
  // One object per C file, written into a folder of this target's own by one compiler command.
  const objectDir = join(work, `launcher-${t.arch}`);
  const objects = LAUNCHER_SOURCES.map((source) => join(objectDir, basename(source).replace(/\.c$/, '.o')));
  // A cross target's musl-gcc (Debian's musl-dev of that architecture) is a script that runs the cross gcc.
  need(t.muslGcc, ...(t.native ? [] : [`${t.triplet}-gcc`]));
  mkdirSync(objectDir, { recursive: true });
  try {
    runTool(t.muslGcc, launcherCompile(t.loader, work, ['-c']), { stdio: 'inherit', cwd: objectDir });
    const traced = runTool(t.muslGcc, [...LAUNCHER_LDFLAGS, '-Wl,--trace', '-o', output, ...objects]);
    return linkedComponents(traced, (path) => objects.includes(path));
  } finally {
    rmSync(objectDir, { recursive: true, force: true });
    rmSync(join(work, LAUNCHER_HEADER), { force: true });
  }
}

/** Every shared library the executable needs, directly or through another library. */
function neededLibraries(t: Target, executable: string): string[] {
  const found = new Set<string>();
  const visit = (file: string): void => {
    const dynamic = runTool('readelf', ['-d', file]);
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
  throw new StepError(
    t.native
      ? `${howToGet(name)} (looked in ${libDirs(t).join(', ')})`
      : `${name} for ${t.arch} is not in ${libDirs(t).join(', ')}: it comes with Debian's ${t.arch}-cross libraries (\`npm run setup -- --tests\` installs them, as root)`,
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
    await buildBundle(host, executable, scripts, join(work, 'bundle'));
    rmSync(join(dist, 'bundle'), { recursive: true, force: true });
    renameSync(join(work, 'bundle'), join(dist, 'bundle'));
    // What users run is the bundle, launcher in front: dist/istio-job-run is that, for glibc or not.
    const link = join(work, 'istio-job-run.link');
    symlinkSync('bundle/istio-job-run', link);
    renameSync(link, join(dist, 'istio-job-run'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.stderr.write(`built dist/istio-job-run and dist/bundle/ (istio-job-run ${version}, linux-${process.arch})\n`);
}

if (import.meta.main) await runMain('build', build);
