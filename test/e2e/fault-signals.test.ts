// The fault signals (ABRT, SEGV, ILL, TRAP, SYS, BUS, FPE) sent by another process, to the launcher's process group
// (coreutils `timeout -s ABRT`, a parent's `kill -ABRT 0`) and to its PID, as PID 1 and not: each is a signal like any
// other, never the launcher's own crash. A running command gets it and dies of it (128+N, as alone), the sidecar is
// told to quit once the command has ended, and the wrapper lives to the end; one sent during the wait is held. On a
// terminal the Node part shares the launcher's group and dies of one sent to it: the launcher carries on alone.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { FAULTS, signalNumber } from '../../src/command/signals.ts';
import { type Finished, onATerminal, pidOne, start, WRAPPER, type Running } from '../support/process.ts';
import { type Sidecar, withSidecar } from '../support/sidecar.ts';

const TIMEOUT_MS = 20_000;
/** SIGIOT is another name of SIGABRT. */
const SENT = FAULTS.filter((name) => name !== 'SIGIOT');

/** A command that says "ready" and runs while the launcher lives (no core file: its limit is 0). */
const COMMAND = ['/bin/sh', '-c', 'ulimit -c 0; echo ready; while kill -0 $PPID 2>/dev/null; do sleep 0.02; done; exit 3'];
const JOB = ['/bin/sh', '-c', 'echo RAN; exit 3'];

/** The wrapper, leading a process group of its own: started as a session's leader, or as PID 1 (which calls setsid). */
function startWrapper(pid1: boolean, args: readonly string[]): Running {
  return pid1
    ? start('unshare', ['--pid', '--fork', '--mount-proc', 'setsid', WRAPPER, ...args], { detached: true, timeoutMs: TIMEOUT_MS })
    : start(WRAPPER, args, { detached: true, timeoutMs: TIMEOUT_MS });
}

/** The launcher's host pid, which is also its process group's id. */
const launcherOf = (running: Running, pid1: boolean): number => (pid1 ? pidOne(running.pid) : running.pid);

const children = (pid: number): number[] =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);

/** The command's host pid: the launcher's child that is not the wrapper's Node part. */
function commandOf(launcher: number): number {
  const command = children(launcher).find((pid) => !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('istio-job-run'));
  return command ?? assert.fail(`no command among the children of the launcher ${launcher}`);
}

const acknowledged = (sidecar: Sidecar): number =>
  sidecar.requests.filter((request) => request.path.startsWith('/quitquitquit') && request.status === 200).length;

/** How it ended; a launcher still there after the hard timeout (PID 1 of a namespace outlives unshare) is killed. */
async function finishedOrKilled(running: Running, launcher: number): Promise<Finished> {
  try {
    return await running.finished;
  } finally {
    try {
      process.kill(launcher, 'SIGKILL');
    } catch {}
  }
}

const WRAPPER_DIED = /the wrapper ended|the wrapper died|did not finish/;

for (const pid1 of [false, true]) {
  for (const to of ['group', 'pid'] as const) {
    describe(`${pid1 ? 'as PID 1' : 'not PID 1'}, sent to the launcher's ${to === 'group' ? 'process group' : 'PID'}`, () => {
      for (const signal of SENT) {
        const code = 128 + signalNumber(signal);
        test(`${signal} while the command runs: it dies of it, exit ${code}, one quit after its end`, async () => {
          await withSidecar({}, async (sidecar) => {
            const running = startWrapper(pid1, sidecar.classicArgs('--', ...COMMAND));
            await running.line(/^ready$/, 'stdout');
            const launcher = launcherOf(running, pid1);
            const command = commandOf(launcher);
            // Whether the command was still there when the first quit arrived.
            let aliveAtQuit: boolean | undefined;
            sidecar.on('change', () => {
              if (aliveAtQuit === undefined && sidecar.quitRequests.length > 0) aliveAtQuit = existsSync(`/proc/${command}`);
            });
            process.kill(to === 'group' ? -launcher : launcher, signal);
            const result = await finishedOrKilled(running, launcher);
            assert.equal(result.code, code, result.stderr);
            assert.equal(acknowledged(sidecar), 1, `quits acknowledged\n${result.stderr}`);
            assert.equal(aliveAtQuit, false, `the quit came while the command ran\n${result.stderr}`);
            assert.doesNotMatch(result.stderr, WRAPPER_DIED);
          });
        });
      }

      test(`${SENT.join(' ')} during the wait: held, the job runs, exit 3, one quit`, async () => {
        await withSidecar({ readyAfter: Number.POSITIVE_INFINITY }, async (sidecar) => {
          const running = startWrapper(pid1, sidecar.classicArgs('--log-level', 'debug', '--', ...JOB));
          await sidecar.waitFor(() => sidecar.readyRequests.length >= 1);
          const launcher = launcherOf(running, pid1);
          for (const signal of SENT) process.kill(to === 'group' ? -launcher : launcher, signal);
          for (const signal of SENT) await running.line(new RegExp(`ignored ${signal} \\(the command has not started\\)`), 'stderr');
          sidecar.setReady();
          const result = await finishedOrKilled(running, launcher);
          assert.equal(result.code, 3, result.stderr);
          assert.equal(result.stdout, 'RAN\n');
          assert.equal(acknowledged(sidecar), 1, result.stderr);
          assert.doesNotMatch(result.stderr, WRAPPER_DIED);
        });
      });
    });
  }
}

describe("not PID 1, on a terminal: the Node part shares the launcher's group", () => {
  for (const signal of SENT) {
    const code = 128 + signalNumber(signal);
    test(`${signal} to the group: the Node part dies of it, the launcher quits after the command, exit ${code}`, async () => {
      await withSidecar({}, async (sidecar) => {
        const running = start(...onATerminal([WRAPPER, ...sidecar.classicArgs('--', ...COMMAND)]), {
          detached: true,
          timeoutMs: TIMEOUT_MS,
        });
        await running.line(/^ready$/, 'stdout');
        const command = commandOf(running.pid);
        let aliveAtQuit: boolean | undefined;
        sidecar.on('change', () => {
          if (aliveAtQuit === undefined && sidecar.quitRequests.length > 0) aliveAtQuit = existsSync(`/proc/${command}`);
        });
        process.kill(-running.pid, signal);
        const result = await finishedOrKilled(running, running.pid);
        assert.equal(result.code, code, result.stderr);
        assert.equal(acknowledged(sidecar), 1, `quits acknowledged\n${result.stderr}`);
        assert.equal(aliveAtQuit, false, `the quit came while the command ran\n${result.stderr}`);
        assert.match(result.stderr, /the wrapper died of signal \d+ \(.*\), which another process sent to the launcher's process group/);
      });
    });
  }
});
