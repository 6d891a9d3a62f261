// The launcher as the last line: the Node half of the wrapper stopped, killed (from outside, by a job's
// `kill -1`, by the out-of-memory killer, during the quit) or lied to through its channel; the launcher still
// waits for the job, tells the sidecar to quit, exits with the job's code, and says what happened.

import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { WRAPPER } from '../process.ts';
import {
  acknowledged,
  barrier,
  CATCHER,
  CLASSIC,
  catcherKills,
  defineCase,
  describeStatus,
  pid1Argv,
  reportedCount,
  target,
  type Verdict,
  wait,
  where,
} from './common.ts';
import { cgroup, helper, type Status, spawnHow, tree } from './tools.ts';

/** The Node half of the wrapper under `launcher`: the process whose executable is in the bundle's library folder. */
function nodeHalf(launcher: number): number | undefined {
  return tree(launcher).find((pid) => {
    try {
      return pid !== launcher && readlinkSync(`/proc/${pid}/exe`).includes('istio-job-run.lib/');
    } catch {
      return false;
    }
  });
}

/** The kernel's count of out-of-memory kills on this machine (/proc/vmstat oom_kill). */
const oomKills = (): number => Number(readFileSync('/proc/vmstat', 'utf8').match(/^oom_kill (\d+)$/m)?.[1] ?? 0);

/** Lines that blame the out-of-memory killer. */
const blamesOom = (stderr: string): string[] => stderr.split('\n').filter((line) => /out-of-memory|out of memory|\bOOM\b/i.test(line));

/** Judges a run the launcher must see through: the job's code, a quit acknowledged, and no false blame on the OOM killer. */
function judgeOutcome(
  status: Status,
  expected: number,
  quits: number,
  oomBefore: number,
  problems: readonly (string | false | undefined)[],
): Verdict {
  const blamed = oomKills() === oomBefore ? blamesOom(status.stderr) : [];
  const named = problems.filter((problem): problem is string => typeof problem === 'string' && problem !== '');
  return {
    ok: named.length === 0 && status.code === expected && quits >= 1 && blamed.length === 0,
    got: [
      describeStatus(status),
      ...named,
      `${quits} quit(s) acknowledged`,
      blamed.length > 0 && `blames the OOM killer: ${JSON.stringify(blamed[0]?.slice(0, 90))}`,
    ],
  };
}

/** A job that says "ready PID" and exits 3 once a line arrives on stdin. */
const WAITING_JOB = ['/bin/sh', '-c', 'echo "ready $$"; read line; exit 3'];

export const broadcastAsPid1 = defineCase({
  name: 'kill -1 from a job alone in its PID namespace',
  about:
    'the wrapper as PID 1, classic mode; the command (the C helper) sends STOP, KILL or TERM to -1 (every process but itself and ' +
    'PID 1: the Node half), then exits 3 when told: exit 3, the quit acknowledged, no TERM sent back to the command (a PWR to PID 1 ' +
    'after it reaches the command first), no line ' +
    'blaming the out-of-memory killer',
  tries: { short: 3, long: 30 },
  variant: (i) => (['SIGSTOP', 'SIGKILL', 'SIGTERM'] as const)[i % 3] ?? 'SIGSTOP',
  sent: (signal) => `kill -${signal.slice(3)} -1 from the command, as PID 1`,
  standIn: {},
  async judge(signal, { sidecar }) {
    const oomBefore = oomKills();
    const spawned = spawnHow(pid1Argv(true, [WRAPPER, ...CLASSIC, '--', ...CATCHER()]), { timeoutMs: 10_000 });
    const pid = await target(spawned, true);
    const problems: string[] = [];
    try {
      await spawned.line(/^ready \d+$/);
      const said = await catcherKills(spawned, 'kill-all', signal);
      if (said !== undefined) problems.push(said);
      // Any TERM passed back to the command is relayed before a PWR sent after it.
      if (signal === 'SIGTERM' && !(await barrier(spawned, pid))) problems.push('a PWR sent to PID 1 never reached the command');
    } catch (error) {
      problems.push((error as Error).message);
    }
    const terms = reportedCount(spawned.stdout(), 'SIGTERM');
    spawned.helperProcess.stdin?.end('exit 3\n');
    const status = await spawned.status;
    return judgeOutcome(status, 3, acknowledged(sidecar), oomBefore, [
      ...problems,
      terms > 0 && `the command got TERM back ${terms} time(s)`,
    ]);
  },
});

