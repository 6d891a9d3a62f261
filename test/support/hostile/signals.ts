// Signals: during start-up, floods and streams across the command's exit, real-time signals as a cause of death
// and queued, and signals during the quit.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { NODE, REPORTER, WRAPPER } from '../process.ts';
import {
  acknowledged,
  CLASSIC,
  defineCase,
  describeStatus,
  EXIT_BOUND_MS,
  pid1Argv,
  reportedCount,
  STOP_SIGNALS,
  signo,
  target,
  type Verdict,
  wait,
  where,
} from './common.ts';
import { accepts, flood, helper, inspectorThreads, listenersOf, processState, spawnHow, tree } from './tools.ts';

const exec = promisify(execFile);

// ---------------------------------------------------------------------------------------------------------
// Signals during start-up

export const stopDuringStartUp = defineCase({
  name: 'stop signal during start-up',
  about:
    'TERM, INT, HUP or QUIT 0-150 ms after spawn, the proxy never ready (every signal blocked at exec, so none is lost before ' +
    'the program runs): exit 128+N, the command never runs, the quit is POSTed',
  tries: { short: 8, long: 240 },
  variant: (i) => ({
    signal: STOP_SIGNALS[i % STOP_SIGNALS.length] ?? 'SIGTERM',
    pid1: Math.floor(i / STOP_SIGNALS.length) % 2 === 1,
    loaded: i % 3 === 2,
    delay: (i * 47) % 151,
  }),
  sent: ({ signal, delay, pid1, loaded }) => `${signal} at ${delay} ms, ${where(pid1, loaded)}`,
  loaded: ({ loaded }) => loaded,
  standIn: { readyAfter: Number.POSITIVE_INFINITY },
  async judge({ signal, pid1, delay }, { sidecar }) {
    const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, ...CLASSIC, '--', '/bin/sh', '-c', 'echo command-ran']), {
      blockSignals: true,
      timeoutMs: 10_000,
    });
    const pid = await target(spawned, pid1);
    await wait(delay);
    process.kill(pid, signal);
    const status = await spawned.status;
    const ran = status.stdout.includes('command-ran');
    const quits = acknowledged(sidecar);
    const expected = 128 + signo(signal);
    return {
      ok: status.killedBy === undefined && status.code === expected && !ran && quits >= 1,
      got: [
        `${describeStatus(status)}${status.code === expected && status.killedBy === undefined ? ' (128+N)' : ''}`,
        ran ? 'the command ran' : 'no command',
        `${quits} quit(s) acknowledged`,
      ],
    };
  },
});

export const userSignalsDuringStartUp = defineCase({
  name: 'USR1 or USR2 during start-up',
  about:
    'USR1 or USR2 0-150 ms after spawn (blocked at exec), then the proxy turns ready and the command runs; then the same signal ' +
    'again: no inspector ever (nothing listens on 9229 in the netns, no "Debugger" line), and the command gets the signal exactly once',
  tries: { short: 4, long: 120 },
  variant: (i) => ({
    signal: i % 2 === 0 ? 'SIGUSR1' : 'SIGUSR2',
    pid1: Math.floor(i / 2) % 2 === 1,
    loaded: i % 3 === 2,
    delay: (i * 47) % 151,
  }),
  sent: ({ signal, delay, pid1, loaded }) => `${signal} at ${delay} ms, then again while the command runs, ${where(pid1, loaded)}`,
  loaded: ({ loaded }) => loaded,
  standIn: { readyAfter: Number.POSITIVE_INFINITY },
  async judge({ signal, pid1, delay }, { sidecar }) {
    const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, ...CLASSIC, '--', NODE, REPORTER]), { blockSignals: true, timeoutMs: 12_000 });
    const pid = await target(spawned, pid1);
    await wait(delay);
    process.kill(pid, signal);
    sidecar.setReady();
    let inspector: string[] = [];
    let got: string | undefined;
    try {
      const commandPid = Number((await spawned.line(/^ready \d+ \d+$/)).split(' ')[1]);
      inspector = [...listenersOf(pid, 9229), ...inspectorThreads(tree(pid).filter((p) => p !== commandPid))];
      if (await accepts('127.0.0.1', 9229)) inspector.push('127.0.0.1:9229 accepts');
      process.kill(pid, signal);
      await spawned.line(new RegExp(`^signal ${signal}$`), 5_000);
    } catch (error) {
      got = (error as Error).message;
    }
    spawned.helperProcess.stdin?.end('exit 0\n');
    const status = await spawned.status;
    const debuggerLine = /Debugger listening|inspector/i.test(status.stderr);
    const count = reportedCount(status.stdout, signal);
    return {
      ok: got === undefined && inspector.length === 0 && !debuggerLine && count === 1 && status.code === 0,
      got: [
        describeStatus(status),
        got,
        inspector.length > 0 && `inspector: ${inspector.join(' ')}`,
        debuggerLine && '"Debugger listening" on stderr',
        `the command got it ${count} time(s)`,
      ],
    };
  },
});

