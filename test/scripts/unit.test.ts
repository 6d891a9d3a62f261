// npm run test:unit: the folders it runs, one folder alone, node --test's flags passed on, a bad folder refused.

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { testFiles } from '../../scripts/unit.ts';
import { NODE, root, start } from '../support/process.ts';

const UNIT = join(root, 'scripts', 'unit.ts');
const REPORTER = join(root, 'scripts', 'test-times-reporter.ts');

/** Every test file under test/unit/ and test/scripts/, relative to the root. */
const everyTest = (): string[] =>
  ['test/unit', 'test/scripts'].flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => join(dir, name)),
  );

describe('the files of npm run test:unit', () => {
  test('every unit test and script test but those of test/unit/launcher/', () => {
    const files = testFiles([]);
    assert.ok(Array.isArray(files));
    const expected = everyTest().filter((file) => !file.startsWith('test/unit/launcher/'));
    assert.deepEqual([...files].sort(), expected.sort());
  });

  test('a folder takes the files of the folders inside it; one inside is named by its path', () => {
    const manifest = everyTest().filter((file) => file.startsWith('test/unit/manifest/'));
    assert.ok(
      manifest.some((file) => file.split('/').length > 4),
      'test/unit/manifest/ has folders with tests',
    );
    assert.deepEqual(testFiles(['manifest']), manifest.sort());
    const inside = manifest.find((file) => file.split('/').length > 4) ?? '';
    const folder = inside.split('/').slice(2, -1).join('/');
    assert.deepEqual(
      testFiles([folder]),
      manifest.filter((file) => file.startsWith(`test/unit/${folder}/`)),
    );
  });

  test('npm run test:launcher: the launcher folder alone', () => {
    const files = testFiles(['launcher']);
    assert.ok(Array.isArray(files) && files.length > 0);
    assert.deepEqual(
      [...files].sort(),
      everyTest()
        .filter((file) => file.startsWith('test/unit/launcher/'))
        .sort(),
    );
  });
});

describe('scripts/unit.ts as a process', () => {
  test('one folder: only its files run, and a flag goes to node --test (a reporter here)', async () => {
    const result = await start(NODE, [UNIT, 'sidecars', `--test-reporter=${REPORTER}`], { timeoutMs: 60_000 }).finished;
    assert.equal(result.code, 0, result.stderr);
    const ran = result.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t'));
    assert.deepEqual(ran.map(([file]) => file).sort(), (testFiles(['sidecars']) as string[]).map((file) => join(root, file)).sort());
    assert.ok(
      ran.every(([, , verdict]) => verdict === 'passed'),
      result.stdout,
    );
  });

  test('an unknown folder: one line naming it and the folders there are, exit 2, nothing run', async () => {
    const result = await start(NODE, [UNIT, 'manifest', 'nope'], { timeoutMs: 15_000 }).finished;
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.match(result.stderr, /^test:unit: no test folder "nope": the folders are .*\bmanifest\b.*\bscripts\b/);
  });
});
