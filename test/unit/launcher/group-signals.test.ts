// The command leads a process group of its own: a signal to the launcher's group reaches it once (relayed, not
// also straight from the kernel), and the command can signal its own group.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NODE, REPORTER } from '../../support/process.ts';
import { buildLauncher, launch, WHILE_LAUNCHER_LIVES } from './support.ts';

const launcher = buildLauncher();

test("a USR1 to the launcher's process group reaches the command once", async () => {
  // The reporter (Node) prints each delivery; a USR2 relayed behind the USR1 is the barrier.
  const running = launch(launcher, ['run'], [NODE, REPORTER], { detached: true });
  await running.line(/^ready /, 'stdout');
  process.kill(-running.pid, 'SIGUSR1');
  process.kill(running.pid, 'SIGUSR2');
  await running.line(/^signal SIGUSR2$/, 'stdout');
  running.process.stdin?.end('exit 0\n');
  const result = await running.finished;
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout.split('\n').filter((line) => line === 'signal SIGUSR1').length, 1, result.stdout);
});

test('kill -TERM -$$ from the command reaches its own group', async () => {
  const script = `trap 'echo got TERM; exit 7' TERM; kill -TERM -$$; ${WHILE_LAUNCHER_LIVES}`;
  const result = await launch(launcher, ['run'], ['/bin/sh', '-c', script], { detached: true }).finished;
  assert.equal(result.code, 7, result.stderr);
  assert.equal(result.stdout, 'got TERM\n');
});
