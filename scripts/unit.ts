// npm run test:unit [-- FOLDER...]: the unit tests, test/unit/ and test/scripts/, without the launcher's process
// tests (test/unit/launcher/: the C launcher built and driven as a process, most of the unit tests' time), which
// `npm run test:launcher` runs alone. FOLDER is a folder of test/unit/ (`manifest`, `config`, ...) or `scripts`:
// only those run. Arguments that start with `-` go to node --test (`--test-name-pattern=...`). An unknown folder is
// one line naming the folders there are, exit 2; otherwise the exit status is node --test's.

import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { constants } from 'node:os';
import { join, relative } from 'node:path';
import { root } from './root.ts';

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

function main(): number {
  const args = process.argv.slice(2);
  const flags = args.filter((arg) => arg.startsWith('-'));
  const named = args.filter((arg) => !arg.startsWith('-'));
  const known = folders();
  const unknown = named.find((name) => !known.has(name));
  if (unknown !== undefined) {
    process.stderr.write(`test:unit: no test folder ${JSON.stringify(unknown)}: the folders are ${[...known.keys()].join(', ')}\n`);
    return 2;
  }
  const files =
    named.length > 0
      ? named.flatMap((name) => testsIn(known.get(name)!))
      : [...testsIn(UNIT), ...[...known].filter(([name]) => name !== ALONE).flatMap(([, dir]) => testsIn(dir))];
  const run = spawnSync(process.execPath, ['--test', ...flags, ...files], { cwd: root, stdio: 'inherit' });
  if (run.error !== undefined) throw run.error;
  return run.status ?? 128 + (run.signal === null ? 0 : constants.signals[run.signal]);
}

process.exitCode = main();
