// A stderr that cannot be written (full, closed, or a pipe nobody reads) never changes the exit code or stalls
// the launcher: signals still flow, lines are dropped.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { start } from '../../support/process.ts';
import { buildLauncher, launch, WHILE_LAUNCHER_LIVES } from './support.ts';

const launcher = buildLauncher();
const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-launcher-stderr-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

test('stderr on /dev/full: the exit code stays', async () => {
  const full = openSync('/dev/full', 'w');
  try {
    const running = launch(launcher, ['flood', 'run'], ['/bin/sh', '-c', 'exit 9'], { stdio: ['pipe', 'pipe', full] });
    assert.equal((await running.finished).code, 9);
  } finally {
    closeSync(full);
  }
});

test('stderr closed: the exit code stays, and the command gets it closed too', async () => {
  const running = start('/bin/sh', ['-c', 'exec "$@" 2>&-', 'sh', launcher, 'run', '--', '/bin/sh', '-c', 'ls /proc/$$/fd; exit 9']);
  running.process.stdin?.end();
  const result = await running.finished;
  assert.equal(result.code, 9, result.stderr);
  assert.ok(!result.stdout.split('\n').includes('2'), result.stdout);
});

test('stderr a pipe nobody reads, filled by the wrapper: a TERM still reaches the command', async () => {
  const fifo = join(scratch, 'stderr');
  execFileSync('mkfifo', [fifo]);
  const stuck = openSync(fifo, 'r+'); // a reader that never reads: writes fill the pipe, then would block
  try {
    const script = `trap 'exit 8' TERM; echo ready; ${WHILE_LAUNCHER_LIVES}`;
    const running = launch(launcher, ['flood', 'run'], ['/bin/sh', '-c', script], { stdio: ['pipe', 'pipe', stuck] });
    await running.line(/^ready$/, 'stdout');
    process.kill(running.pid, 'SIGTERM');
    assert.equal((await running.finished).code, 8);
  } finally {
    closeSync(stuck);
  }
});
