// The manifest tools and the `yaml` package are loaded only when asked for (src/manifest/cli/select.ts decides): in
// the single executable they are an asset of their own, compiled then, so the wrapper's start-up never parses
// them; run from source, a plain import.

import { manifestIo } from './io.ts';

type RunManifest = typeof import('./cli.ts').runManifest;

export async function runManifest(argv: readonly string[], invokedAs: string, version: string): Promise<number> {
  return (await load())(argv, invokedAs, version, manifestIo(invokedAs));
}

async function load(): Promise<RunManifest> {
  if (!process.getBuiltinModule('node:sea').isSea()) return (await import('./cli.ts')).runManifest;
  const { assetExport, MANIFEST_ASSET } = await import('../../bundle/assets.ts');
  return assetExport<RunManifest>(MANIFEST_ASSET, 'runManifest');
}
