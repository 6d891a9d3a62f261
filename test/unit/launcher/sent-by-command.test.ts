// A signal the command sends the launcher (kill 0 to its group, kill -1 to everyone but itself, kill $PPID)
// is not relayed back to it: it has it already, or the kernel did not send it to its sender.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildLauncher, launch, WHILE_LAUNCHER_LIVES } from './support.ts';

const launcher = buildLauncher();

for (const how of ['kill -TERM $PPID', 'kill -TERM 0']) {
  test(`${how}: the command gets the TERM at most as the kernel sent it, never back from the launcher`, async () => {
    // Real-time signal 40 is read after every standard one pending with it: if the TERM were relayed, it would be first.
    const script = `trap 'echo got TERM' TERM; trap 'exit 9' 40; echo ready; ${how}; echo sent; ${WHILE_LAUNCHER_LIVES}`;
    // A process group of its own (as under a container runtime): kill 0 must not reach the test runner.
    const running = launch(launcher, ['run'], ['/bin/sh', '-c', script], { detached: true });
    await running.line(/^sent$/, 'stdout');
    process.kill(running.pid, 40);
    const result = await running.finished;
    assert.equal(result.code, 9, result.stderr);
    const expected = how.endsWith('0') ? 1 : 0; // kill 0 reaches the command itself, once
    assert.equal(result.stdout.split('\n').filter((line) => line === 'got TERM').length, expected, result.stdout);
    assert.doesNotMatch(result.stderr, /fake: (signal|passed) 15\b/);
  });
}
