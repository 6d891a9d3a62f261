// Closed fds 0-2 at the start: nothing of the launcher's lands there, and the command gets them closed.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { start } from '../../support/process.ts';
import { buildLauncher } from './support.ts';

const launcher = buildLauncher();
/** Says which of fds 0-2 are open, on fd 3 (the test's stdout). */
const LIST_OPEN = 'for fd in 0 1 2; do if [ -e /proc/$$/fd/$fd ]; then echo $fd >&3; fi; done; exit 4';

for (const closed of [
  [0, 2],
  [1, 2],
  [0, 1, 2],
]) {
  test(`fds ${closed.join(', ')} closed: the command's code is the exit code, and they are closed for it`, async () => {
    const redirect = closed.map((fd) => `${fd}>&-`).join(' ');
    // fd 3 is the test's stdout: the command lists its fds there.
    const running = start('/bin/sh', ['-c', `exec 3>&1; exec "$@" ${redirect}`, 'sh', launcher, 'run', '--', '/bin/sh', '-c', LIST_OPEN]);
    running.process.stdin?.end();
    const result = await running.finished;
    assert.equal(result.code, 4, result.stderr);
    const fds = result.stdout.split('\n');
    for (const fd of closed) assert.ok(!fds.includes(String(fd)), `fd ${fd} closed for the command: ${result.stdout}`);
  });
}
