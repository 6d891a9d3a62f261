// node --predictable scripts/code-cache.ts NAME OUT [ARG...] (NAME: a script in the working directory): V8's code cache of a script of the executable
// (scripts/build.ts), made when the process exits after running the script once, as a main script with
// argv ARGs: the cache then holds every function that run compiled, not only the top level. A child of its
// own for --predictable: it fixes V8's string hash seed, which a code cache otherwise carries at random (the
// bytes would differ from build to build); V8 leaves the flag out of the cache's flag hash and rehashes the
// strings when it loads it, so the executable accepts it.

import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, resolve } from 'node:path';
import { Script } from 'node:vm';
import { type CommonJsRun, wrapCommonJs } from '../src/bundle/assets.ts';

// JS is a bare name in the working directory: the path it was read from can end up among the cache's bytes
// (seen: the clone's path, after a run), and a release must hold no path of the machine that built it.
const [name, outArg] = process.argv.slice(2, 4);
if (name === undefined || outArg === undefined || basename(name) !== name) throw new Error('usage: code-cache.ts NAME OUT [ARG...]');
const js = name;
const out = resolve(outArg);
const script = new Script(wrapCommonJs(readFileSync(js, 'utf8')), { filename: `istio-job-run/${name}` });
process.on('exit', () => writeFileSync(out, script.createCachedData()));
process.argv = [process.argv0, `/${name}`, ...process.argv.slice(4)];
const module = { exports: {} };
(script.runInThisContext() as CommonJsRun)(module.exports, createRequire(`/${name}`), module, `/${name}`, '/');