// ---------------------------------------------------------------------------------------------------------
// Floods and streams across the command's exit

/** A job that ignores `traps`, says "ready", and exits with `code` when a line arrives on stdin. */
const cueJob = (traps: string, code: number): string[] => ['/bin/sh', '-c', `trap "" ${traps}; echo "ready $$"; read line; exit ${code}`];

async function acrossExit(how: { signal: string; gapMicros: number; pid1: boolean; tini?: boolean; code: number }): Promise<Verdict> {
  const wrapperArgv = [WRAPPER, '--sidecar', 'none', '--', ...cueJob('HUP TERM USR2 WINCH', how.code)];
  const argv = how.tini === true ? ['tini', '-s', '--', ...wrapperArgv] : pid1Argv(how.pid1, wrapperArgv);
  const spawned = spawnHow(argv, { timeoutMs: 12_000 });
  const pid = await target(spawned, how.pid1);
  const commandPid = Number((await spawned.line(/^ready \d+$/)).split(' ')[1]);
  // A flood: one flooder per signal of the case, and one more of a second forwarded signal, so two are pending at once.
  const flooders = (how.gapMicros === 0 ? [how.signal, how.signal === 'SIGWINCH' ? 'SIGUSR2' : 'SIGWINCH'] : [how.signal]).map((signal) =>
    flood(pid, signo(signal), how.gapMicros, how.gapMicros === 0 ? 200_000 : 20),
  );
  await Promise.all(flooders.map((flooder) => flooder.started));
  const cuedAt = performance.now();
  spawned.helperProcess.stdin?.end('go\n');
  let zombie = false;
  const bound = setTimeout(() => {
    zombie = processState(commandPid) === 'Z';
  }, EXIT_BOUND_MS);
  const status = await spawned.status;
  clearTimeout(bound);
  const sent = (await Promise.all(flooders.map((flooder) => flooder.stop()))).reduce((sum, n) => sum + n, 0);
  const tookMs = status.endedAt - cuedAt;
  const ok = status.code === how.code && tookMs < EXIT_BOUND_MS;
  return {
    ok,
    got: [
      describeStatus(status),
      status.code === 128 + signo(how.signal) && `(the wrapper died of ${how.signal})`,
      tookMs >= EXIT_BOUND_MS && `not within ${EXIT_BOUND_MS} ms of the command's end`,
      zombie && 'beside a zombie command',
      `${sent >= 10_000 ? `${Math.round(sent / 1000)}k` : sent < 1000 ? `${sent}` : `${(sent / 1000).toFixed(0)}k`} signals sent`.replace(
        /\d+k? signals/,
        (m) => (ok ? 'signals' : m),
      ),
    ],
  };
}

export const floodAcrossExit = defineCase({
  name: 'signal flood across the exit',
  about:
    'kill(2) in tight C loops (USR2, WINCH or HUP, and WINCH or USR2 beside it; the job ignores them; 200k of each sent before the ' +
    'command is told to exit) while the command exits with 7: the wrapper exits 7 ' +
    `within ${EXIT_BOUND_MS} ms, no zombie left`,
  tries: { short: 4, long: 120 },
  variant: (i) => ({ signal: ['SIGUSR2', 'SIGWINCH', 'SIGHUP'][i % 3] ?? 'SIGUSR2', pid1: Math.floor(i / 3) % 2 === 1 }),
  sent: ({ signal, pid1 }) => `${signal} flood, ${where(pid1)}`,
  judge: ({ signal, pid1 }) => acrossExit({ signal, gapMicros: 0, pid1, code: 7 }),
});

