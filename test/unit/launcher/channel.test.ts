// The channel to the wrapper is a socket pair: another process of the same user cannot open it through
// /proc/PID/fd, and no line written to any fd of the wrapper that can be opened ends it.

import assert from 'node:assert/strict';
import { closeSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { test } from 'node:test';
import { CHANNEL_ENV, FROM_WRAPPER } from '../../../src/launcher/protocol.ts';
import { buildLauncher, fakePid, launch } from './support.ts';

const launcher = buildLauncher();

test('the channel cannot be reopened, and a forged exit line through any fd of the wrapper ends nothing', async () => {
  const running = launch(launcher, ['run'], ['/bin/sh', '-c', 'echo ready; read line; exit 3']);
  const pid = await fakePid(running);
  await running.line(/^ready$/, 'stdout');
  const environ = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
  const channel = environ.find((entry) => entry.startsWith(`${CHANNEL_ENV}=`))?.split('=')[1];
  assert.match(channel ?? '', /^\d+$/);
  assert.throws(() => openSync(`/proc/${pid}/fd/${channel}`, 'w'), { code: 'ENXIO' });
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let opened: number | undefined;
    try {
      opened = openSync(`/proc/${pid}/fd/${fd}`, 'w');
      writeSync(opened, `\n${FROM_WRAPPER.exit} 0\n`);
    } catch {
      // Not openable (a socket, an anonymous inode): nothing can be forged through it.
    } finally {
      if (opened !== undefined) closeSync(opened);
    }
  }
  running.process.stdin?.end('\n');
  const result = await running.finished;
  assert.equal(result.code, 3, result.stderr);
});
