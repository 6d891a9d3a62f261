// Every queued instance of a real-time signal reaches the wrapper, even when there are more than the channel
// holds while the wrapper is not yet reading (they wait in the launcher as a count), and reaches a running
// command; standard signals pending at once are merged, as the kernel merges them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildLauncher, fakePid, launch } from './support.ts';

const launcher = buildLauncher();
/** More lines than the socket pair's buffer and the launcher's own hold: the rest waits as a count. */
const INSTANCES = 30_000;

test(`${INSTANCES} instances of signal 40 before the wrapper reads: each one relayed`, async () => {
  const running = launch(launcher, ['hello-on-usr2', `count=${INSTANCES}`, 'run'], ['/bin/sh', '-c', 'read line; exit 0']);
  const pid = await fakePid(running);
  for (let i = 0; i < INSTANCES; i++) process.kill(running.pid, 40);
  process.kill(pid, 'SIGUSR2');
  await running.line(new RegExp(`^fake: counted ${INSTANCES}$`), 'stderr');
  running.process.stdin?.end('\n');
  assert.equal((await running.finished).code, 0);
});

/** The command: counts instances of signal 40 (both it and 41 blocked, taken one by one) until a 41 comes. */
const COUNTER = [
  'import signal, sys',
  'signal.pthread_sigmask(signal.SIG_BLOCK, {40, 41})',
  'print("ready", flush=True)',
  'n = 0',
  'while signal.sigwaitinfo({40, 41}).si_signo == 40: n += 1',
  'print("count", n, flush=True)',
].join('\n');

test(`${INSTANCES} instances of signal 40 forwarded while the command runs: each one reaches it`, async () => {
  // The launcher passes each on as it reads it, and tells the wrapper of each: a flood of those lines must wait
  // for room, never hold back a signal.
  const running = launch(launcher, ['quietly', 'run'], ['python3', '-c', COUNTER]);
  await running.line(/^ready$/);
  for (let i = 0; i < INSTANCES; i++) process.kill(running.pid, 40);
  process.kill(running.pid, 41);
  await running.line(/^count \d+$/);
  assert.match(running.stdout(), new RegExp(`^count ${INSTANCES}$`, 'm'));
  assert.equal((await running.finished).code, 0);
});