export const nodeKilledWhileRunning = defineCase({
  name: 'the Node half killed while the command runs',
  about:
    'classic mode; while the command runs, the Node half is sent KILL (as the out-of-memory killer would, but not by it) or STOP ' +
    'from outside; then the command exits 3: exit 3, the quit acknowledged, no line blaming the out-of-memory killer',
  tries: { short: 2, long: 40 },
  variant: (i) => ({ signal: i % 2 === 0 ? 'SIGKILL' : 'SIGSTOP', pid1: Math.floor(i / 2) % 2 === 1 }),
  sent: ({ signal, pid1 }) => `${signal.slice(3)} to the Node half, ${where(pid1)}`,
  standIn: {},
  async judge({ signal, pid1 }, { sidecar }) {
    const oomBefore = oomKills();
    const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, ...CLASSIC, '--', ...WAITING_JOB]), { timeoutMs: 10_000 });
    const pid = await target(spawned, pid1);
    let problem: string | undefined;
    try {
      await spawned.line(/^ready \d+$/);
      const node = nodeHalf(pid);
      if (node === undefined) problem = 'no Node half found';
      else process.kill(node, signal);
    } catch (error) {
      problem = (error as Error).message;
    }
    spawned.helperProcess.stdin?.end('go\n');
    const status = await spawned.status;
    return judgeOutcome(status, 3, acknowledged(sidecar), oomBefore, [problem]);
  },
});

/** A pool of workers, each smaller than the Node half (about 50 MB resident, most of it its executable's pages). */
const WORKERS = 3;
const WORKER_MIB = 30;
/** Room for the workers, the launcher and the shell (about 91 MiB), but not for the Node half's own 10 MiB too. */
const POOL_LIMIT_MIB = 97;

export const oomTakesNode = defineCase({
  name: 'the out-of-memory killer takes the Node half',
  about:
    `classic mode in a memory cgroup (v1) of ${POOL_LIMIT_MIB} MiB, no swap; the job is ${WORKERS} workers of ${WORKER_MIB} MiB, ` +
    "each smaller than the Node half, so the cgroup's out-of-memory killer takes the Node half; then the job exits 3: " +
    "exit 3, the quit acknowledged (the launcher's own), and one line names the out-of-memory killer",
  tries: { short: 2, long: 10 },
  variant: (i) => i % 2 === 1,
  sent: (pid1) => `${WORKERS} workers of ${WORKER_MIB} MiB in ${POOL_LIMIT_MIB} MiB, ${where(pid1)}`,
  scratch: true,
  standIn: {},
  async judge(pid1, { scratch, sidecar }) {
    const group = cgroup('memory', { 'memory.limit_in_bytes': String(POOL_LIMIT_MIB * 2 ** 20) });
    if (group === undefined) return { ok: false, got: ['no memory cgroup (v1) could be made here'] };
    try {
      const go = join(scratch, 'go');
      const job = `echo ready; for i in ${'x '.repeat(WORKERS)}; do "$0" hold ${WORKER_MIB} "$1" & done; wait; exit 3`;
      const oomBefore = oomKills();
      const spawned = spawnHow([...group.prefix, ...pid1Argv(pid1, [WRAPPER, ...CLASSIC, '--', '/bin/sh', '-c', job, helper(), go])], {
        timeoutMs: 20_000,
      });
      const launcher = await target(spawned, pid1);
      const problems: string[] = [];
      await spawned.line(/^ready$/);
      const until = performance.now() + 10_000;
      while (nodeHalf(launcher) !== undefined && performance.now() < until && spawned.helperProcess.exitCode === null) await wait(10);
      if (nodeHalf(launcher) !== undefined) problems.push('the Node half still runs');
      writeFileSync(go, '');
      const status = await spawned.status;
      // Not judged: the kernel may take a worker too, before the Node half's memory is back (the job's
      // code is then still its own: this one's `wait` ignores how its workers ended).
      const released = status.stdout.split('\n').filter((line) => line === 'released').length;
      const kills = oomKills() - oomBefore;
      const blamed = blamesOom(status.stderr);
      return {
        ok: problems.length === 0 && status.code === 3 && acknowledged(sidecar) >= 1 && kills >= 1 && blamed.length === 1,
        got: [
          describeStatus(status),
          ...problems,
          `${released} of ${WORKERS} workers finished`,
          `${acknowledged(sidecar)} quit(s) acknowledged`,
          `${kills} out-of-memory kill(s)`,
          blamed.length === 1 ? 'the line names the out-of-memory killer' : `${blamed.length} line(s) name the out-of-memory killer`,
        ],
      };
    } finally {
      group.remove();
    }
  },
});

