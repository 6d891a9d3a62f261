// The manifest tools and the `yaml` package are loaded only when asked for (src/manifest/cli/select.ts decides): in
// the single executable they are an asset of their own, compiled then, so the wrapper's start-up never parses
// them; run from source, a plain import.

import { createRequire, isBuiltin } from 'node:module';
import { manifestIo } from './io.ts';

type RunManifest = typeof import('./cli.ts').runManifest;

export async function runManifest(argv: readonly string[], invokedAs: string, version: string): Promise<number> {
  return (await load())(argv, invokedAs, version, manifestIo(invokedAs));
}

async function load(): Promise<RunManifest> {
  if (!process.getBuiltinModule('node:sea').isSea()) return (await import('./cli.ts')).runManifest;
  const { compileAsset, MANIFEST_ASSET } = await import('../../bundle/assets.ts');
  const module = { exports: {} as { runManifest?: RunManifest } };
  compileAsset(MANIFEST_ASSET)(module.exports, builtinsOnly, module, `/${MANIFEST_ASSET}`, '/');
  if (module.exports.runManifest === undefined) throw new Error(`the ${MANIFEST_ASSET} asset has no runManifest`);
  return module.exports.runManifest;
}

/** The bundle needs only Node's own modules. */
const nodeRequire = createRequire(import.meta.url);
function builtinsOnly(id: string): unknown {
  if (!isBuiltin(id)) throw new Error(`Cannot find module '${id}' (not bundled)`);
  return nodeRequire(id);
}
