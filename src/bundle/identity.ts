// The portable bundle's identity: SHA-256 over each file of istio-job-run.lib/ (name, size and bytes), 16 hex
// digits. It names --install's store, so installs of one bundle share one copy. The build computes it once and
// ships it as istio-job-run.lib/IDENTITY, with the name and size of each file it covers: an install reads that
// (a few hundred bytes) instead of reading the 120 MB again, and checks names and sizes against the folder.
//
//   <identity>
//   <size> <name>     one line per file, sorted by name

import { createHash } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorCode } from '../errors.ts';

export const IDENTITY_FILE = 'IDENTITY';

/** The files the identity covers: every file of the folder but the identity itself, sorted. */
function covered(lib: string): string[] {
  return readdirSync(lib)
    .filter((name) => name !== IDENTITY_FILE)
    .sort();
}

/** Computes the identity of LIB's files and writes it into LIB (the build's step; tests' altered bundles). */
export function writeIdentity(lib: string): void {
  const files = covered(lib);
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(1 << 20);
  const lines: string[] = [];
  for (const name of files) {
    const path = join(lib, name);
    const { size } = statSync(path);
    lines.push(`${size} ${name}`);
    hash.update(`${name}\0${size}\0`);
    const fd = openSync(path, 'r');
    try {
      for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) hash.update(buffer.subarray(0, n));
    } finally {
      closeSync(fd);
    }
  }
  writeFileSync(join(lib, IDENTITY_FILE), `${hash.digest('hex').slice(0, 16)}\n${lines.join('\n')}\n`);
}

/** The identity LIB ships and the files it covers, or why it cannot be trusted (names and sizes are checked). */
export function readIdentity(lib: string): { identity: string; files: string[] } | { problem: string } {
  const path = join(lib, IDENTITY_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return { problem: `${path} cannot be read (${errorCode(error) ?? String(error)}): the bundle is incomplete` };
  }
  const [identity = '', ...lines] = text.replace(/\n$/, '').split('\n');
  const listed = lines.map((line) => /^(\d+) (\S+)$/.exec(line));
  if (!/^[0-9a-f]{16}$/.test(identity) || listed.some((match) => match === null)) {
    return { problem: `${path} is not a bundle identity (16 hex digits, then a "SIZE NAME" line per file)` };
  }
  const files = covered(lib);
  const names = listed.map((match) => match?.[2] ?? '');
  if (names.join('\n') !== files.join('\n')) {
    return { problem: `${lib} holds ${files.join(', ')}; its ${IDENTITY_FILE} names ${names.join(', ')}` };
  }
  for (const match of listed) {
    const [, size = '', name = ''] = match ?? [];
    const actual = statSync(join(lib, name)).size;
    if (String(actual) !== size) {
      return {
        problem: `${join(lib, name)} is ${actual} bytes; the bundle's ${IDENTITY_FILE} says ${size}: the bundle was altered after its build`,
      };
    }
  }
  return { identity, files };
}
