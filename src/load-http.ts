// The HTTP client (undici) is most of the code, and only classic mode needs it. In the single executable it
// is an asset, compiled only when asked for, with its own V8 code cache; run from source, a plain import.

import { createRequire, isBuiltin } from 'node:module';
import type { Http, HttpSettings } from './http.ts';

export async function loadHttp(settings: HttpSettings = {}): Promise<Http> {
  if (!process.getBuiltinModule('node:sea').isSea()) return (await import('./http.ts')).createHttp(settings);

  const { compileAsset, HTTP_ASSET, HTTP_CACHE_ASSET } = await import('./sea-assets.ts');
  const module = { exports: {} as { createHttp?: (settings: HttpSettings) => Http } };
  const run = compileAsset(HTTP_ASSET, HTTP_CACHE_ASSET);
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
