// npm run test:unit [-- FOLDER...]: the unit tests, test/unit/ and test/scripts/, without the launcher's process
// tests (test/unit/launcher/: the C launcher built and driven as a process, most of the unit tests' time), which
// `npm run test:launcher` runs alone. FOLDER is a folder of test/unit/ (`manifest`, `config`, ...) or `scripts`:
// only those run. Arguments that start with `-` go to node --test, a value after `=` (`--test-name-pattern=...`).
// An unknown folder is one line naming the folders there are, exit 2; otherwise the exit status is node --test's.
// Files run at least two at a time (node --test's default, one less than the CPUs, runs one at a time on two):
// most wait on sockets and children as much as they compute. The launcher's tests, which time signals and
// deaths, keep node --test's default.

import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { root } from './root.ts';
import { runAttached } from './tools.ts';

/** The folder whose tests run only when named. */
const ALONE = 'launcher';
const UNIT = join(root, 'test', 'unit');

/** The test files directly in DIR, relative to the root. */
const testsIn = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => relative(root, join(dir, entry.name)));

/** Every folder that can be named, with its directory. */
function folders(): Map<string, string> {
  const map = new Map<string, string>();
  for (const entry of readdirSync(UNIT, { withFileTypes: true })) if (entry.isDirectory()) map.set(entry.name, join(UNIT, entry.name));
  map.set('scripts', join(root, 'test', 'scripts'));
  return map;
}

/** The test files of the folders NAMED, or of all but ALONE; a string is the one-line error for a bad name. */
export function testFiles(named: readonly string[]): string[] | string {
  const known = folders();
  const unknown = named.find((name) => !known.has(name));
  if (unknown !== undefined) return `no test folder ${JSON.stringify(unknown)}: the folders are ${[...known.keys()].join(', ')}`;
  if (named.length > 0) return named.flatMap((name) => testsIn(known.get(name)!));
  return [...testsIn(UNIT), ...[...known].filter(([name]) => name !== ALONE).flatMap(([, dir]) => testsIn(dir))];
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const named = args.filter((arg) => !arg.startsWith('-'));
  const files = testFiles(named);
  if (typeof files === 'string') {
    process.stderr.write(`test:unit: ${files}\n`);
    return 2;
  }
  const flags = args.filter((arg) => arg.startsWith('-'));
  if (!named.includes(ALONE) && !flags.some((flag) => flag.startsWith('--test-concurrency')))
    flags.push(`--test-concurrency=${Math.max(2, availableParallelism() - 1)}`);
  return runAttached(process.execPath, ['--test', ...flags, ...files], { cwd: root });
}

if (import.meta.main) process.exitCode = await main();
