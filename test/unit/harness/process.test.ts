// The test harness's hard timeout holds even when a process the test started leaves another behind that keeps
// its output open: the test fails with what happened instead of waiting for that process for good.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start } from '../../support/process.ts';

/** Runs `script`, whose first line of output is the pid of a sleeper it left holding its output. */
async function leftBehind(script: string): Promise<string> {
  const running = start('/bin/sh', ['-c', script], { timeoutMs: 300 });
  const sleeper = Number(await running.line(/^\d+$/, 'stdout'));
  try {
    await running.finished;
    return 'finished';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    process.kill(sleeper, 'SIGKILL');
  }
}

test('a process that ended, its output held by one it left behind: fails after the hard timeout', { timeout: 10_000 }, async () => {
  const message = await leftBehind('sleep 30 & echo $!');
  assert.match(message, /ended \(0\), but a process it left behind still held its output after 300ms/);
});

test('a process still running at the hard timeout, its output also held by another: killed, and fails', { timeout: 10_000 }, async () => {
  const message = await leftBehind('sleep 30 & echo $!; exec sleep 30');
  assert.match(message, /still running after 300ms; killed/);
});
