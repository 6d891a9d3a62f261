// The HTTP client (undici) is most of the code, and only classic mode needs it. In the single executable it
// is an asset, compiled only when asked for, with its own V8 code cache; run from source, a plain import.

import { createRequire, isBuiltin } from 'node:module';
import type { Http, HttpSettings } from './http.ts';

/** The asset names the build writes (scripts/build.ts) and this module reads. */
export const HTTP_ASSET = 'http.cjs';
export const HTTP_CACHE_ASSET = 'http.cjs.cache';

/** Wraps CommonJS source as Node does, so one compiled function takes the module's arguments. */
export const wrapCommonJs = (source: string): string => `(function (exports, require, module, __filename, __dirname) {${source}\n})`;

export async function loadHttp(settings: HttpSettings = {}): Promise<Http> {
  const sea = await import('node:sea');
  if (!sea.isSea()) return (await import('./http.ts')).createHttp(settings);

  const { Script } = await import('node:vm');
  const script = new Script(wrapCommonJs(sea.getAsset(HTTP_ASSET, 'utf8')), {
    filename: `istio-job-run/${HTTP_ASSET}`,
    cachedData: Buffer.from(sea.getRawAsset(HTTP_CACHE_ASSET)),
  });
  if (script.cachedDataRejected === true) process.emitWarning("the HTTP client's code cache was rejected; compiling it");
  const module = { exports: {} as { createHttp?: (settings: HttpSettings) => Http } };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  // An absolute __filename: the bundle's banner makes a file URL of it, which must not ask for the working
  // directory (it may have been deleted: the command still runs there).
  run(module.exports, builtinsOnly, module, `/${HTTP_ASSET}`, '/');
  if (module.exports.createHttp === undefined) throw new Error(`the ${HTTP_ASSET} asset has no createHttp`);
  return module.exports.createHttp(settings);
}

/** The bundle needs only Node's own modules; nothing is read from the disk beside the executable. */
const nodeRequire = createRequire(import.meta.url);
function builtinsOnly(id: string): unknown {
  if (!isBuiltin(id)) throw new Error(`Cannot find module '${id}' (not bundled)`);
  return nodeRequire(id);
}
