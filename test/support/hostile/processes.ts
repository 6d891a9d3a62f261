// The processes around the wrapper: grandchildren orphaned under it, a working directory removed before exec,
// a parent that leaves SIGCHLD ignored, and signals sent to the process group the wrapper shares with its command.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WRAPPER } from '../process.ts';
import {
  acknowledged,
  BUSYBOX,
  barrier,
  CATCHER,
  CLASSIC,
  catcherKills,
  defineCase,
  describeStatus,
  EXIT_BOUND_MS,
  pid1Argv,
  reportedCount,
  wait,
  where,
} from './common.ts';
import { childOf, type Spawned, spawnHow } from './tools.ts';

export const orphansReaped = defineCase({
  name: 'orphaned grandchildren',
  about:
    'the command leaves a grandchild behind (its parent exits), which ends 0.2 s later, as PID 1 and not: by 0.8 s it is reaped, ' +
    'no zombie (the command looks it up in /proc), and the exit code is kept',
  tries: { short: 2, long: 10 },
  variant: (i) => i % 2 === 0,
  sent: (pid1) => where(pid1),
  async judge(pid1) {
    const script =
      'p=$( (sleep 0.2 >/dev/null 2>&1 & echo $!) ); sleep 0.8; ' +
      'if [ -e /proc/$p ]; then echo "zombie $p: $(cut -d" " -f3 /proc/$p/stat)"; exit 1; fi; echo reaped; exit 5';
    const status = await spawnHow(pid1Argv(pid1, [WRAPPER, '--sidecar', 'none', '--', BUSYBOX, 'sh', '-c', script]), { timeoutMs: 8_000 })
      .status;
    const said = status.stdout.trim();
    return { ok: status.code === 5 && said === 'reaped', got: [describeStatus(status), said] };
  },
});

export const deletedCwd = defineCase({
  name: 'deleted working directory',
  about: 'started in a directory removed before exec, classic mode: the command runs (exit 9), the quit is acknowledged',
  tries: { short: 2, long: 20 },
  variant: (i) => i % 2 === 1,
  sent: (pid1) => where(pid1),
  standIn: {},
  async judge(pid1, { sidecar }) {
    const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-gone-'));
    const status = await spawnHow(pid1Argv(pid1, [WRAPPER, ...CLASSIC, '--', '/bin/sh', '-c', 'echo ran; exit 9']), {
      deletedCwd: dir,
      timeoutMs: 8_000,
    }).status;
    const ran = status.stdout.includes('ran');
    const quits = acknowledged(sidecar);
    const trace = status.stderr.includes('internal error');
    return {
      ok: status.code === 9 && ran && quits === 1,
      got: [
        describeStatus(status),
        ran ? 'the command ran' : 'the command never ran',
        trace && '"internal error" on stderr',
        `${quits} quit(s) acknowledged`,
      ],
    };
  },
});

const SIGCHLD_IGNORERS: readonly [string, string[]][] = [
  ['perl', ['/usr/bin/perl', '-e', '$SIG{CHLD} = "IGNORE"; exec @ARGV or die']],
  [
    'python3',
    [
      '/usr/bin/python3',
      '-c',
      'import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])',
    ],
  ],
];

export const ignoredSigchld = defineCase({
  name: 'SIGCHLD ignored by the parent',
  about:
    'started by a parent that sets SIGCHLD to SIG_IGN and execs the wrapper (Perl or Python), classic mode, a job that ' +
    `exits 3: exit 3 within ${EXIT_BOUND_MS} ms of the job's end, the quit acknowledged`,
  tries: { short: 2, long: 30 },
  variant: (i) => ({ starter: SIGCHLD_IGNORERS[i % SIGCHLD_IGNORERS.length] ?? SIGCHLD_IGNORERS[0]!, pid1: Math.floor(i / 2) % 2 === 1 }),
  sent: ({ starter: [name], pid1 }) => `${name} ignores SIGCHLD, then execs the wrapper, ${where(pid1)}`,
  standIn: {},
  async judge({ starter: [, starter], pid1 }, { sidecar }) {
    const spawned = spawnHow(pid1Argv(pid1, [...starter, WRAPPER, ...CLASSIC, '--', '/bin/sh', '-c', 'echo done; exit 3']), {
      timeoutMs: 8_000,
    });
    await spawned.line(/^done$/).catch(() => undefined);
    const doneAt = performance.now();
    const status = await spawned.status;
    const quits = acknowledged(sidecar);
    const tookMs = status.endedAt - doneAt;
    return {
      ok: status.code === 3 && quits === 1 && tookMs < EXIT_BOUND_MS,
      got: [describeStatus(status), `${quits} quit(s) acknowledged`, tookMs >= EXIT_BOUND_MS && !status.timedOut && 'late'],
    };
  },
});

