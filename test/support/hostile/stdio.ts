// Hostile stdio: stderr a full pipe nobody reads, stdout a pipe whose reader is gone, and standard
// descriptors closed at exec.

import { WRAPPER } from '../process.ts';
import { acknowledged, CLASSIC, defineCase, describeStatus, pid1Argv, where } from './common.ts';
import { spawnHow } from './tools.ts';

export const stalledStderr = defineCase({
  name: 'stalled stderr',
  about:
    "the wrapper's stderr is a full pipe nobody reads; classic mode, the job writes nothing and exits 6: exit 6 within the bound, " +
    "and the job's stderr is not made non-blocking",
  tries: { short: 2, long: 40 },
  variant: (i) => i % 2 === 1,
  sent: (pid1) => `stderr full and never read, ${where(pid1)}`,
  standIn: {},
  async judge(pid1, { sidecar }) {
    const job = ['/bin/sh', '-c', 'grep "^flags" /proc/self/fdinfo/2; exit 6'];
    const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, ...CLASSIC, '--', ...job]), { stderr: 'stalled-pipe', timeoutMs: 8_000 });
    const status = await spawned.status;
    const flags = status.stdout.match(/^flags:\s*(\d+)/m)?.[1];
    const nonBlocking = flags !== undefined && (parseInt(flags, 8) & 0o4000) !== 0;
    const quits = acknowledged(sidecar);
    return {
      ok: status.code === 6 && flags !== undefined && !nonBlocking,
      got: [
        describeStatus(status),
        flags === undefined ? 'the job never ran' : nonBlocking ? "the job's stderr is O_NONBLOCK" : "the job's stderr blocking",
        `${quits} quit(s) acknowledged`,
      ],
    };
  },
});

export const closedStdout = defineCase({
  name: 'stdout a closed pipe',
  about:
    'stdout is a pipe whose reader is gone: the job that writes to it ends as it does without the wrapper (SIGPIPE, 141); ' +
    '--version exits 0',
  tries: { short: 2, long: 20 },
  variant: (i) => i % 2 === 1,
  sent: (version) => (version ? '--version' : 'a job that writes a line'),
  async judge(version) {
    const args = version ? ['--version'] : ['--sidecar', 'none', '--', '/bin/sh', '-c', 'echo x; exit 0'];
    const expected = version ? 0 : (await spawnHow(['/bin/sh', '-c', 'echo x; exit 0'], { stdout: 'closed-pipe' }).status).code;
    const status = await spawnHow([WRAPPER, ...args], { stdout: 'closed-pipe', timeoutMs: 8_000 }).status;
    return {
      ok: status.killedBy === undefined && status.code === expected,
      got: [`${describeStatus(status)} (without the wrapper: ${expected})`],
    };
  },
});

export const closedStdio = defineCase({
  name: 'stdio closed at start',
  about:
    "the wrapper is exec'd with fds 0 and 2 closed (`<&- 2>&-`) or 1 and 2 (`>&- 2>&-`), classic mode, a job that exits 4: exit 4, " +
    'the quit acknowledged',
  tries: { short: 2, long: 20 },
  variant: (i) => ({ closing: i % 2 === 0 ? '<&- 2>&-' : '>&- 2>&-', pid1: Math.floor(i / 2) % 2 === 1 }),
  sent: ({ closing, pid1 }) => `${closing}, ${where(pid1)}`,
  standIn: {},
  async judge({ closing, pid1 }, { sidecar }) {
    const argv = ['/bin/sh', '-c', `exec "$@" ${closing}`, 'sh', WRAPPER, ...CLASSIC, '--', '/bin/sh', '-c', 'exit 4'];
    const status = await spawnHow(pid1Argv(pid1, argv), { timeoutMs: 8_000 }).status;
    const quits = acknowledged(sidecar);
    return { ok: status.code === 4 && quits === 1, got: [describeStatus(status), `${quits} quit(s) acknowledged`] };
  },
});