export const termStreamNotPid1 = defineCase({
  name: 'TERM stream across the exit, not PID 1',
  about:
    'a TERM every 0.5 ms at the wrapper (directly, or through tini) while the command, which ignores TERM, exits with 3: exit 3, not 143',
  tries: { short: 4, long: 120 },
  variant: (i) => i % 2 === 1,
  sent: (tini) => `TERM every 0.5 ms, ${tini ? 'under tini -s' : 'from its parent'}`,
  judge: (tini) => acrossExit({ signal: 'SIGTERM', gapMicros: 500, pid1: false, tini, code: 3 }),
});

// ---------------------------------------------------------------------------------------------------------
// Real-time signals, and signals during the quit

export const realTimeDeath = defineCase({
  name: 'real-time signal as the cause of death',
  about: 'the command kills itself with signal N, 34-64 (`kill -N $$` in sh), --quit on-success: exit 128+N, no quit',
  tries: { short: 4, long: 62 },
  variant: (i) => ({ n: 34 + ((i * 10) % 31), pid1: Math.floor(i / 31) % 2 === 1 }),
  sent: ({ n, pid1 }) => `kill -${n}, ${where(pid1)}`,
  standIn: {},
  async judge({ n, pid1 }, { sidecar }) {
    const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, ...CLASSIC, '--quit', 'on-success', '--', '/bin/sh', '-c', `kill -${n} $$`]), {
      timeoutMs: 10_000,
    });
    const status = await spawned.status;
    const quits = sidecar.quitRequests.length;
    return {
      ok: status.killedBy === undefined && status.code === 128 + n && quits === 0,
      got: [describeStatus(status), status.code === 128 + n && status.killedBy === undefined && '(128+N)', `${quits} quit(s)`],
    };
  },
});

const QUEUED = 20_000;

export const realTimeQueue = defineCase({
  name: 'queued real-time signals',
  about:
    'sigqueue(2) sends 20000 instances of real-time signal 39 to the wrapper as fast as it can, then one of 50; ' +
    'the command (the C helper, counting with sigwaitinfo until the 50) gets every instance of 39',
  tries: { short: 2, long: 20 },
  variant: (i) => i % 2 === 1,
  sent: (pid1) => `${QUEUED} of signal 39, ${where(pid1)}`,
  async judge(pid1) {
    const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, '--sidecar', 'none', '--', helper(), 'count', '39', '50']), { timeoutMs: 20_000 });
    let sent = 0;
    let problem: string | undefined;
    try {
      const pid = await target(spawned, pid1);
      await spawned.line(/^ready \d+$/);
      sent = Number((await exec(helper(), ['queue', String(pid), '39', String(QUEUED)])).stdout.match(/sent (\d+)/)?.[1] ?? 0);
      await exec(helper(), ['queue', String(pid), '50', '1']);
    } catch (error) {
      problem = (error as Error).message;
    }
    const status = await spawned.status;
    const got = Number(status.stdout.match(/^count (\d+)$/m)?.[1] ?? -1);
    return {
      ok: problem === undefined && sent === QUEUED && got === sent && status.code === 0,
      got: [
        describeStatus(status),
        problem,
        sent !== QUEUED && `only ${sent} queued`,
        got < 0
          ? 'the command never counted'
          : got === sent
            ? 'every instance forwarded'
            : sent - got < 1000
              ? `${sent - got} of ${sent} lost`
              : `about ${Math.round((sent - got) / 1000)}k of ${sent} lost`,
      ],
    };
  },
});

export const signalsDuringQuit = defineCase({
  name: 'signals during the quit',
  about:
    "the first quit hangs (until --request-timeout); meanwhile TERM, INT, HUP, QUIT and USR1 at the wrapper: exit with the job's 3, the retry acknowledged",
  tries: { short: 2, long: 40 },
  variant: (i) => i % 2 === 1,
  sent: (pid1) => `TERM INT HUP QUIT USR1 during a hanging quit, ${where(pid1)}`,
  standIn: { quitScript: ['hang'] },
  async judge(pid1, { sidecar }) {
    const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, ...CLASSIC, '--request-timeout', '500ms', '--', '/bin/sh', '-c', 'exit 3']), {
      timeoutMs: 10_000,
    });
    const pid = await target(spawned, pid1);
    await sidecar.waitFor(() => sidecar.quitRequests.length >= 1);
    for (const signal of [...STOP_SIGNALS, 'SIGUSR1'] as const) process.kill(pid, signal);
    const status = await spawned.status;
    const quits = acknowledged(sidecar);
    return { ok: status.code === 3 && quits === 1, got: [describeStatus(status), `${quits} quit(s) acknowledged`] };
  },
});
