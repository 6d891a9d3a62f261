// Signals through the built executable: each forwarded signal reaches the command once, in order; the
// command's death by a signal becomes 128+N; the wrapper never kills the command by itself.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NODE, REPORTER, wrapper, type Running } from '../support/process.ts';

const FORWARDED = ['SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGTERM', 'SIGUSR1', 'SIGUSR2', 'SIGWINCH', 'SIGALRM', 'SIGPWR'] as const;

async function startReporter(): Promise<Running> {
  const running = wrapper(['--sidecar', 'none', '--', NODE, REPORTER]);
  await running.line(/^ready \d+ \d+$/);
  return running;
}

const reported = (running: Running, signal: string): number =>
  running
    .stdout()
    .split('\n')
    .filter((line) => line === `signal ${signal}`).length;

/** Sends a signal to the wrapper and waits until the command has reported its nth delivery. */
async function deliver(running: Running, signal: NodeJS.Signals, nth: number): Promise<void> {
  running.process.kill(signal);
  await running.until(() => reported(running, signal) >= nth, `delivery ${nth} of ${signal}`);
}

describe('forwarding', () => {
  test('every forwarded signal reaches the command exactly once, in the order sent', async () => {
    const running = await startReporter();
    const sequence: NodeJS.Signals[] = [...FORWARDED, 'SIGUSR1', 'SIGTERM', 'SIGUSR1'];
    const counts = new Map<string, number>();
    for (const signal of sequence) {
      counts.set(signal, (counts.get(signal) ?? 0) + 1);
      await deliver(running, signal, counts.get(signal) ?? 1);
    }
    running.process.stdin?.end('exit 0\n');
    const result = await running.finished;
    assert.equal(result.code, 0);
    const received = result.stdout
      .split('\n')
      .filter((line) => line.startsWith('signal '))
      .map((line) => line.slice(7));
    assert.deepEqual(received, sequence);
  });

  test('a forwarded TERM that kills the command gives 143; the wrapper adds no KILL of its own', async () => {
    const running = wrapper(['--sidecar', 'none', '--', 'sh', '-c', 'echo ready; exec sleep 30']);
    await running.line(/^ready$/);
    running.process.kill('SIGTERM');
    const result = await running.finished;
    assert.equal(result.code, 143);
  });

  test('a command that handles TERM keeps running, and the wrapper keeps waiting for it', async () => {
    const running = await startReporter();
    await deliver(running, 'SIGTERM', 1);
    await deliver(running, 'SIGTERM', 2);
    running.process.stdin?.end('exit 4\n');
    const result = await running.finished;
    assert.equal(result.code, 4);
  });

  test('SIGCHLD and SIGURG are not forwarded', async () => {
    const running = await startReporter();
    running.process.kill('SIGCHLD');
    running.process.kill('SIGURG');
    // A forwarded signal after them arrives alone: had either been forwarded, the reporter would show it
    // (it reports every signal it handles, and the default action of both is to ignore).
    await deliver(running, 'SIGUSR2', 1);
    running.process.stdin?.end('exit 0\n');
    const result = await running.finished;
    const received = result.stdout.split('\n').filter((line) => line.startsWith('signal '));
    assert.deepEqual(received, ['signal SIGUSR2']);
  });

  const deaths: [NodeJS.Signals, number][] = [
    ['SIGKILL', 137],
    ['SIGTERM', 143],
    ['SIGSEGV', 139],
    ['SIGINT', 130],
    ['SIGQUIT', 131],
    ['SIGUSR1', 138],
    ['SIGHUP', 129],
  ];
  for (const [signal, code] of deaths) {
    test(`the command dying of ${signal} -> ${code}`, async () => {
      const running = await startReporter();
      running.process.stdin?.write(`die ${signal}\n`);
      const result = await running.finished;
      assert.equal(result.code, code);
    });
  }
});