export const nodeKilledDuringQuit = defineCase({
  name: 'the Node half killed during the quit',
  about:
    'classic mode, the job exits 0; the first quit hangs, and meanwhile the Node half is sent KILL: exit 0 (the job succeeded), ' +
    'and a quit is acknowledged all the same',
  tries: { short: 2, long: 20 },
  variant: (i) => i % 2 === 1,
  sent: (pid1) => `KILL to the Node half during a hanging quit, ${where(pid1)}`,
  standIn: { quitScript: ['hang'] },
  async judge(pid1, { sidecar }) {
    const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, ...CLASSIC, '--request-timeout', '1500ms', '--', '/bin/sh', '-c', 'exit 0']), {
      timeoutMs: 10_000,
    });
    const pid = await target(spawned, pid1);
    await sidecar.waitFor(() => sidecar.quitRequests.length >= 1);
    const node = nodeHalf(pid);
    if (node !== undefined) process.kill(node, 'SIGKILL');
    const status = await spawned.status;
    const quits = acknowledged(sidecar);
    return {
      ok: node !== undefined && status.code === 0 && quits >= 1,
      got: [describeStatus(status), node === undefined && 'no Node half found', `${quits} quit(s) acknowledged`],
    };
  },
});

/**
 * A job (sh) that writes `exit 0` into every pipe or socket its parent (the launcher) shares with another of its
 * children (the Node half), at the Node half's fds 3 and up, reopened through /proc/PID/fd/N; says "forged N" (how
 * many it could open), then exits 3 once a line arrives on stdin.
 */
const FORGER = [
  'me=$$; n=0; parent=$PPID',
  'shared=$(for f in /proc/$parent/fd/*; do readlink "$f"; done 2>/dev/null)',
  'for p in $(cat /proc/$parent/task/*/children); do [ "$p" = "$me" ] && continue; for f in /proc/$p/fd/*; do',
  '  case $(basename "$f") in 0|1|2) continue;; esac',
  '  t=$(readlink "$f" 2>/dev/null) || continue',
  '  case "$t" in pipe:*|socket:*) ;; *) continue;; esac',
  '  case "$shared" in *"$t"*) { printf "exit 0\\n" >"$f"; } 2>/dev/null && n=$((n+1));; esac',
  'done; done',
  'echo "forged $n"; read line; exit 3',
].join('\n');

/**
 * The bundle where UID 65534 can reach it: a checkout under a private home (/root) is not, so a copy (hard links) in
 * a temporary folder of mode 0755, made once and removed when the process exits.
 */
let sharedBundle: string | undefined;
function bundleForAnyone(): string {
  if (sharedBundle !== undefined) return sharedBundle;
  const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-anyone-'));
  chmodSync(dir, 0o755);
  const from = join(dirname(WRAPPER), 'bundle');
  try {
    execFileSync('cp', ['-rl', from, join(dir, 'bundle')], { stdio: 'ignore' });
  } catch {
    // Another file system: a plain copy.
    rmSync(join(dir, 'bundle'), { recursive: true, force: true });
    execFileSync('cp', ['-r', from, join(dir, 'bundle')]);
  }
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  sharedBundle = join(dir, 'bundle', 'istio-job-run');
  return sharedBundle;
}

