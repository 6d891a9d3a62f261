// node --predictable scripts/code-cache.ts HTTP_JS OUT: V8's code cache of the HTTP client, made by running its
// top level once (scripts/build.ts). A child of its own for --predictable: it fixes V8's string hash seed,
// which a code cache otherwise carries at random (the bytes would differ from build to build); V8 leaves the
// flag out of the cache's flag hash and rehashes the strings when it loads it, so the executable accepts it.

import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Script } from 'node:vm';
import { HTTP_ASSET, wrapCommonJs } from '../src/load-http.ts';

const [httpJs, out] = process.argv.slice(2).map((path) => resolve(path));
if (httpJs === undefined || out === undefined) throw new Error('usage: code-cache.ts HTTP_JS OUT');
const script = new Script(wrapCommonJs(readFileSync(httpJs, 'utf8')), { filename: `istio-job-run/${HTTP_ASSET}` });
const module = { exports: {} };
(script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(httpJs), module, HTTP_ASSET, '.');
writeFileSync(out, script.createCachedData());
