// npm run test:unit [-- FOLDER...]: the unit tests, test/unit/ and test/scripts/, without the launcher's process
// tests (test/unit/launcher/: the C launcher built and driven as a process, most of the unit tests' time), which
// `npm run test:launcher` runs alone. FOLDER is a folder of test/unit/ (`manifest`, `config`, `manifest/yaml`,
// ...) or `scripts`: only those run. Arguments that start with `-` go to node --test, a value after `=`
// (`--test-name-pattern=...`). An unknown folder is one line naming the folders there are, exit 2; otherwise the
// exit status is node --test's.
// The unit tests run in one process (node --test's --test-isolation=none): they share what every file loads (the
// shell parser's WebAssembly, the manifest model, the TypeScript of the sources), which in a process per file was
// most of their time. The launcher's tests, which time signals and deaths of processes they start, keep a process
// per file.

import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { root } from './root.ts';
import { runAttached } from './tools.ts';

/** The folder whose tests run only when named. */
const ALONE = 'launcher';
const UNIT = join(root, 'test', 'unit');

/** The test files in DIR, and with DEEP in its folders too, relative to the root. */
const testsIn = (dir: string, deep = true): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: deep })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();

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
  // A folder inside one, such as manifest/yaml, is named by its path under test/unit/.
  const dirOf = (name: string): string | undefined =>
    known.get(name) ??
    (name.includes('/') && statSync(join(UNIT, name), { throwIfNoEntry: false })?.isDirectory() ? join(UNIT, name) : undefined);
  const unknown = named.find((name) => dirOf(name) === undefined);
  if (unknown !== undefined) return `no test folder ${JSON.stringify(unknown)}: the folders are ${[...known.keys()].join(', ')}`;
  if (named.length > 0) return named.flatMap((name) => testsIn(dirOf(name)!));
  return [...testsIn(UNIT, false), ...[...known].filter(([name]) => name !== ALONE).flatMap(([, dir]) => testsIn(dir))];
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
  if (!named.includes(ALONE) && !flags.some((flag) => flag.startsWith('--test-isolation'))) flags.push('--test-isolation=none');
  return runAttached(process.execPath, ['--test', ...flags, ...files], { cwd: root });
}

if (import.meta.main) process.exitCode = await main();
