// The command's exit code, or 128+N for its death by signal N (1-64), is the launcher's; a command that cannot
// start gives the wrapper's code.

import assert from 'node:assert/strict';
import { constants } from 'node:os';
import { describe, test } from 'node:test';
import { buildLauncher, inBatches, launch } from './support.ts';

const launcher = buildLauncher();
/** Signals whose default action is not to end a process: stop, continue or ignore. */
const SURVIVED = new Set(
  ['SIGCHLD', 'SIGCONT', 'SIGSTOP', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU', 'SIGURG', 'SIGWINCH'].map(
    (name) => constants.signals[name as NodeJS.Signals],
  ),
);

describe('exit codes', () => {
  for (const code of [0, 1, 2, 42, 126, 255]) {
    test(`exit ${code}`, async () => {
      const result = await launch(launcher, ['run'], ['/bin/sh', '-c', `exit ${code}`]).finished;
      assert.equal(result.code, code, result.stderr);
      assert.match(result.stderr, new RegExp(`fake: outcome \\{"kind":"exited","code":${code}\\}`));
    });
  }

  test('a death by each signal 1-64 that ends a process gives 128+N, told to the wrapper as that signal', async () => {
    const deadly = Array.from({ length: 64 }, (_, i) => i + 1).filter((signal) => !SURVIVED.has(signal));
    const results = await inBatches(deadly, 4, async (signal) => ({
      signal,
      result: await launch(launcher, ['run'], ['/bin/sh', '-c', `kill -${signal} $$`]).finished,
    }));
    for (const { signal, result } of results) {
      assert.equal(result.code, 128 + signal, `signal ${signal}: ${result.stderr}`);
      assert.match(result.stderr, new RegExp(`fake: outcome \\{"kind":"signaled","signal":${signal}\\}`));
    }
  });

  test('a command that is not there: the launcher says ENOENT, the wrapper gives 127', async () => {
    const result = await launch(launcher, ['run'], ['/nonexistent/command']).finished;
    assert.equal(result.code, 127, result.stderr);
    assert.match(result.stderr, /"errno":"ENOENT"/);
  });

  test('a command found on PATH, its argv byte for byte', async () => {
    const result = await launch(launcher, ['run'], ['sh', '-c', 'printf "%s|" "$@"', 'sh', 'a b', '', 'é\\n']).finished;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'a b||é\\n|');
  });
});
