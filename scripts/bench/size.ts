// size: the executable and the portable bundle, raw and as gzip would ship them (the bundle as a tarball).

import { createHash } from 'node:crypto';
import { createReadStream, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { TIMEOUT_MS } from './settings.ts';
import type { Build } from './snapshot.ts';
import { launch, succeeded } from './process.ts';

export interface SizeResult {
  readonly gzipLevel: number;
  readonly executable: { readonly bytes: number; readonly gzipBytes: number; readonly sha256: string };
  readonly bundle: { readonly bytes: number; readonly files: number; readonly gzipBytes: number };
}

/** Total bytes and number of files under a directory (symlinks counted as themselves). */
function treeSize(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isDirectory()) continue;
    bytes += lstatSync(join(entry.parentPath, entry.name)).size;
    files += 1;
  }
  return { bytes, files };
}

/** Counts the bytes a stream yields. */
async function countBytes(stream: Readable): Promise<number> {
  let bytes = 0;
  for await (const chunk of stream) bytes += (chunk as Buffer).length;
  return bytes;
}

/** gzip -LEVEL of a file, counted as it streams: nothing is written to disk. */
async function gzipFile(file: string, level: number): Promise<number> {
  const gzip = launch('gzip', [`-${level}`, '-c', file], ['ignore', 'pipe'], TIMEOUT_MS.gzip);
  const [bytes] = await Promise.all([countBytes(gzip.child.stdout as Readable), succeeded(gzip, `gzip ${file}`)]);
  return bytes;
}

/** A tarball of a directory, gzipped at LEVEL, counted as it streams (the release ships such a tarball). */
async function gzipTree(dir: string, level: number): Promise<number> {
  const tar = launch('tar', ['-cf', '-', '-C', dir, '.'], ['ignore', 'pipe'], TIMEOUT_MS.gzip);
  const gzip = launch('gzip', [`-${level}`, '-c'], ['pipe', 'pipe'], TIMEOUT_MS.gzip);
  (tar.child.stdout as Readable).pipe(gzip.child.stdin as NodeJS.WritableStream);
  const [bytes] = await Promise.all([
    countBytes(gzip.child.stdout as Readable),
    succeeded(tar, `tar ${dir}`),
    succeeded(gzip, `gzip of ${dir}`),
  ]);
  return bytes;
}

/** sha256 of a file: names the exact build that was measured. */
export async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Both sizes; the two gzips run side by side (nothing is timed meanwhile). */
export async function measureSize(build: Build, level: number): Promise<SizeResult> {
  const [exeGzip, bundleGzip] = await Promise.all([gzipFile(build.executable, level), gzipTree(build.bundleDir, level)]);
  const bundle = treeSize(build.bundleDir);
  return {
    gzipLevel: level,
    executable: { bytes: lstatSync(build.executable).size, gzipBytes: exeGzip, sha256: build.sha256 },
    bundle: { ...bundle, gzipBytes: bundleGzip },
  };
}
