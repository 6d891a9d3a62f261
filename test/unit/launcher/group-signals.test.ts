// The command leads a process group of its own: a signal to the launcher's group reaches it once (passed on by
// the launcher, not also straight from the kernel), and the command can signal its own group. Signals reach a
// running command from the launcher itself, as they come, whatever the wrapper is doing.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { NODE, REPORTER, type Running } from '../../support/process.ts';
import { buildLauncher, launch, WHILE_LAUNCHER_LIVES } from './support.ts';

const launcher = buildLauncher();
const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-group-signals-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

test("a USR1 to the launcher's process group reaches the command once", async () => {
  // The reporter (Node) prints each delivery; a USR2 sent once the USR1 arrived is the barrier.
  const running = launch(launcher, ['run'], [NODE, REPORTER], { detached: true });
  await running.line(/^ready /, 'stdout');
  process.kill(-running.pid, 'SIGUSR1');
  await running.line(/^signal SIGUSR1$/, 'stdout');
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
  await running.until(() => reports(running.stdout(), 'SIGTERM') >= 2, 'two deliveries of SIGTERM');
  // Behind the TERMs, to show there is no third: a PWR. (Sent while a TERM is still pending in the command, it
  // could overtake it: the reporter is Node, whose threads can each take one.)
  process.kill(running.pid, 'SIGPWR');
  await running.line(/^signal SIGPWR$/, 'stdout');
  running.process.stdin?.end('exit 0\n');
  const result = await running.finished;
  assert.equal(result.code, 0, result.stderr);
  return reports(result.stdout, 'SIGTERM');
}

const reports = (stdout: string, signal: string): number => stdout.split('\n').filter((line) => line === `signal ${signal}`).length;

test('while the command runs, its signals reach it from the launcher even when the wrapper reads no line', async () => {
  // The fake stalls synchronously once the command runs: it neither reads what the launcher tells it nor sends a
  // kill. TERM twice from one process, each once the one before has arrived, and a USR1: all three arrive.
  const stalled = join(scratch, 'go-on');
  const running = launch(launcher, [`stall=${stalled}`, 'run'], [NODE, REPORTER]);
  await running.line(/^fake: stalling$/, 'stderr');
  await running.line(/^ready /, 'stdout');
  for (const [signal, nth] of [
    ['SIGTERM', 1],
    ['SIGTERM', 2],
    ['SIGUSR1', 1],
  ] as const) {
    process.kill(running.pid, signal);
    await running.until(() => reports(running.stdout(), signal) === nth, `delivery ${nth} of ${signal}`);
  }
  writeFileSync(stalled, '');
  running.process.stdin?.end('exit 0\n');
  const result = await running.finished;
  assert.equal(result.code, 0, result.stderr);
  assert.equal(reports(result.stdout, 'SIGTERM'), 2, result.stdout);
  // Told after the fact, each once; none was relayed for it to decide.
  assert.equal(result.stderr.split('\n').filter((line) => line === 'fake: passed 15').length, 2, result.stderr);
  assert.doesNotMatch(result.stderr, /^fake: signal /m);
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
