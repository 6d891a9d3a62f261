// npm run test:unit [-- FOLDER...]: the unit tests, test/unit/ and test/scripts/, without the launcher's process
// tests (test/unit/launcher/: the C launcher built and driven as a process, most of the unit tests' time), which
// `npm run test:launcher` runs alone. FOLDER is a folder of test/unit/ (`manifest`, `config`, ...) or `scripts`:
// only those run. Arguments that start with `-` go to node --test (`--test-name-pattern=...`). An unknown folder is
// one line naming the folders there are, exit 2; otherwise the exit status is node --test's.

import { readdirSync } from 'node:fs';
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
  const files = testFiles(args.filter((arg) => !arg.startsWith('-')));
  if (typeof files === 'string') {
    process.stderr.write(`test:unit: ${files}\n`);
    return 2;
  }
  return runAttached(process.execPath, ['--test', ...args.filter((arg) => arg.startsWith('-')), ...files], { cwd: root });
}

if (import.meta.main) process.exitCode = await main();