// ---------------------------------------------------------------------------------------------------------
// Signals to the command's process group: the wrapper in a session or group of its own

interface GroupSend {
  readonly sent: string;
  /** The argv prefix in front of the wrapper (each starts a session or group of its own: the runner's group is never hit). */
  readonly prefix: string[];
  readonly signal: 'SIGTERM' | 'SIGINT';
  /** What sends the group signal, given the pid the helper started and the running job. */
  send(started: number, spawned: Spawned): Promise<string | undefined>;
  /**
   * How many deliveries the command alone could get, when more than one: coreutils timeout sends twice (its
   * child, then its group), and when it is preempted in between for longer than the first takes to reach the
   * command, the command gets both, with the wrapper as without it.
   */
  readonly upTo?: number;
}

const GROUP_SENDS: readonly GroupSend[] = [
  {
    sent: '`kill 0` (TERM) from the command, under setsid',
    prefix: ['setsid'],
    signal: 'SIGTERM',
    send: (_, spawned) => catcherKills(spawned, 'kill-group', 'SIGTERM'),
  },
  {
    sent: '`kill -TERM -- -$$` from the command, under setsid',
    prefix: ['setsid'],
    signal: 'SIGTERM',
    send: (_, spawned) => catcherKills(spawned, 'kill-own-group', 'SIGTERM'),
  },
  ...(['SIGTERM', 'SIGINT'] as const).map(
    (signal): GroupSend => ({
      sent: `coreutils timeout passing ${signal.slice(3)} on to its child and its group`,
      prefix: ['timeout', '60'],
      signal,
      upTo: 2,
      send: async (started, spawned) => {
        process.kill(started, signal);
        const until = performance.now() + 5_000;
        while (reportedCount(spawned.stdout(), signal) === 0 && performance.now() < until) await wait(5);
        return reportedCount(spawned.stdout(), signal) === 0 ? `no ${signal.slice(3)} reached the command` : undefined;
      },
    }),
  ),
  {
    sent: '`kill 0` (TERM) from the command, under setsid, as PID 1',
    prefix: ['unshare', '--pid', '--fork', '--mount-proc', 'setsid'],
    signal: 'SIGTERM',
    send: (_, spawned) => catcherKills(spawned, 'kill-group', 'SIGTERM'),
  },
];

export const groupSignals = defineCase({
  name: 'group signals reach the command once',
  about:
    'the command (the C helper, taking signals from a signalfd) sends TERM to its own process group (`kill 0`, `kill -TERM -- -$$`), or coreutils timeout passes ' +
    'a TERM or INT on to the wrapper and to its group; a PWR to the wrapper as a barrier: the command gets the signal exactly once ' +
    '(from timeout twice only if it was preempted between its two sends, as the command alone would), ' +
    'its own kill succeeds, and it exits 3 when told',
  tries: { short: GROUP_SENDS.length, long: GROUP_SENDS.length * 10 },
  variant: (i) => GROUP_SENDS[i % GROUP_SENDS.length] ?? GROUP_SENDS[0]!,
  sent: (how) => how.sent,
  async judge(how) {
    const pid1 = how.prefix[0] === 'unshare';
    const spawned = spawnHow([...how.prefix, WRAPPER, '--sidecar', 'none', '--', ...CATCHER()], { timeoutMs: 10_000 });
    const problems: string[] = [];
    try {
      const started = await spawned.pid;
      await spawned.line(/^ready \d+$/);
      const launcher = pid1 || how.prefix[0] === 'timeout' ? await childOf(started) : started;
      const said = await how.send(started, spawned);
      if (said !== undefined) problems.push(said);
      if (!(await barrier(spawned, launcher))) problems.push('a PWR sent to the wrapper never reached the command');
    } catch (error) {
      problems.push((error as Error).message);
    }
    const count = reportedCount(spawned.stdout(), how.signal);
    spawned.helperProcess.stdin?.end('exit 3\n');
    const status = await spawned.status;
    const preempted = count > 1 && count <= (how.upTo ?? 1) ? ' (timeout preempted between its sends)' : '';
    return {
      ok: problems.length === 0 && count >= 1 && count <= (how.upTo ?? 1) && status.code === 3,
      got: [describeStatus(status), ...problems, `the command got ${how.signal.slice(3)} ${count} time(s)${preempted}`],
    };
  },
});
