// The signals the wrapper has no use for (those of src/command/signals.ts whose default action ends a process and
// that it neither forwards nor acts on, and every real-time one) sent to the launcher's process group: one the
// Node part shares when the wrapper is not PID 1 and has a terminal (a shell's), its own as PID 1 or without a
// terminal. At start-up (in the moment
// the Node part cannot hold them yet), during the wait, while the command runs, during the quit, and to a manifest
// tool: the job runs, the command gets each as decide() says, and the code and the quit are as without them.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { decide, FORWARDED, REALTIME_FIRST, signalNumber, unusedSignalNumbers } from '../../src/command/signals.ts';
import { ENDS_TOOL } from '../../src/manifest/cli/select.ts';
import { FIXTURES, onATerminal, pidOne, start, WRAPPER, type Running } from '../support/process.ts';
import { type Sidecar, withSidecar } from '../support/sidecar.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-unused-signals-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const COUNTER = join(scratch, 'counter');
execFileSync('gcc', ['-O2', '-Wall', '-Werror', '-o', COUNTER, join(FIXTURES, 'counter.c')], { stdio: ['ignore', 'ignore', 'inherit'] });

/** What the wrapper has no use for, in ascending order: the last, 64, is also the counter's barrier. */
const UNUSED = unusedSignalNumbers(FORWARDED);
const LAST = UNUSED.at(-1) ?? 64;
/** What the counter counts: all of them but its barrier and the two real-time signals the C library keeps. */
const COUNTED = UNUSED.filter((signo) => signo !== LAST && (signo < 32 || signo >= REALTIME_FIRST));
/** What a manifest tool has no use for: it acts only on those that end it. */
const TOOL_UNUSED = unusedSignalNumbers(ENDS_TOOL);

const JOB = ['sh', '-c', 'echo RAN; exit 3'];
const MANIFEST = [
  'apiVersion: batch/v1',
  'kind: Job',
  'metadata: {name: report}',
  'spec:',
  '  template:',
  '    metadata: {annotations: {proxy.istio.io/config: "{ holdApplicationUntilProxyStarts: true }"}}',
  '    spec:',
  '      restartPolicy: Never',
  '      containers:',
  '        - {name: job, image: example/job, command: [istio-job-run, --, ./report]}',
  '',
].join('\n');
const TIMEOUT_MS = 20_000;

/** Where the launcher runs: as PID 1 or not, its stdin a terminal or not. */
interface How {
  readonly pid1: boolean;
  readonly tty: boolean;
}

/**
 * The wrapper, leading a process group of its own: started as a session's leader, or as PID 1 (which calls setsid).
 * Its stdin a terminal: the Node part shares the launcher's group; without one it leads its own.
 */
function startWrapper(how: How, args: readonly string[]): Running {
  if (how.pid1) {
    return start('unshare', ['--pid', '--fork', '--mount-proc', 'setsid', WRAPPER, ...args], { detached: true, timeoutMs: TIMEOUT_MS });
  }
  if (how.tty) return start(...onATerminal([WRAPPER, ...args]), { detached: true, timeoutMs: TIMEOUT_MS });
  return start(WRAPPER, args, { detached: true, timeoutMs: TIMEOUT_MS });
}

/** The launcher's host pid, which is also its process group's id. */
const launcherOf = (running: Running, how: How): number => (how.pid1 ? pidOne(running.pid) : running.pid);

function sendAll(group: number, signals: readonly number[]): void {
  for (const signo of signals) process.kill(-group, signo);
}

const acknowledged = (sidecar: Sidecar): number =>
  sidecar.requests.filter((request) => request.path.startsWith('/quitquitquit') && request.status === 200).length;

const WRAPPER_DIED = /the wrapper ended|the wrapper died|did not finish/;

/** The job ended as without the signals: "RAN", exit 3, one quit acknowledged, and the wrapper lived to the end. */
async function ranAndQuit(running: Running, sidecar: Sidecar): Promise<void> {
  const result = await running.finished;
  assert.equal(result.code, 3, `${result.signal} ${result.stderr}`);
  assert.equal(result.stdout, 'RAN\n');
  assert.equal(acknowledged(sidecar), 1, result.stderr);
  assert.doesNotMatch(result.stderr, WRAPPER_DIED);
}

