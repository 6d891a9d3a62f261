// The wrapped command gets the signals the bare one gets. The same senders, against the same counting command
// (test/support/fixtures/counter.c) run alone and behind the built executable, trial by trial in turn: coreutils
// timeout, kill 0 from the job's shell, a kill of the whole process group, one process sending TERM twice at
// several gaps, Ctrl-C twice on a terminal, and a flood of a real-time signal.
//
// Where the bare command's count is fixed, the wrapped one gets exactly that in every trial, with the wrapper's
// Node part frozen too. Where it is the scheduler's (two instances of a standard signal are merged when the second
// comes before the first was taken), both get 1 or 2; the counts are printed side by side.
//
// SIDE_BY_SIDE_TRIALS sets the trials of each sender and way (6).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { FIXTURES, start, WRAPPER, type Running } from '../support/process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-side-by-side-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const COUNTER = join(scratch, 'counter');
execFileSync('gcc', ['-O2', '-Wall', '-Werror', '-o', COUNTER, join(FIXTURES, 'counter.c')], { stdio: ['ignore', 'ignore', 'inherit'] });

const TRIALS = Number(process.env['SIDE_BY_SIDE_TRIALS'] ?? 6);
const FLOOD = 1000;
const BARRIER = 64;

type Way = 'bare' | 'wrapped';
const ARGV: Record<Way, readonly string[]> = { bare: [COUNTER], wrapped: [WRAPPER, '--sidecar', 'none', '--', COUNTER] };

/** One trial: the counter started, sent signals, its deliveries of SIGNO counted up to its barrier. */
interface Trial {
  /** Starts the counter (ARGV[way], maybe under a sender of its own). */
  start(argv: readonly string[]): Running;
  /**
   * Sends the signals; `entry` is what the job was started as (the counter, or the wrapper in front of it), `job`
   * the counter's own pid and how it runs.
   */
  send(entry: number, running: Running, job: { readonly pid: number; readonly way: Way }): Promise<void>;
  /** The signal counted. */
  readonly signo: number;
  /** Whether the trial's own sender sends the barrier and the end (the terminal). */
  readonly endsItself?: boolean;
}

/** The counter's lines, also as the terminal scenario relays them ("tty: ^Cgot 2\r"). */
const lines = (text: string): string[] => text.split('\n').map((line) => line.replace(/^tty: (\^C)*/, '').replace(/\r$/, ''));
const gotLines = (text: string, signo: number): number => lines(text).filter((line) => line === `got ${signo}`).length;

