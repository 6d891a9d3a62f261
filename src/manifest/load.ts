// The manifest tools and the `yaml` package are loaded only when asked for (src/manifest/select.ts decides): in
// the single executable they are an asset of their own, compiled then, so the wrapper's start-up never parses
// them; run from source, a plain import.

import { readFileSync, readSync, writeSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { writeStderr } from '../log.ts';
import type { ManifestIo } from './cli.ts';

type RunManifest = typeof import('./cli.ts').runManifest;

export async function runManifest(argv: readonly string[], invokedAs: string, version: string): Promise<number> {
  const io: ManifestIo = {
    readFile: (path) => (path === '-' ? readStdin() : readFileSync(path, 'utf8')),
    stdout: (text) => writeAll(1, text),
    stderr: (line) => writeStderr(`istio-job-run: ${line}\n`),
  };
  return (await load())(argv, invokedAs, version, io);
}

async function load(): Promise<RunManifest> {
  if (!process.getBuiltinModule('node:sea').isSea()) return (await import('./cli.ts')).runManifest;
  const { compileAsset, MANIFEST_ASSET } = await import('../sea-assets.ts');
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

/** A moment's pause for a descriptor that said EAGAIN: a pipe another process opened non-blocking. */
const pause = (): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
};

/** All of stdin, whether it is a file, a terminal or a pipe (blocking or not). */
function readStdin(): string {
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(1 << 16);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buffer);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
        pause();
        continue;
      }
      if ((error as NodeJS.ErrnoException).code === 'EOF') break;
      throw error;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Every byte, through partial writes and EAGAIN; a closed reader (EPIPE) throws. */
function writeAll(fd: number, text: string): void {
  let bytes = Buffer.from(text);
  while (bytes.length > 0) {
    try {
      bytes = bytes.subarray(writeSync(fd, bytes));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      pause();
    }
  }
}