export const forgedExit = defineCase({
  name: "a forged line in the wrapper's channel",
  about:
    'wrapper and job run as UID 65534; the job opens every pipe of the Node half that leads to the launcher through /proc/PID/fd/N ' +
    'and writes `exit 0`, then ' +
    'exits 3 when told: the wrapper waits for it and exits 3, the quit acknowledged',
  tries: { short: 2, long: 20 },
  variant: (i) => i % 2 === 1,
  sent: (pid1) => `as UID 65534, ${where(pid1)}`,
  standIn: {},
  async judge(pid1, { sidecar }) {
    const user = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'];
    const spawned = spawnHow(pid1Argv(pid1, [...user, bundleForAnyone(), ...CLASSIC, '--', '/bin/sh', '-c', FORGER]), {
      timeoutMs: 10_000,
    });
    const forged = await spawned.line(/^forged \d+$/).catch(() => undefined);
    spawned.helperProcess.stdin?.end('go\n');
    const status = await spawned.status;
    const quits = acknowledged(sidecar);
    return {
      ok: forged !== undefined && status.code === 3 && quits === 1,
      got: [
        describeStatus(status),
        forged === undefined ? 'no "forged" line: the job ended first' : `the job opened ${forged.split(' ')[1]} pipe(s)`,
        `${quits} quit(s) acknowledged`,
      ],
    };
  },
});

export const launcherJson = defineCase({
  name: "the launcher's own lines as JSON",
  about:
    'with --log-format json (or ISTIO_JOB_RUN_LOG_FORMAT=json): the Node half killed from outside while the command runs (classic ' +
    'mode, the job exits 3), or an open files limit of 16 (the launcher refuses, 125): every stderr line is a JSON object, and ' +
    'none blames the out-of-memory killer',
  tries: { short: 2, long: 20 },
  variant: (i) => i % 2 === 1,
  sent: (refused) => (refused ? 'ISTIO_JOB_RUN_LOG_FORMAT=json, nofile 16' : '--log-format json, KILL to the Node half'),
  standIn: {},
  async judge(refused, { sidecar }) {
    const oomBefore = oomKills();
    let status: Status;
    let problem: string | undefined;
    if (refused) {
      status = await spawnHow(['prlimit', '--nofile=16', '--', WRAPPER, ...CLASSIC, '--', '/bin/sh', '-c', 'exit 3'], {
        env: { ISTIO_JOB_RUN_LOG_FORMAT: 'json' },
        timeoutMs: 8_000,
      }).status;
    } else {
      const spawned = spawnHow([WRAPPER, '--log-format', 'json', ...CLASSIC, '--', ...WAITING_JOB], { timeoutMs: 10_000 });
      try {
        const pid = await spawned.pid;
        await spawned.line(/^ready \d+$/);
        const node = nodeHalf(pid);
        if (node === undefined) problem = 'no Node half found';
        else process.kill(node, 'SIGKILL');
      } catch (error) {
        problem = (error as Error).message;
      }
      spawned.helperProcess.stdin?.end('go\n');
      status = await spawned.status;
    }
    const lines = status.stderr.split('\n').filter((line) => line !== '');
    const notJson = lines.filter((line) => {
      try {
        return typeof JSON.parse(line) !== 'object';
      } catch {
        return true;
      }
    });
    const blamed = oomKills() === oomBefore ? blamesOom(status.stderr) : [];
    const expected = refused ? 125 : 3;
    const quits = acknowledged(sidecar);
    return {
      ok: problem === undefined && status.code === expected && lines.length >= 1 && notJson.length === 0 && blamed.length === 0,
      got: [
        describeStatus(status),
        problem,
        lines.length === 0
          ? 'nothing on stderr'
          : notJson.length === 0
            ? 'every line JSON'
            : `not JSON: ${JSON.stringify(notJson[0]?.slice(0, 90))}`,
        blamed.length > 0 && 'blames the OOM killer',
        !refused && `${quits} quit(s) acknowledged`,
      ],
    };
  },
});
