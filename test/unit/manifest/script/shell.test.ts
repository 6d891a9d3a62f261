// The scripts of containers, read by the shell parser: what runs after a failure and what status the shell ends
// with, and hostile scripts (a function that calls itself twice at every level, deep nesting) read in bounded time.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadShellParser, readScript } from '../../../../src/manifest/script/shell.ts';
import { NODE, root, start } from '../../../support/process.ts';

await loadShellParser();

const quits = (script: string, errexit = false) =>
  readScript(script, { errexit }).requests.map(({ path, method, runs }) => ({
    path,
    method,
    onFailure: runs.onFailure,
    onSuccess: runs.onSuccess,
  }));

test('loads that overlap share one: both resolve and the parser reads (in a process where it is not loaded yet)', async () => {
  const shell = join(root, 'src', 'manifest', 'script', 'shell.ts');
  const program = [
    `const { loadShellParser, readScript } = await import(${JSON.stringify(shell)});`,
    'await Promise.all([loadShellParser(), loadShellParser(), loadShellParser()]);',
    "process.stdout.write(String(readScript('migrate && curl -X POST localhost:15020/quitquitquit', {}).requests.length));",
  ].join('\n');
  const result = await start(NODE, ['--input-type=module', '-e', program], { timeoutMs: 30_000 }).finished;
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, '1');
});

describe('where a quit runs', () => {
  const QUIT = 'curl -X POST localhost:15020/quitquitquit';
  for (const [script, errexit, onFailure, onSuccess] of [
    [`./job; ${QUIT}`, false, true, true],
    [`./job && ${QUIT}`, false, false, true],
    [`./job || ${QUIT}`, false, true, false],
    [`./job; ${QUIT}`, true, false, true],
    [`set -e\n./job\n${QUIT}`, false, false, true],
    [`set -e\nset +e\n./job\n${QUIT}`, false, true, true],
    [`if ./job; then echo ok; fi\n${QUIT}`, true, true, true],
    [`trap '${QUIT}' EXIT\n./job`, true, true, true],
    [`trap '${QUIT}' ERR\n./job`, false, true, false],
    [`./job || exit 4\n${QUIT}`, false, false, true],
    [`quit() { ${QUIT}; }\n./job\nquit`, false, true, true],
  ] as const) {
    test(`${JSON.stringify(script)}${errexit ? ' (sh -e)' : ''}: after a failure ${onFailure ? 'yes' : 'no'}, after success ${onSuccess ? 'yes' : 'no'}`, () => {
      assert.deepEqual(quits(script, errexit), [{ path: '/quitquitquit', method: 'POST', onFailure, onSuccess }]);
    });
  }
  test('wget --post-data and busybox wget are POSTs; a bare curl is a GET', () => {
    assert.deepEqual(
      readScript(
        "busybox wget -q -O- --post-data '' http://127.0.0.1:4191/shutdown; wget --post-data=x http://localhost:3500/v1.0/shutdown; curl localhost:15020/quitquitquit",
        {
          errexit: false,
        },
      ).requests.map((request) => `${request.method} ${request.port}${request.path}`),
      ['POST 4191/shutdown', 'POST 3500/v1.0/shutdown', 'GET 15020/quitquitquit'],
    );
  });
});

describe('the status after a failure', () => {
  for (const [script, status] of [
    ['./job\ncurl -XPOST localhost:15020/quitquitquit', 0],
    ['./job\ncurl -XPOST localhost:15020/quitquitquit || true', 0],
    ['./job\nrc=$?\ncurl -XPOST localhost:15020/quitquitquit\nexit $rc', 1],
    ['./job && curl -XPOST localhost:15020/quitquitquit', 1],
    ['q() { curl -XPOST localhost:15020/quitquitquit; exit 0; }\ntrap q EXIT\n./job', 0],
    ['trap "rc=\\$?; curl -XPOST localhost:15020/quitquitquit; exit \\$rc" EXIT\n./job', 1],
  ] as const) {
    test(`${JSON.stringify(script)}: ${status}`, () => {
      assert.deepEqual(
        readScript(script, { errexit: false }).outcome.failure.map((path) => path.status),
        [status],
      );
    });
  }
});

describe('hostile scripts, read in bounded time', () => {
  test('functions that each call the next twice, 20 levels deep (a million calls if followed)', () => {
    const script = `${Array.from({ length: 20 }, (_, i) => `f${i}() { f${i + 1}; f${i + 1}; }`).join('\n')}\nf20() { curl -XPOST localhost:15020/quitquitquit; }\nf0\n`;
    const facts = readScript(script, { errexit: false });
    assert.ok(facts.requests.length > 0 && facts.requests.length <= 20_000);
  });
  test('5,000 nested braces and 3,000 nested command substitutions', () => {
    assert.equal(readScript(`${'{ '.repeat(5000)}echo${'; }'.repeat(5000)}`, { errexit: false }).syntaxError, undefined);
    assert.deepEqual(readScript(`echo ${'$('.repeat(3000)}x${')'.repeat(3000)}`, { errexit: false }).requests, []);
  });
  test('a script the parser rejects is a syntax error, not a crash', () => {
    assert.ok(readScript('if ./job; then echo ok', { errexit: false }).syntaxError !== undefined);
    assert.equal(readScript('./job for x in a ; do\n  echo $x\ndone', { errexit: false }).syntaxError?.near, 'do');
  });
});

describe('pipelines and pipefail', () => {
  const QUIT = 'curl -X POST localhost:15020/quitquitquit';
  test('without pipefail a failed job before | goes on, under set -e too: the quit after it still runs', () => {
    assert.deepEqual(
      quits(`./job | tee log\n${QUIT}`, true).map((quit) => quit.onFailure),
      [true],
    );
  });
  test('with set -o pipefail it ends the script, so the quit after it does not run', () => {
    assert.deepEqual(
      quits(`set -euo pipefail\n./job | tee log\n${QUIT}`).map((quit) => quit.onFailure),
      [false],
    );
    assert.deepEqual(
      readScript(`./job | tee log\n${QUIT}`, { errexit: true, pipefail: true }).requests.map((request) => request.runs.onFailure),
      [false],
    );
  });
});

describe('exec', () => {
  test('exec replaces the shell: a quit after it, or in its EXIT trap, never runs', () => {
    const runs = (script: string) => readScript(script, { errexit: false }).requests.map((r) => [r.runs.onSuccess, r.runs.onFailure]);
    assert.deepEqual(runs("trap 'curl -XPOST localhost:15020/quitquitquit' EXIT\nexec ./job"), []);
    assert.deepEqual(runs('exec ./job\ncurl -XPOST localhost:15020/quitquitquit'), [[false, false]]);
  });
  test('an exec that only runs sometimes leaves the rest as it is', () => {
    const facts = readScript('trap \'curl -XPOST localhost:15020/quitquitquit\' EXIT\nif [ -n "$X" ]; then exec ./other; fi\n./job', {
      errexit: false,
    });
    assert.equal(facts.requests.length, 1);
  });
});
