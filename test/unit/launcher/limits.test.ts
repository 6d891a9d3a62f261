// The wrapper's soft limits are raised to the hard ones where they allow (data and stack too: Node crashes at
// start below them), the command keeps its own; below a floor the hard limit does not lift, one line names it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EXIT_WRAPPER_FAILED } from '../../../src/command/exit-code.ts';
import { start } from '../../support/process.ts';
import { buildLauncher } from './support.ts';

const launcher = buildLauncher();

/** The launcher under `ulimit` settings, its command printing its own soft limits of data and stack. */
async function underLimits(ulimits: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const command = ['/bin/sh', '-c', 'echo "data $(ulimit -d) stack $(ulimit -s)"'];
  const running = start('/bin/sh', ['-c', `${ulimits} && exec "$@"`, 'sh', launcher, 'run', '--', ...command]);
  running.process.stdin?.end();
  return running.finished;
}

test('soft data 400 MiB and stack 64 KiB under higher hard limits: the wrapper starts, the command keeps them', async () => {
  const result = await underLimits('ulimit -S -d 409600 && ulimit -S -s 64');
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, 'data 409600 stack 64\n');
});

for (const [name, ulimit, line] of [
  ['data', 'ulimit -d 409600', /the data limit \(RLIMIT_DATA\) is 400 MiB; the wrapper needs at least 1024 MiB \(ulimit -d\)/],
  ['stack', 'ulimit -s 64', /the stack limit \(RLIMIT_STACK\) is 64 KiB; the wrapper needs at least 1024 KiB \(ulimit -s\)/],
] as const) {
  test(`a hard ${name} limit below the floor: one line naming it, exit 125, the command never runs`, async () => {
    const result = await underLimits(ulimit);
    assert.equal(result.code, EXIT_WRAPPER_FAILED, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, line);
  });
}
