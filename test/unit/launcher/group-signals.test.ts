// The command leads a process group of its own: a signal to the launcher's group reaches it once (relayed, not
// also straight from the kernel), and the command can signal its own group.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { NODE, REPORTER, type Running } from '../../support/process.ts';
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

/** Runs the reporter behind the launcher, sends it what `send` does, and counts the TERMs it got. */
async function termsAfter(send: (launcher: number, running: Running) => Promise<void>): Promise<number> {
  const running = launch(launcher, ['run'], [NODE, REPORTER]);
  await running.line(/^ready /, 'stdout');
  await send(running.pid, running);
  // Behind whatever TERMs were sent: a PWR. Its number is higher than TERM's, so when both are pending at once
  // (in the launcher or in the command) the kernel hands over the TERM first; a USR2 (12) could overtake it.
  process.kill(running.pid, 'SIGPWR');
  await running.line(/^signal SIGPWR$/, 'stdout');
  running.process.stdin?.end('exit 0\n');
  const result = await running.finished;
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.split('\n').filter((line) => line === 'signal SIGTERM').length;
}

test('one process sending TERM again while the first is on its way (coreutils timeout: its child, then its group): once', async () => {
  // The fake holds what it is relayed until a USR2 comes, then passes each on 50 ms apart: were the second TERM
  // relayed too, the command would take both.
  const running = launch(launcher, ['hold', 'run'], [NODE, REPORTER]);
  await running.line(/^ready /, 'stdout');
  process.kill(running.pid, 'SIGTERM');
  await running.line(/^fake: holding 15$/, 'stderr');
  process.kill(running.pid, 'SIGTERM');
  process.kill(running.pid, 'SIGUSR2');
  await running.line(/^fake: released \d+$/, 'stderr');
  process.kill(running.pid, 'SIGUSR1');
  await running.line(/^signal SIGUSR1$/, 'stdout');
  running.process.stdin?.end('exit 0\n');
  const result = await running.finished;
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /^fake: released 1$/m);
  assert.equal(result.stdout.split('\n').filter((line) => line === 'signal SIGTERM').length, 1, result.stdout);
});

test('TERM from two processes, or from one again once the first reached the command: each forwarded', async () => {
  // Each TERM after the command took the one before: the kernel merges none.
  const fromTwo = await termsAfter(async (pid, running) => {
    process.kill(pid, 'SIGTERM');
    await running.line(/^signal SIGTERM$/, 'stdout');
    // Another process: a shell's own kill (no kill(1) in a minimal image).
    execFileSync('/bin/sh', ['-c', 'kill -TERM "$1"', 'sh', String(pid)]);
  });
  assert.equal(fromTwo, 2);
  const apart = await termsAfter(async (pid, running) => {
    process.kill(pid, 'SIGTERM');
    await running.line(/^signal SIGTERM$/, 'stdout');
    process.kill(pid, 'SIGTERM');
  });
  assert.equal(apart, 2);
});
