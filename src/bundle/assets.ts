// The single executable's scripts beside its main one: the asset names the build writes (scripts/build.ts)
// and the executable reads, and how one is compiled with its V8 code cache (made by scripts/code-cache.ts
// after running the script once, so it holds what start-up compiles lazily, not only the top level).

import { getAsset, getRawAsset } from 'node:sea';
import { Script } from 'node:vm';

/** The wrapper itself (src/index.ts bundled): run by the executable's main script (src/bundle/main.ts). */
export const APP_ASSET = 'istio-job-run.cjs';
export const APP_CACHE_ASSET = 'istio-job-run.cjs.cache';
/** The HTTP client (src/http/undici.ts with undici): loaded by src/bundle/load-http.ts, in classic mode only. */
export const HTTP_ASSET = 'http.cjs';
export const HTTP_CACHE_ASSET = 'http.cjs.cache';
/** The manifest tools (src/manifest/cli/cli.ts with yaml): loaded by src/manifest/cli/load.ts, for --check and --inject only. */
export const MANIFEST_ASSET = 'manifest.cjs';

/** The arguments Node gives a CommonJS module. */
export type CommonJsRun = (exports: unknown, require: unknown, module: unknown, filename: string, dirname: string) => void;

/** Wraps CommonJS source as Node does, so one compiled function takes the module's arguments. */
export const wrapCommonJs = (source: string): string => `(function (exports, require, module, __filename, __dirname) {${source}\n})`;

/**
 * The script NAME of the executable, compiled with the code cache CACHE (an empty one compiles it anew). It
 * has no `import()` of Node's modules (esbuild leaves those as they are): the script would need a loader for
 * them, which vm gives only as an experimental feature (a warning on stderr). process.getBuiltinModule instead.
 * Without CACHE, compiled anew (a script that is not on the wrapper's start-up path).
 */
export function compileAsset(name: string, cache?: string): CommonJsRun {
  const script = new Script(wrapCommonJs(getAsset(name, 'utf8')), {
    filename: `istio-job-run/${name}`,
    ...(cache === undefined ? {} : { cachedData: Buffer.from(getRawAsset(cache)) }),
  });
  if (script.cachedDataRejected === true) process.emitWarning(`the code cache of ${name} was rejected; compiling it`);
  return script.runInThisContext() as CommonJsRun;
}
