// The single executable's main script: the wrapper is an asset of it, compiled with a code cache made after
// one whole classic job (scripts/cache-run.ts). Node's own code cache of a main script holds only what its
// compile produced: the functions start-up then calls (the option parser's among them) were compiled at
// every start, 1-1.5 ms of it (docs/PERFORMANCE.md).

import { APP_ASSET, APP_CACHE_ASSET, compileAsset } from './assets.ts';

compileAsset(APP_ASSET, APP_CACHE_ASSET)(exports, require, module, __filename, __dirname);
