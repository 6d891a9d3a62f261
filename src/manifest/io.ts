// The manifest tools' files, stdin and stdout, as the process has them: stdin and stdout may be pipes that
// another process opened non-blocking (a Helm post-renderer's), so reads and writes wait out EAGAIN.

import { isUtf8 } from 'node:buffer';
import { readFileSync, readSync, writeSync } from 'node:fs';
import { writeStderr } from '../log.ts';
import type { ManifestIo } from './cli.ts';

export function manifestIo(): ManifestIo {
  return {
    readFile: (path) => utf8(path === '-' ? readStdin() : readFileSync(path)),
    stdout: (text) => writeAll(1, text),
    stderr: (line) => writeStderr(`istio-job-run: ${line}\n`),
  };
}

/**
 * The text of a file that is UTF-8, as Kubernetes requires: other bytes would not come out of --inject as they
 * went in, so they are refused (as a file that cannot be read).
 */
function utf8(bytes: Buffer): string {
  if (!isUtf8(bytes)) throw Object.assign(new Error('not UTF-8'), { code: 'not UTF-8' });
  return bytes.toString('utf8');
}

/** A moment's pause for a descriptor that said EAGAIN: a pipe another process opened non-blocking. */
const pause = (): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
};

/** All of stdin, whether it is a file, a terminal or a pipe (blocking or not). */
function readStdin(): Buffer {
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
  return Buffer.concat(chunks);
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