async function runTrial(way: Way, trial: Trial): Promise<number> {
  const running = trial.start(ARGV[way]);
  const ready = await running.line(/^(tty: )?ready \d+ \d+\r?$/, 'stdout');
  const [pid = 0, parent = 0] = ready.replace(/\r$/, '').split(' ').slice(-2).map(Number);
  // The wrapper, in front of the counter, is its parent; a signal meant for the job is sent there.
  const entry = way === 'wrapped' ? parent : pid;
  try {
    await trial.send(entry, running, { pid, way });
    if (!trial.endsItself) {
      process.kill(entry, BARRIER);
      await running.until(() => lines(running.stdout()).includes('barrier'), 'the barrier');
      process.kill(entry, 'SIGUSR2');
    }
    const result = await running.finished;
    const all = lines(result.stdout);
    assert.ok(all.includes('barrier'), `no barrier\n${result.stdout}\n${result.stderr}`);
    return all.slice(0, all.indexOf('barrier')).filter((line) => line === `got ${trial.signo}`).length;
  } catch (error) {
    // The counter too: behind a wrapper killed by the hard timeout, it would be left waiting for good.
    for (const each of [entry, pid]) {
      try {
        process.kill(each, 'SIGKILL');
      } catch {}
    }
    throw new Error(`${way}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** Waits until the job's output shows at least one delivery of SIGNO. */
const firstDelivery = (running: Running, signo: number): Promise<void> =>
  running.until(() => gotLines(running.stdout(), signo) >= 1, `a delivery of signal ${signo}`);

/** `promise`, or a failure naming `what` once `ms` have passed: a bound, never a wait for something to happen. */
async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves once process PID sleeps in sigsuspend: coreutils timeout's wait for its child. Its child can be running
 * (even have said ready) before timeout itself has stored the child's pid on return from fork; an ALRM in that
 * window makes it exit 128+TERM and signal nobody, so its timer is not fired before it waits. Polled (a bound, not
 * a wait for time to pass): /proc/PID/wchan names the kernel function it sleeps in.
 */
async function waitingForChild(pid: number, boundMs = 10_000): Promise<void> {
  const end = Date.now() + boundMs;
  while (!readFileSync(`/proc/${pid}/wchan`, 'utf8').includes('sigsuspend')) {
    if (Date.now() > end) throw new Error(`process ${pid} is not waiting in sigsuspend within ${boundMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Busy for `micros`: a timer would be far coarser than the gaps measured. */
function spin(micros: number): void {
  const end = process.hrtime.bigint() + BigInt(micros) * 1000n;
  while (process.hrtime.bigint() < end);
}

const TERM = 15;
const INT = 2;

const twoTerms = (gapMicros: number): Trial => ({
  start: (argv) => start(argv[0] ?? '', argv.slice(1), { timeoutMs: 15_000 }),
  async send(entry) {
    process.kill(entry, 'SIGTERM');
    if (gapMicros > 0) spin(gapMicros);
    process.kill(entry, 'SIGTERM');
  },
  signo: TERM,
});

/** A freezer for a process: cgroup v1's freezer hierarchy, or a cgroup v2 root; undefined where neither is writable. */
const FREEZER = ((): { readonly root: string; readonly v2: boolean } | undefined => {
  for (const [root, v2] of [
    ['/sys/fs/cgroup/freezer', false],
    ['/sys/fs/cgroup', true],
  ] as const) {
    const probe = join(root, `istio-job-run-test-${process.pid}`);
    try {
      if (v2 && !existsSync(join(root, 'cgroup.controllers'))) continue;
      mkdirSync(probe);
      rmdirSync(probe);
      return { root, v2 };
    } catch {}
  }
  return undefined;
})();

/**
 * Runs `body` with the Node part of the wrapper in front of the job (the launcher's child that is not the counter)
 * frozen: it reads no line and sends none, as a Node half starved of CPU or stuck in a long pause. The command
 * alone has no Node part: `body` just runs.
 */
async function withWrapperFrozen(
  entry: number,
  job: { readonly pid: number; readonly way: Way },
  body: () => Promise<void>,
): Promise<void> {
  if (job.way === 'bare' || FREEZER === undefined) return body();
  const node = readFileSync(`/proc/${entry}/task/${entry}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .find((child) => Number(child) !== job.pid);
  assert.ok(node !== undefined, `no Node part beside the counter under pid ${entry}`);
  const { root, v2 } = FREEZER;
  const cgroup = join(root, `istio-job-run-test-${process.pid}`);
  mkdirSync(cgroup);
  try {
    writeFileSync(join(cgroup, 'cgroup.procs'), node);
    writeFileSync(join(cgroup, v2 ? 'cgroup.freeze' : 'freezer.state'), v2 ? '1' : 'FROZEN');
    const frozen = (): boolean =>
      v2
        ? readFileSync(join(cgroup, 'cgroup.events'), 'utf8').includes('frozen 1')
        : readFileSync(join(cgroup, 'freezer.state'), 'utf8').trim() === 'FROZEN';
    while (!frozen()) await new Promise((resolve) => setImmediate(resolve));
    await body();
  } finally {
    writeFileSync(join(cgroup, v2 ? 'cgroup.freeze' : 'freezer.state'), v2 ? '0' : 'THAWED');
    try {
      writeFileSync(join(root, 'cgroup.procs'), node);
    } catch {} // it has ended
    rmdirSync(cgroup);
  }
}

/** Senders whose every trial gives the bare command the same count: the wrapped one must get it every time. */
const EXACT: Record<string, Trial> = {
  'kill 0 from the job shell': {
    start: (argv) =>
      start('/bin/sh', ['-c', `"$@" & trap '' TERM; read go; kill -TERM 0; wait`, 'sh', ...argv], { detached: true, timeoutMs: 15_000 }),
    async send(_entry, running) {
      running.process.stdin?.write('go\n');
      await firstDelivery(running, TERM);
    },
    signo: TERM,
  },
  'kill -- -PGID': {
    start: (argv) => start(argv[0] ?? '', argv.slice(1), { detached: true, timeoutMs: 15_000 }),
    async send(_entry, running) {
      process.kill(-running.pid, 'SIGTERM');
      await firstDelivery(running, TERM);
    },
    signo: TERM,
  },
  'TERM twice from one process, the second once the first arrived': {
    start: (argv) => start(argv[0] ?? '', argv.slice(1), { timeoutMs: 15_000 }),
    async send(entry, running) {
      process.kill(entry, 'SIGTERM');
      await firstDelivery(running, TERM);
      process.kill(entry, 'SIGTERM');
    },
    signo: TERM,
  },
  // A wrapper whose Node part reads nothing (starved of CPU, or in a long pause) must not hold back what the
  // command gets: TERM, and again once the first arrived. Each wait for an arrival is bounded, so a wrapper that
  // held one fails here instead of hanging.
  ...(FREEZER !== undefined && {
    'TERM twice, the second once the first arrived, the Node part of the wrapper frozen': {
      start: (argv) => start(argv[0] ?? '', argv.slice(1), { timeoutMs: 15_000 }),
      send: (entry, running, job) =>
        withWrapperFrozen(entry, job, async () => {
          process.kill(entry, 'SIGTERM');
          await within(5_000, firstDelivery(running, TERM), 'the first TERM while the Node part is frozen');
          process.kill(entry, 'SIGTERM');
          await within(
            5_000,
            running.until(() => gotLines(running.stdout(), TERM) >= 2, 'the second TERM'),
            'the second TERM while the Node part is frozen',
          );
        }),
      signo: TERM,
    },
  }),
  'Ctrl-C twice on a terminal': {
    start: (argv) => start('python3', [join(FIXTURES, 'pty-shell.py'), 'ctrl-c-twice', ...argv], { timeoutMs: 15_000 }),
    send: async () => undefined,
    signo: INT,
    endsItself: true,
  },
  [`${FLOOD} of real-time signal 40`]: {
    start: (argv) => start(argv[0] ?? '', argv.slice(1), { timeoutMs: 15_000 }),
    async send(entry) {
      for (let i = 0; i < FLOOD; i++) process.kill(entry, 40);
    },
    signo: 40,
  },
};

/**
 * Senders of two instances a fixed time apart: whether the receiver took the first before the second came is the
 * scheduler's, for the bare command as for the wrapped one, so each trial may give 1 or 2.
 */
const TIMED: Record<string, Trial> = {
  // timeout, on its timer (an ALRM here), signals its child and at once its own group, the child in both.
  'coreutils timeout': {
    start: (argv) => start('timeout', ['30', ...argv], { timeoutMs: 15_000 }),
    async send(_entry, running) {
      await waitingForChild(running.pid);
      process.kill(running.pid, 'SIGALRM');
      await firstDelivery(running, TERM);
    },
    signo: TERM,
  },
  'TERM twice, 0 apart': twoTerms(0),
  'TERM twice, 100 us apart': twoTerms(100),
  'TERM twice, 1 ms apart': twoTerms(1000),
  'TERM twice, 10 ms apart': twoTerms(10_000),
};

/** Trials of bare and wrapped in turn, so both meet the same load. */
async function sideBySide(trial: Trial): Promise<Record<Way, number[]>> {
  const counts: Record<Way, number[]> = { bare: [], wrapped: [] };
  for (let i = 0; i < TRIALS; i++) {
    for (const way of ['bare', 'wrapped'] as const) counts[way].push(await runTrial(way, trial));
  }
  return counts;
}

describe('the wrapped command gets the signals the bare one gets', () => {
  for (const [sender, trial] of Object.entries(EXACT)) {
    test(sender, { timeout: 300_000 }, async (t) => {
      const counts = await sideBySide(trial);
      t.diagnostic(`bare ${counts.bare.join(' ')}; wrapped ${counts.wrapped.join(' ')}`);
      const [expected] = counts.bare;
      assert.ok(
        counts.bare.every((count) => count === expected),
        `the bare command's own count varies (${counts.bare.join(' ')}): this sender is not exact`,
      );
      assert.deepEqual(counts.wrapped, counts.bare);
    });
  }

  if (FREEZER === undefined) {
    test('TERM twice, the second once the first arrived, the Node part of the wrapper frozen', {
      skip: 'no writable freezer cgroup (v1 or v2) here',
    });
  }

  test('two instances a fixed time apart: 1 or 2, for the bare command as for the wrapped one', { timeout: 600_000 }, async (t) => {
    for (const [sender, trial] of Object.entries(TIMED)) {
      const counts = await sideBySide(trial);
      t.diagnostic(`${sender}: bare ${counts.bare.join(' ')}; wrapped ${counts.wrapped.join(' ')}`);
      for (const way of ['bare', 'wrapped'] as const) {
        for (const count of counts[way]) assert.ok(count === 1 || count === 2, `${sender}, ${way}: ${count} deliveries`);
      }
    }
  });
});