/** Whether signal `signo` is in a set of process `pid` (SigIgn, SigBlk or SigCgt of /proc/PID/status). */
function inSet(pid: number, set: 'SigIgn' | 'SigBlk' | 'SigCgt', signo: number): boolean {
  const hex = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${set}:\\s*([0-9a-f]+)$`, 'm'))?.[1] ?? '0';
  return ((BigInt(`0x${hex}`) >> BigInt(signo - 1)) & 1n) === 1n;
}

/**
 * One start-up: once the Node part's own start-up has taken the standard signals back to their default action and
 * before its handlers exist (STKFLT neither ignored, blocked nor caught), all of them to the group. Returns whether
 * that moment was caught: a start-up this process was not scheduled in time for is past it (STKFLT caught).
 */
async function startUp(how: How): Promise<boolean> {
  const stkflt = signalNumber('SIGSTKFLT');
  let caught = false;
  await withSidecar({}, async (sidecar) => {
    const running = startWrapper(how, sidecar.classicArgs('--', ...JOB));
    const launcher = await until(() => launcherOf(running, how));
    const node = await until(() => Number(readFileSync(`/proc/${launcher}/task/${launcher}/children`, 'utf8').trim() || Number.NaN));
    caught = await until(() => {
      if (inSet(node, 'SigCgt', stkflt)) return false;
      return inSet(node, 'SigIgn', stkflt) || inSet(node, 'SigBlk', stkflt) ? undefined : true;
    });
    sendAll(launcher, UNUSED);
    await ranAndQuit(running, sidecar);
  });
  return caught;
}

const HOWS: readonly [string, How][] = [
  ['not PID 1, without a terminal: the Node part in a group of its own', { pid1: false, tty: false }],
  ['not PID 1, on a terminal: the Node part in the launcher’s group', { pid1: false, tty: true }],
  ['as PID 1', { pid1: true, tty: false }],
];

for (const [where, how] of HOWS) {
  describe(where, () => {
    test(`${UNUSED.length} signals at start-up, before the Node part's handlers exist: the job runs, exit 3, one quit`, async () => {
      // Up to 5 start-ups, until one was caught in that moment.
      let caught = false;
      for (let i = 0; i < 5 && !caught; i++) caught = await startUp(how);
      assert.ok(caught, 'no start-up was caught between Node taking the signals back and its handlers');
    });

    test(`${UNUSED.length} signals during the wait: the job runs, exit 3, one quit`, async () => {
      await withSidecar({ readyAfter: Number.POSITIVE_INFINITY }, async (sidecar) => {
        const running = startWrapper(how, sidecar.classicArgs('--log-level', 'debug', '--', ...JOB));
        await sidecar.waitFor(() => sidecar.readyRequests.length >= 1);
        sendAll(launcherOf(running, how), UNUSED);
        await running.line(new RegExp(`ignored signal ${LAST} \\(the command has not started\\)`), 'stderr');
        sidecar.setReady();
        await ranAndQuit(running, sidecar);
      });
    });

    test(`${UNUSED.length} signals while the command runs: it gets each as decide() says, exit 0, one quit`, async () => {
      await withSidecar({}, async (sidecar) => {
        const running = startWrapper(how, sidecar.classicArgs('--log-level', 'debug', '--', COUNTER, ...COUNTED.map(String)));
        await running.line(/^ready \d+ \d+$/, 'stdout');
        const launcher = launcherOf(running, how);
        sendAll(launcher, UNUSED);
        // The barrier, the last signal sent, comes after every lower one the command was passed.
        await running.line(/^barrier$/, 'stdout');
        await running.line(new RegExp(`forwarded signal ${LAST}$`, 'm'), 'stderr');
        process.kill(launcher, 'SIGUSR2');
        const result = await running.finished;
        assert.equal(result.code, 0, result.stderr);
        const got = (signo: number): number => result.stdout.split('\n').filter((line) => line === `got ${signo}`).length;
        assert.deepEqual(
          COUNTED.map((signo) => [signo, got(signo)]),
          COUNTED.map((signo) => [signo, decide(signo, 'running', false) === 'forward' ? 1 : 0]),
        );
        assert.equal(acknowledged(sidecar), 1, result.stderr);
        assert.doesNotMatch(result.stderr, WRAPPER_DIED);
      });
    });

    test(`${UNUSED.length} signals during the quit: exit 3, the quit acknowledged`, async () => {
      await withSidecar({ quitScript: ['held'] }, async (sidecar) => {
        const running = startWrapper(how, sidecar.classicArgs('--log-level', 'debug', '--request-timeout', '15s', '--', ...JOB));
        await sidecar.waitFor(() => sidecar.requests.some((request) => request.path.startsWith('/quitquitquit')));
        sendAll(launcherOf(running, how), UNUSED);
        await running.line(new RegExp(`ignored signal ${LAST} \\(the command has ended\\)`), 'stderr');
        sidecar.releaseQuit();
        await ranAndQuit(running, sidecar);
      });
    });

    // A manifest tool reads the manifest from its stdin, which a terminal would be.
    test(`${TOOL_UNUSED.length} signals to a manifest tool reading stdin: its code and output as without them`, {
      skip: how.tty,
    }, async () => {
      const alone = start(WRAPPER, ['--check', '-'], { timeoutMs: TIMEOUT_MS });
      alone.process.stdin?.end(MANIFEST);
      const expected = await alone.finished;

      const running = startWrapper(how, ['--check', '-']);
      const launcher = await until(() => launcherOf(running, how));
      const node = await until(() => Number(readFileSync(`/proc/${launcher}/task/${launcher}/children`, 'utf8').trim() || Number.NaN));
      // Once it waits in read(2) on its stdin, its start-up is over.
      await until(() => (readFileSync(`/proc/${node}/syscall`, 'utf8').startsWith(READS_STDIN) ? true : undefined));
      sendAll(launcher, TOOL_UNUSED);
      running.process.stdin?.end(MANIFEST);
      const result = await running.finished;
      assert.deepEqual([result.code, result.stdout, result.stderr], [expected.code, expected.stdout, expected.stderr]);
    });
  });
}

/** /proc/PID/syscall of a thread in read(0, ...): the number of read(2) on this architecture, then fd 0. */
const READS_STDIN = `${{ x64: 0, arm64: 63 }[process.arch as 'x64' | 'arm64']} 0x0 `;

/**
 * The first value `probe` gives that is neither undefined nor NaN (a throw counts as neither), checked each turn;
 * bounded by the processes' own hard timeout.
 */
async function until<T>(probe: () => T | undefined): Promise<T> {
  for (const end = performance.now() + TIMEOUT_MS; performance.now() < end; ) {
    try {
      const value = probe();
      if (value !== undefined && !Number.isNaN(value)) return value;
    } catch {}
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`not within ${TIMEOUT_MS} ms: ${probe.toString()}`);
}
