// The two WebAssembly files of the shell parser: tree-sitter's runtime and its bash grammar. Run from source,
// they are read from node_modules; in the bundles (the executable's manifest asset, the npm package) the build
// puts their bytes in place of this module (scripts/build.ts, `shellGrammarInline`).

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const grammarFiles = (): { readonly runtime: Uint8Array; readonly bash: Uint8Array } => ({
  runtime: readFileSync(require.resolve('web-tree-sitter/web-tree-sitter.wasm')),
  bash: readFileSync(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm')),
});
