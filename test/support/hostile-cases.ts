// The adversarial suite, as one table: each case says what it sends, how many times it is tried in each
// size (short: inside `npm test`; long: `npm run reliability`), and judges one try from what came back.
// Tries run inside test/support/hostile-main.ts, in a network namespace of their own (the pod's loopback:
// the sidecar stand-in on the real ports 15020/15021, and Node's inspector port 9229 visible to nobody else).
// A try's `got` is a short, stable description, so the long run can count identical outcomes.

import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { constants } from 'node:os';
import { promisify } from 'node:util';
import {
  accepts,
  cgroup,
  childOf,
  flood,
  helper,
  inspectorThreads,
  listenersOf,
  processState,
  spawnHow,
  tree,
  underLoad,
  withShell,
  type Shell,
  type Spawned,
  type Status,
} from './hostile.ts';
import { WRAPPER, NODE, REPORTER } from './process.ts';
import { Sidecar, type SidecarOptions } from './sidecar.ts';

const exec = promisify(execFile);

export type Size = 'short' | 'long';

export interface Try {
  /** What was sent this time (the varying part: signal, moment, PID 1 or not, load). */
  readonly sent: string;
  readonly ok: boolean;
  /** What came back, stable across tries with the same outcome. */
  readonly got: string;
}

export interface HostileCase {
  readonly name: string;
  /** What the case sends, and what it expects. */
  readonly about: string;
  readonly tries: Readonly<Record<Size, number>>;
  run(index: number): Promise<Try>;
}

const BUSYBOX = '/bin/busybox';
const CLASSIC = ['--sidecar', 'classic', '--ready-timeout', '3s', '--quit-timeout', '2s'];
/** How long after the job's end the wrapper may take to exit, beyond its own timeouts (generous: a shared, loaded machine). */
const EXIT_BOUND_MS = 3_000;
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT'] as const;
const signo = (name: string): number => constants.signals[name as NodeJS.Signals];
const pid1Argv = (pid1: boolean, argv: readonly string[]): string[] =>
  pid1 ? ['unshare', '--pid', '--fork', '--mount-proc', ...argv] : [...argv];
const where = (pid1: boolean, loaded = false): string => `${pid1 ? 'as PID 1' : 'not PID 1'}${loaded ? ', loaded' : ''}`;

/** The stand-in on the real ports of this network namespace, for one try. */
async function withStandIn<T>(options: SidecarOptions, body: (sidecar: Sidecar) => Promise<T>): Promise<T> {
  const sidecar = await Sidecar.start({ agentPort: 15020, envoyPort: 15021, ...options });
  try {
    return await body(sidecar);
  } finally {
    await sidecar.close();
  }
}

/** A temporary directory for one try, removed afterwards. */
async function withScratch<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-hostile-'));
  try {
    return await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const acknowledged = (sidecar: Sidecar): number => sidecar.quitRequests.filter((r) => r.status === 200).length;

/** The pid to signal: the wrapper itself, or PID 1 of its namespace. */
async function target(spawned: Spawned, pid1: boolean): Promise<number> {
  const pid = await spawned.pid;
  return pid1 ? childOf(pid) : pid;
}

const describeStatus = (status: {
  code: number | undefined;
  timedOut: boolean;
  leftover?: boolean;
  killedBy: number | undefined;
}): string =>
  (status.timedOut
    ? 'hang (killed by the bound)'
    : status.killedBy !== undefined
      ? `killed by signal ${status.killedBy} (${status.code})`
      : `exit ${status.code}`) + (status.leftover === true ? ', processes left running (killed at the bound)' : '');

/** stderr lines that are not the wrapper's (`istio-job-run: ...` or its JSON). */
const foreignLines = (stderr: string): string[] =>
  stderr.split('\n').filter((line) => line !== '' && !line.startsWith('istio-job-run:') && !line.startsWith('{"'));

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts of "signal NAME" lines from a job that reports signals (the reporter fixture, the C helper's catch). */
const reportedCount = (stdout: string, signal: string): number => stdout.split('\n').filter((line) => line === `signal ${signal}`).length;

function joinGot(parts: (string | false | undefined)[]): string {
  return parts.filter((part): part is string => typeof part === 'string' && part !== '').join(', ');
}

// ---------------------------------------------------------------------------------------------------------
// Signals during start-up

const stopDuringStartUp: HostileCase = {
  name: 'stop signal during start-up',
  about:
    'TERM, INT, HUP or QUIT 0-150 ms after spawn, the proxy never ready (every signal blocked at exec, so none is lost before ' +
    'the program runs): exit 128+N, the command never runs, the quit is POSTed',
  tries: { short: 8, long: 240 },
  async run(i) {
    const signal = STOP_SIGNALS[i % STOP_SIGNALS.length] ?? 'SIGTERM';
    const pid1 = Math.floor(i / STOP_SIGNALS.length) % 2 === 1;
    const loaded = i % 3 === 2;
    const delay = (i * 47) % 151;
    const sent = `${signal} at ${delay} ms, ${where(pid1, loaded)}`;
    return underLoad(loaded, () =>
      withStandIn({ readyAfter: Number.POSITIVE_INFINITY }, async (sidecar) => {
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
        const ok = status.killedBy === undefined && status.code === expected && !ran && quits >= 1;
        return {
          sent,
          ok,
          got: joinGot([
            `${describeStatus(status)}${status.code === expected && status.killedBy === undefined ? ' (128+N)' : ''}`,
            ran ? 'the command ran' : 'no command',
            `${quits} quit(s) acknowledged`,
          ]),
        };
      }),
    );
  },
};

const userSignalsDuringStartUp: HostileCase = {
  name: 'USR1 or USR2 during start-up',
  about:
    'USR1 or USR2 0-150 ms after spawn (blocked at exec), then the proxy turns ready and the command runs; then the same signal ' +
    'again: no inspector ever (nothing listens on 9229 in the netns, no "Debugger" line), and the command gets the signal exactly once',
  tries: { short: 4, long: 120 },
  async run(i) {
    const signal = i % 2 === 0 ? 'SIGUSR1' : 'SIGUSR2';
    const pid1 = Math.floor(i / 2) % 2 === 1;
    const loaded = i % 3 === 2;
    const delay = (i * 47) % 151;
    const sent = `${signal} at ${delay} ms, then again while the command runs, ${where(pid1, loaded)}`;
    return underLoad(loaded, () =>
      withStandIn({ readyAfter: Number.POSITIVE_INFINITY }, async (sidecar) => {
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
        const ok = got === undefined && inspector.length === 0 && !debuggerLine && count === 1 && status.code === 0;
        return {
          sent,
          ok,
          got: joinGot([
            describeStatus(status),
            got,
            inspector.length > 0 && `inspector: ${inspector.join(' ')}`,
            debuggerLine && '"Debugger listening" on stderr',
            `the command got it ${count} time(s)`,
          ]),
        };
      }),
    );
  },
};

// ---------------------------------------------------------------------------------------------------------
// Floods and streams across the command's exit

/** A job that ignores `traps`, says "ready", and exits with `code` when a line arrives on stdin. */
const cueJob = (traps: string, code: number): string[] => ['/bin/sh', '-c', `trap "" ${traps}; echo "ready $$"; read line; exit ${code}`];

async function acrossExit(
  i: number,
  how: { signal: string; gapMicros: number; pid1: boolean; tini?: boolean; code: number },
): Promise<Omit<Try, 'sent'>> {
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
  void i;
  return {
    ok,
    got: joinGot([
      describeStatus(status),
      status.code === 128 + signo(how.signal) && `(the wrapper died of ${how.signal})`,
      tookMs >= EXIT_BOUND_MS && `not within ${EXIT_BOUND_MS} ms of the command's end`,
      zombie && 'beside a zombie command',
      `${sent >= 10_000 ? `${Math.round(sent / 1000)}k` : sent < 1000 ? `${sent}` : `${(sent / 1000).toFixed(0)}k`} signals sent`.replace(
        /\d+k? signals/,
        (m) => (ok ? 'signals' : m),
      ),
    ]),
  };
}

const floodAcrossExit: HostileCase = {
  name: 'signal flood across the exit',
  about:
    'kill(2) in tight C loops (USR2, WINCH or HUP, and WINCH or USR2 beside it; the job ignores them; 200k of each sent before the ' +
    'command is told to exit) while the command exits with 7: the wrapper exits 7 ' +
    `within ${EXIT_BOUND_MS} ms, no zombie left`,
  tries: { short: 4, long: 120 },
  async run(i) {
    const signal = ['SIGUSR2', 'SIGWINCH', 'SIGHUP'][i % 3] ?? 'SIGUSR2';
    const pid1 = Math.floor(i / 3) % 2 === 1;
    return { sent: `${signal} flood, ${where(pid1)}`, ...(await acrossExit(i, { signal, gapMicros: 0, pid1, code: 7 })) };
  },
};

const termStreamNotPid1: HostileCase = {
  name: 'TERM stream across the exit, not PID 1',
  about:
    'a TERM every 0.5 ms at the wrapper (directly, or through tini) while the command, which ignores TERM, exits with 3: exit 3, not 143',
  tries: { short: 4, long: 120 },
  async run(i) {
    const tini = i % 2 === 1;
    return {
      sent: `TERM every 0.5 ms, ${tini ? 'under tini -s' : 'from its parent'}`,
      ...(await acrossExit(i, { signal: 'SIGTERM', gapMicros: 500, pid1: false, tini, code: 3 })),
    };
  },
};

const realTimeDeath: HostileCase = {
  name: 'real-time signal as the cause of death',
  about: 'the command kills itself with signal N, 34-64 (`kill -N $$` in sh), --quit on-success: exit 128+N, no quit',
  tries: { short: 4, long: 62 },
  async run(i) {
    const n = 34 + ((i * 10) % 31);
    const pid1 = Math.floor(i / 31) % 2 === 1;
    return withStandIn({}, async (sidecar) => {
      const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, ...CLASSIC, '--quit', 'on-success', '--', '/bin/sh', '-c', `kill -${n} $$`]), {
        timeoutMs: 10_000,
      });
      const status = await spawned.status;
      const quits = sidecar.quitRequests.length;
      return {
        sent: `kill -${n}, ${where(pid1)}`,
        ok: status.killedBy === undefined && status.code === 128 + n && quits === 0,
        got: joinGot([describeStatus(status), status.code === 128 + n && status.killedBy === undefined && '(128+N)', `${quits} quit(s)`]),
      };
    });
  },
};

const signalsDuringQuit: HostileCase = {
  name: 'signals during the quit',
  about:
    "the first quit hangs (until --request-timeout); meanwhile TERM, INT, HUP, QUIT and USR1 at the wrapper: exit with the job's 3, the retry acknowledged",
  tries: { short: 2, long: 40 },
  async run(i) {
    const pid1 = i % 2 === 1;
    return withStandIn({ quitScript: ['hang'] }, async (sidecar) => {
      const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, ...CLASSIC, '--request-timeout', '500ms', '--', '/bin/sh', '-c', 'exit 3']), {
        timeoutMs: 10_000,
      });
      const pid = await target(spawned, pid1);
      await sidecar.waitFor(() => sidecar.quitRequests.length >= 1);
      for (const signal of [...STOP_SIGNALS, 'SIGUSR1'] as const) process.kill(pid, signal);
      const status = await spawned.status;
      const quits = acknowledged(sidecar);
      return {
        sent: `TERM INT HUP QUIT USR1 during a hanging quit, ${where(pid1)}`,
        ok: status.code === 3 && quits === 1,
        got: joinGot([describeStatus(status), `${quits} quit(s) acknowledged`]),
      };
    });
  },
};

// ---------------------------------------------------------------------------------------------------------
// Hostile stdio, environment and file system

const stalledStderr: HostileCase = {
  name: 'stalled stderr',
  about:
    "the wrapper's stderr is a full pipe nobody reads; classic mode, the job writes nothing and exits 6: exit 6 within the bound, " +
    "and the job's stderr is not made non-blocking",
  tries: { short: 2, long: 40 },
  async run(i) {
    const pid1 = i % 2 === 1;
    return withStandIn({}, async (sidecar) => {
      const job = ['/bin/sh', '-c', 'grep "^flags" /proc/self/fdinfo/2; exit 6'];
      const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, ...CLASSIC, '--', ...job]), { stderr: 'stalled-pipe', timeoutMs: 8_000 });
      const status = await spawned.status;
      const flags = status.stdout.match(/^flags:\s*(\d+)/m)?.[1];
      const nonBlocking = flags !== undefined && (parseInt(flags, 8) & 0o4000) !== 0;
      const quits = acknowledged(sidecar);
      return {
        sent: `stderr full and never read, ${where(pid1)}`,
        ok: status.code === 6 && flags !== undefined && !nonBlocking,
        got: joinGot([
          describeStatus(status),
          flags === undefined ? 'the job never ran' : nonBlocking ? "the job's stderr is O_NONBLOCK" : "the job's stderr blocking",
          `${quits} quit(s) acknowledged`,
        ]),
      };
    });
  },
};

const closedStdout: HostileCase = {
  name: 'stdout a closed pipe',
  about:
    'stdout is a pipe whose reader is gone: the job that writes to it ends as it does without the wrapper (SIGPIPE, 141); ' +
    '--version exits 0',
  tries: { short: 2, long: 20 },
  async run(i) {
    const version = i % 2 === 1;
    const args = version ? ['--version'] : ['--sidecar', 'none', '--', '/bin/sh', '-c', 'echo x; exit 0'];
    const expected = version ? 0 : (await spawnHow(['/bin/sh', '-c', 'echo x; exit 0'], { stdout: 'closed-pipe' }).status).code;
    const status = await spawnHow([WRAPPER, ...args], { stdout: 'closed-pipe', timeoutMs: 8_000 }).status;
    return {
      sent: version ? '--version' : 'a job that writes a line',
      ok: status.killedBy === undefined && status.code === expected,
      got: `${describeStatus(status)} (without the wrapper: ${expected})`,
    };
  },
};

/** Runs the job `busybox env` through the wrapper with `env` added, in classic mode; returns what it saw. */
async function envJob(
  env: Record<string, string>,
  pid1: boolean,
): Promise<{ status: Awaited<Spawned['status']>; seen: Map<string, string>; quits: number; ready: boolean }> {
  return withStandIn({}, async (sidecar) => {
    const argv = [WRAPPER, ...CLASSIC, '--', BUSYBOX, 'env'];
    // As PID 1 the variables are set past unshare, by env(1): unshare is dynamically linked and would read LD_PRELOAD itself.
    const status = pid1
      ? await spawnHow(pid1Argv(true, ['/usr/bin/env', ...Object.entries(env).map(([name, value]) => `${name}=${value}`), ...argv]), {
          timeoutMs: 10_000,
        }).status
      : await spawnHow(argv, { env, timeoutMs: 10_000 }).status;
    const seen = new Map<string, string>();
    for (const line of status.stdout.split('\n')) {
      const at = line.indexOf('=');
      if (at > 0) seen.set(line.slice(0, at), line.slice(at + 1));
    }
    return { status, seen, quits: acknowledged(sidecar), ready: sidecar.readyRequests.some((r) => r.status === 200) };
  });
}

function judgeEnv(
  env: Record<string, string>,
  result: Awaited<ReturnType<typeof envJob>>,
  dirs: readonly string[] = [],
): Omit<Try, 'sent'> {
  const changed = Object.entries(env)
    .filter(([name, value]) => result.seen.get(name) !== value)
    .map(([name]) => name);
  const foreign = foreignLines(result.status.stderr);
  const written = dirs.flatMap((dir) => readdirSync(dir).map((name) => join(dir.split('/').at(-1) ?? '', name)));
  const ok =
    result.status.code === 0 && result.ready && result.quits === 1 && changed.length === 0 && foreign.length === 0 && written.length === 0;
  return {
    ok,
    got: joinGot([
      describeStatus(result.status),
      result.ready ? 'ready' : 'no readiness',
      `${result.quits} quit(s)`,
      changed.length > 0 ? `changed for the job: ${changed.join(' ')}` : 'the job sees them unchanged',
      foreign.length > 0 && `${foreign.length} unprefixed stderr line(s), e.g. ${JSON.stringify(foreign[0]?.slice(0, 80))}`,
      written.length > 0 && `written: ${written.slice(0, 3).join(' ')}`,
    ]),
  };
}

const brokenPreload: HostileCase = {
  name: 'broken LD_PRELOAD',
  about:
    'LD_PRELOAD naming a missing file, or a file that is not ELF: the command runs, readiness and quit happen, the job sees LD_PRELOAD unchanged, ' +
    'no loader errors on stderr',
  tries: { short: 2, long: 20 },
  async run(i) {
    return withScratch(async (scratch) => {
      const notElf = join(scratch, 'not-elf.so');
      writeFileSync(notElf, '#!/bin/sh\nnot a library\n');
      const preload = i % 2 === 0 ? '/no/such/preload.so' : notElf;
      const env = { LD_PRELOAD: preload };
      return {
        sent: `LD_PRELOAD=${i % 2 === 0 ? 'a missing file' : 'a text file'}, ${where(i % 4 >= 2)}`,
        ...judgeEnv(env, await envJob(env, i % 4 >= 2)),
      };
    });
  },
};

const nodeVariables: HostileCase = {
  name: 'NODE_* variables meant for the job',
  about:
    'NODE_DEBUG=*, NODE_V8_COVERAGE=DIR, NODE_COMPILE_CACHE=DIR, NODE_OPTIONS, NODE_TLS_REJECT_UNAUTHORIZED=0, UV_THREADPOOL_SIZE=1: ' +
    'no unprefixed stderr line, nothing written into DIR, the job sees each unchanged',
  tries: { short: 2, long: 20 },
  async run(i) {
    return withScratch(async (scratch) => {
      const coverage = join(scratch, 'coverage');
      const cache = join(scratch, 'cache');
      mkdirSync(coverage);
      mkdirSync(cache);
      const env = {
        NODE_DEBUG: '*',
        NODE_V8_COVERAGE: coverage,
        NODE_COMPILE_CACHE: cache,
        NODE_OPTIONS: '--trace-exit --trace-warnings --pending-deprecation',
        NODE_TLS_REJECT_UNAUTHORIZED: '0',
        UV_THREADPOOL_SIZE: '1',
      };
      const pid1 = i % 2 === 1;
      return { sent: `all of them, ${where(pid1)}`, ...judgeEnv(env, await envJob(env, pid1), [coverage, cache]) };
    });
  },
};

/** The raw bytes of the environment the job sees, compared as a multiset of entries. */
const rawEntries = (environ: Buffer): string[] => {
  const entries: string[] = [];
  let start = 0;
  for (let at = environ.indexOf(0); at >= 0; at = environ.indexOf(0, start)) {
    entries.push(environ.subarray(start, at).toString('hex'));
    start = at + 1;
  }
  return entries.sort();
};

const environmentBytes: HostileCase = {
  name: 'environment bytes',
  about:
    'an environment set with execve(2): a value and a name that are not UTF-8, a value with a newline and "=", an empty value; the job ' +
    '(cat /proc/self/environ) sees exactly those entries, byte for byte',
  tries: { short: 2, long: 20 },
  async run(i) {
    const pid1 = i % 2 === 1;
    const raw = [
      Buffer.from('PATH=/usr/bin:/bin'),
      Buffer.from('ISTIO_JOB_RUN_SIDECAR=none'),
      Buffer.concat([Buffer.from('SECRET_BYTES='), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x80, 0x41])]),
      Buffer.concat([Buffer.from('NAME_'), Buffer.from([0xe9, 0xff]), Buffer.from('=latin1 name')]),
      Buffer.from('MULTI=line one\nline=two'),
      Buffer.from('EMPTY='),
    ];
    const argv = pid1Argv(pid1, [WRAPPER, '--', '/bin/cat', '/proc/self/environ']);
    const spawned = spawnHow(argv, { rawEnv: raw, timeoutMs: 8_000 });
    const status = await spawned.status;
    const seen = rawEntries(status.stdoutBytes);
    const given = raw.map((entry) => entry.toString('hex')).sort();
    const missing = given.filter((entry) => !seen.includes(entry)).map((hex) => Buffer.from(hex, 'hex').toString('latin1').split('=')[0]);
    const extra = seen.filter((entry) => !given.includes(entry)).map((hex) => Buffer.from(hex, 'hex').toString('latin1').split('=')[0]);
    return {
      sent: where(pid1),
      ok: status.code === 0 && missing.length === 0 && extra.length === 0,
      got: joinGot([
        describeStatus(status),
        missing.length > 0 ? `not as given: ${missing.map((n) => JSON.stringify(n)).join(' ')}` : 'every entry byte for byte',
        extra.length > 0 && `added: ${extra.join(' ')}`,
      ]),
    };
  },
};

const argumentBytes: HostileCase = {
  name: 'argument bytes',
  about:
    "the command's arguments set with execve(2), one not UTF-8 and one with a newline: the job (sh printing each argument) gets " +
    'them byte for byte',
  tries: { short: 2, long: 20 },
  async run(i) {
    const pid1 = i % 2 === 1;
    const args = [Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x80, 0x41]), Buffer.from('line one\nline two'), Buffer.from('')];
    const command = [WRAPPER, '--sidecar', 'none', '--', BUSYBOX, 'sh', '-c', 'for a in "$@"; do printf "%s\\0" "$a"; done', 'sh'];
    const rawArgv = [...pid1Argv(pid1, command).map((arg) => Buffer.from(arg)), ...args];
    const status = await spawnHow([], { rawArgv, timeoutMs: 8_000 }).status;
    const seen = status.stdoutBytes.toString('hex');
    const given = Buffer.concat(args.flatMap((arg) => [arg, Buffer.from([0])])).toString('hex');
    return {
      sent: where(pid1),
      ok: status.code === 0 && seen === given,
      got: joinGot([describeStatus(status), seen === given ? 'every argument byte for byte' : `got ${seen}, not ${given}`]),
    };
  },
};

const orphansReaped: HostileCase = {
  name: 'orphaned grandchildren',
  about:
    'the command leaves a grandchild behind (its parent exits), which ends 0.2 s later, as PID 1 and not: by 0.8 s it is reaped, ' +
    'no zombie (the command looks it up in /proc), and the exit code is kept',
  tries: { short: 2, long: 10 },
  async run(i) {
    const pid1 = i % 2 === 0;
    const script =
      'p=$( (sleep 0.2 >/dev/null 2>&1 & echo $!) ); sleep 0.8; ' +
      'if [ -e /proc/$p ]; then echo "zombie $p: $(cut -d" " -f3 /proc/$p/stat)"; exit 1; fi; echo reaped; exit 5';
    const status = await spawnHow(pid1Argv(pid1, [WRAPPER, '--sidecar', 'none', '--', BUSYBOX, 'sh', '-c', script]), { timeoutMs: 8_000 })
      .status;
    const said = status.stdout.trim();
    return { sent: where(pid1), ok: status.code === 5 && said === 'reaped', got: joinGot([describeStatus(status), said]) };
  },
};

const deletedCwd: HostileCase = {
  name: 'deleted working directory',
  about: 'started in a directory removed before exec, classic mode: the command runs (exit 9), the quit is acknowledged',
  tries: { short: 2, long: 20 },
  async run(i) {
    const pid1 = i % 2 === 1;
    const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-gone-'));
    return withStandIn({}, async (sidecar) => {
      const status = await spawnHow(pid1Argv(pid1, [WRAPPER, ...CLASSIC, '--', '/bin/sh', '-c', 'echo ran; exit 9']), {
        deletedCwd: dir,
        timeoutMs: 8_000,
      }).status;
      const ran = status.stdout.includes('ran');
      const quits = acknowledged(sidecar);
      const trace = status.stderr.includes('internal error');
      return {
        sent: where(pid1),
        ok: status.code === 9 && ran && quits === 1,
        got: joinGot([
          describeStatus(status),
          ran ? 'the command ran' : 'the command never ran',
          trace && '"internal error" on stderr',
          `${quits} quit(s) acknowledged`,
        ]),
      };
    });
  },
};

// ---------------------------------------------------------------------------------------------------------
// Install

/** Every entry under dir: path, kind, mode, and the link target or the content's hash. */
function snapshot(dir: string): string {
  const lines: string[] = [];
  const visit = (at: string, relative: string): void => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name);
      const stat = lstatSync(path);
      const rel = join(relative, name);
      if (stat.isSymbolicLink()) lines.push(`${rel} -> ${readlinkSync(path)}`);
      else if (stat.isDirectory()) {
        lines.push(`${rel}/ ${(stat.mode & 0o7777).toString(8)}`);
        visit(path, rel);
      } else lines.push(`${rel} ${(stat.mode & 0o7777).toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`);
    }
  };
  visit(dir, '');
  return lines.join('\n');
}

const failedReinstall: HostileCase = {
  name: 'failed re-install',
  about:
    'a first --install works; a second one fails at its last rename (the launcher is a bind-mount point: EBUSY): it says so, ' +
    'and the first install is byte-identical and still runs a job (exit 4)',
  tries: { short: 1, long: 10 },
  async run() {
    return withScratch(async (dir) => {
      const first = await spawnHow([WRAPPER, '--install', dir]).status;
      if (first.code !== 0)
        return { sent: 'a first install', ok: false, got: `the first install failed: ${describeStatus(first)} ${first.stderr.trim()}` };
      const before = snapshot(dir);
      const launcher = join(dir, 'istio-job-run');
      const second = await spawnHow(
        [
          '/usr/bin/unshare',
          '--mount',
          '--',
          '/bin/sh',
          '-c',
          'mount --bind "$1" "$1" && exec "$2" --install "$3"',
          'sh',
          launcher,
          WRAPPER,
          dir,
        ],
        { timeoutMs: 10_000 },
      ).status;
      const identical = snapshot(dir) === before;
      const works = await spawnHow([launcher, '--sidecar', 'none', '--', '/bin/sh', '-c', 'exit 4'], { timeoutMs: 8_000 }).status;
      return {
        sent: 'a second install whose last rename fails (EBUSY)',
        ok: second.code === 125 && identical && works.code === 4,
        got: joinGot([
          `second install ${describeStatus(second)}`,
          identical ? 'the first install byte-identical' : 'the first install changed',
          `the installed copy ${works.code === 4 ? 'works' : `fails (${describeStatus(works)}: ${works.stderr.trim().split('\n')[0]?.slice(0, 100)})`}`,
        ]),
      };
    });
  },
};

const installWithoutDir: HostileCase = {
  name: '--install without a directory',
  about:
    '`--install` as the last argument, inside Kubernetes (classic assumed), the stand-in up: a usage error at once, exit 125, no HTTP request',
  tries: { short: 1, long: 10 },
  async run(i) {
    const args = i % 2 === 0 ? ['--install'] : ['--log-level', 'debug', '--install'];
    return withStandIn({}, async (sidecar) => {
      const started = performance.now();
      const status = await spawnHow([WRAPPER, ...args], { env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, timeoutMs: 15_000 }).status;
      const tookMs = status.endedAt - started;
      const requests = sidecar.requests.length;
      const named = /^istio-job-run: --install/m.test(status.stderr);
      return {
        sent: args.join(' '),
        ok: status.code === 125 && requests === 0 && named && tookMs < EXIT_BOUND_MS,
        got: joinGot([
          describeStatus(status),
          `${requests} HTTP request(s)`,
          named ? 'names --install' : `says ${JSON.stringify(status.stderr.split('\n')[0]?.slice(0, 80))}`,
          tookMs >= EXIT_BOUND_MS && `took ${(tookMs / 1000).toFixed(0)} s`,
        ]),
      };
    });
  },
};

// ---------------------------------------------------------------------------------------------------------
// Network

const blackHoledDns: HostileCase = {
  name: 'black-holed DNS name beside a healthy quit URL',
  about:
    'one --quit-url names a host whose DNS server never answers, the other is 127.0.0.1 (--quit-timeout 2s): the healthy quit is ' +
    `acknowledged, and the wrapper exits within 2 s + ${EXIT_BOUND_MS} ms of the job's end`,
  tries: { short: 1, long: 10 },
  async run(i) {
    const dns = createSocket('udp4');
    dns.on('message', () => undefined); // swallowed: never answered
    dns.bind(53, '127.0.0.1');
    await once(dns, 'listening');
    return withScratch(async (scratch) => {
      const resolv = join(scratch, 'resolv.conf');
      writeFileSync(resolv, 'nameserver 127.0.0.1\noptions timeout:5 attempts:3\n');
      const order =
        i % 2 === 0
          ? ['http://quit.black-hole.test:15020/quitquitquit', 'http://127.0.0.1:15020/quitquitquit']
          : ['http://127.0.0.1:15020/quitquitquit', 'http://quit.black-hole.test:15020/quitquitquit'];
      return await withStandIn({}, async (sidecar) => {
        const spawned = spawnHow(
          [
            '/usr/bin/unshare',
            '--mount',
            '--',
            '/bin/sh',
            '-c',
            'mount --bind "$0" /etc/resolv.conf && exec "$@"',
            resolv,
            WRAPPER,
            ...CLASSIC,
            ...order.flatMap((url) => ['--quit-url', url]),
            '--',
            '/bin/sh',
            '-c',
            'echo done',
          ],
          { timeoutMs: 20_000 },
        );
        await spawned.line(/^done$/).catch(() => undefined);
        const doneAt = performance.now();
        const status = await spawned.status;
        const tookMs = status.endedAt - doneAt;
        const quits = acknowledged(sidecar);
        return {
          sent: `black hole ${i % 2 === 0 ? 'first' : 'second'}`,
          ok: status.code === 0 && quits === 1 && tookMs < 2_000 + EXIT_BOUND_MS,
          got: joinGot([
            describeStatus(status),
            `${quits} quit(s) acknowledged`,
            tookMs >= 2_000 + EXIT_BOUND_MS ? `exit ${(tookMs / 1000).toFixed(0)} s after the job` : 'exit within the bound',
            /127\.0\.0\.1:15020\/quitquitquit.*gave up/.test(status.stderr) && 'gave up on 127.0.0.1',
          ]),
        };
      });
    }).finally(() => dns.close());
  },
};

const urlCredentials: HostileCase = {
  name: 'credentials in a URL',
  about:
    'http://user:secret@127.0.0.1:15020/quitquitquit as --quit-url, as ISTIO_JOB_RUN_QUIT_URL, or as --ready-url: a usage error (125), ' +
    'the command not run, "secret" never on stderr',
  tries: { short: 3, long: 30 },
  async run(i) {
    const variants: [string, string[], Record<string, string>][] = [
      ['--quit-url', ['--quit-url', 'http://user:secret@127.0.0.1:15020/quitquitquit'], {}],
      ['ISTIO_JOB_RUN_QUIT_URL', [], { ISTIO_JOB_RUN_QUIT_URL: 'http://user:secret@127.0.0.1:15020/quitquitquit' }],
      ['--ready-url', ['--ready-url', 'http://user:secret@127.0.0.1:15021/healthz/ready'], {}],
    ];
    const [name, args, env] = variants[i % variants.length] ?? variants[0]!;
    return withStandIn({}, async () => {
      const status = await spawnHow([WRAPPER, ...CLASSIC, ...args, '--', '/bin/sh', '-c', 'echo ran'], { env, timeoutMs: 10_000 }).status;
      const leaked = status.stderr.includes('secret');
      const ran = status.stdout.includes('ran');
      return {
        sent: name,
        ok: status.code === 125 && !leaked && !ran,
        got: joinGot([describeStatus(status), ran && 'the command ran', leaked ? '"secret" on stderr' : 'no secret on stderr']),
      };
    });
  },
};

// ---------------------------------------------------------------------------------------------------------
// Terminals

const terminal: HostileCase = {
  name: 'stdin a terminal',
  about:
    'stdin a pty (the wrapper leads its session): INT, QUIT and WINCH sent with kill(2) to the wrapper, then a ^C typed at the pty: ' +
    'the command gets each exactly once (USR2 as a barrier after each)',
  tries: { short: 2, long: 20 },
  async run(i) {
    const pid1 = i % 2 === 1;
    const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, '--sidecar', 'none', '--', NODE, REPORTER]), { terminal: true, timeoutMs: 15_000 });
    const pid = await target(spawned, pid1);
    const steps: [string, () => void, string][] = [
      ['kill INT', () => process.kill(pid, 'SIGINT'), 'SIGINT'],
      ['kill QUIT', () => process.kill(pid, 'SIGQUIT'), 'SIGQUIT'],
      ['kill WINCH', () => process.kill(pid, 'SIGWINCH'), 'SIGWINCH'],
      ['typed ^C', () => spawned.type('\x03'), 'SIGINT'],
    ];
    const problems: string[] = [];
    try {
      await spawned.line(/^ready \d+ \d+$/);
      let barriers = 0;
      const expected = new Map<string, number>();
      for (const [what, act, signal] of steps) {
        expected.set(signal, (expected.get(signal) ?? 0) + 1);
        act();
        process.kill(pid, 'SIGUSR2');
        barriers += 1;
        const until = performance.now() + 5_000;
        while (reportedCount(spawned.stdout(), 'SIGUSR2') < barriers && performance.now() < until) await wait(5);
        const count = reportedCount(spawned.stdout(), signal);
        if (count !== expected.get(signal)) {
          problems.push(`${what}: ${signal} ${count - (expected.get(signal) ?? 0) + 1} time(s)`);
          expected.set(signal, count);
        }
      }
    } catch (error) {
      problems.push((error as Error).message);
    }
    spawned.type('exit 0\n');
    const status = await spawned.status;
    return {
      sent: `kill INT, QUIT, WINCH; typed ^C; ${where(pid1)}`,
      ok: problems.length === 0 && status.code === 0,
      got: joinGot([describeStatus(status), problems.length === 0 ? 'each exactly once' : problems.join('; ')]),
    };
  },
};

// ---------------------------------------------------------------------------------------------------------
// Hostile limits

interface Limit {
  readonly name: string;
  readonly names: RegExp;
  prefix(i: number): { argv: string[]; what: string; cleanup(): void } | undefined;
}

function limitCase(limit: Limit, tries: Readonly<Record<Size, number>>): HostileCase {
  return {
    name: `limit: ${limit.name}`,
    about:
      `${limit.name}, classic mode, a job that exits 7: exit 7 with the quit acknowledged, or exit 125 with one line \`istio-job-run: ...\` ` +
      'naming the limit; never a crash code (133, 134, 139) or a hang',
    tries,
    async run(i) {
      const setup = limit.prefix(i);
      if (setup === undefined) return { sent: limit.name, ok: false, got: 'could not set the limit up on this machine' };
      try {
        return await withStandIn({}, async (sidecar) => {
          const status = await spawnHow([...setup.argv, WRAPPER, ...CLASSIC, '--', '/bin/sh', '-c', 'exit 7'], { timeoutMs: 12_000 })
            .status;
          const quits = acknowledged(sidecar);
          const lines = status.stderr.split('\n').filter((line) => line !== '');
          const named = lines.filter((line) => /^istio-job-run: /.test(line) && limit.names.test(line));
          const worked = status.code === 7 && quits === 1;
          const refused = status.code === 125 && named.length >= 1;
          const first = lines[0]?.slice(0, 90);
          return {
            sent: setup.what,
            ok: worked || refused,
            got: worked
              ? 'works: exit 7, quit acknowledged'
              : refused
                ? `exit 125: ${JSON.stringify(named[0]?.slice(0, 90))}`
                : joinGot([describeStatus(status), `${quits} quit(s)`, first !== undefined && `stderr: ${JSON.stringify(first)}`]),
          };
        });
      } finally {
        setup.cleanup();
      }
    },
  };
}

const prlimit = (what: string, option: string): { argv: string[]; what: string; cleanup(): void } => ({
  argv: ['prlimit', option, '--'],
  what,
  cleanup: () => undefined,
});
const inCgroup = (controller: 'pids' | 'memory', settings: Record<string, string>, what: string) => {
  const group = cgroup(controller, settings);
  return group === undefined ? undefined : { argv: group.prefix, what, cleanup: group.remove };
};

const LIMITS: HostileCase[] = [
  limitCase(
    {
      name: 'nofile 16',
      names: /nofile|open files|file descriptors|RLIMIT_NOFILE/i,
      prefix: (i) =>
        i % 2 === 0 ? prlimit('nofile 16 (soft and hard)', '--nofile=16') : prlimit('nofile 16 soft, 1024 hard', '--nofile=16:1024'),
    },
    { short: 2, long: 20 },
  ),
  limitCase(
    {
      name: 'address space 150 MB',
      names: /address space|virtual memory|RLIMIT_AS|\bas\b/i,
      prefix: (i) =>
        i % 2 === 0
          ? prlimit('RLIMIT_AS 150 MB (soft and hard)', `--as=${150 * 2 ** 20}`)
          : prlimit('RLIMIT_AS 150 MB soft, unlimited hard', `--as=${150 * 2 ** 20}:unlimited`),
    },
    { short: 2, long: 20 },
  ),
  limitCase(
    {
      name: 'pids 4',
      names: /pids|threads|processes|tasks/i,
      prefix: () => inCgroup('pids', { 'pids.max': '4' }, 'a pids cgroup (v1) with pids.max 4'),
    },
    { short: 1, long: 10 },
  ),
  limitCase(
    {
      name: 'memory 16 MB',
      names: /memory|out of memory|OOM/i,
      prefix: () => inCgroup('memory', { 'memory.limit_in_bytes': String(16 * 2 ** 20) }, 'a memory cgroup (v1) of 16 MB'),
    },
    { short: 1, long: 10 },
  ),
];

// ---------------------------------------------------------------------------------------------------------
// The launcher as the last line: the Node half ignored, stopped, killed or lied to; job control; groups

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

/**
 * Sends `signal` to `pid` and waits for the job to say it got it, twice: then every signal relayed before the first
 * has been reported (signals pending together are handled highest number first, so one round is not enough).
 */
async function barrier(spawned: Spawned, pid: number, signal = 'SIGPWR'): Promise<boolean> {
  for (let round = 0; round < 2; round++) {
    const before = reportedCount(spawned.stdout(), signal);
    process.kill(pid, signal);
    const until = performance.now() + 5_000;
    while (reportedCount(spawned.stdout(), signal) <= before) {
      if (performance.now() > until || spawned.helperProcess.exitCode !== null) return false;
      await wait(5);
    }
  }
  return true;
}

/** The C helper as a job that reports each signal delivery at once and obeys kill verbs on stdin (hostile.c, `catch`). */
const CATCHER = (): string[] => [helper(), 'catch'];

/** Tells the catcher to run one of its kill verbs; undefined when it said "killed", else what it said. */
async function catcherKills(spawned: Spawned, verb: string, signal: string): Promise<string | undefined> {
  spawned.helperProcess.stdin?.write(`${verb} ${signo(signal)}\n`);
  const said = await spawned.line(/^kill/);
  return said === 'killed' ? undefined : `the command's ${verb} said "${said}"`;
}

/** Judges a run the launcher must see through: the job's code, a quit acknowledged, and no false blame on the OOM killer. */
function judgeOutcome(
  status: Status,
  expected: number,
  quits: number,
  oomBefore: number,
  problems: readonly (string | false | undefined)[],
): Omit<Try, 'sent'> {
  const blamed = oomKills() === oomBefore ? blamesOom(status.stderr) : [];
  const named = problems.filter((problem): problem is string => typeof problem === 'string' && problem !== '');
  return {
    ok: named.length === 0 && status.code === expected && quits >= 1 && blamed.length === 0,
    got: joinGot([
      describeStatus(status),
      ...named,
      `${quits} quit(s) acknowledged`,
      blamed.length > 0 && `blames the OOM killer: ${JSON.stringify(blamed[0]?.slice(0, 90))}`,
    ]),
  };
}

/** A job that says "ready PID" and exits 3 once a line arrives on stdin. */
const WAITING_JOB = ['/bin/sh', '-c', 'echo "ready $$"; read line; exit 3'];

const ignoredSigchld: HostileCase = {
  name: 'SIGCHLD ignored by the parent',
  about:
    'started by a parent that sets SIGCHLD to SIG_IGN and execs the wrapper (Perl or Python), classic mode, a job that ' +
    `exits 3: exit 3 within ${EXIT_BOUND_MS} ms of the job's end, the quit acknowledged`,
  tries: { short: 2, long: 30 },
  async run(i) {
    const starters: [string, string[]][] = [
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
    const [name, starter] = starters[i % starters.length] ?? starters[0]!;
    const pid1 = Math.floor(i / 2) % 2 === 1;
    return withStandIn({}, async (sidecar) => {
      const spawned = spawnHow(pid1Argv(pid1, [...starter, WRAPPER, ...CLASSIC, '--', '/bin/sh', '-c', 'echo done; exit 3']), {
        timeoutMs: 8_000,
      });
      await spawned.line(/^done$/).catch(() => undefined);
      const doneAt = performance.now();
      const status = await spawned.status;
      const quits = acknowledged(sidecar);
      const tookMs = status.endedAt - doneAt;
      return {
        sent: `${name} ignores SIGCHLD, then execs the wrapper, ${where(pid1)}`,
        ok: status.code === 3 && quits === 1 && tookMs < EXIT_BOUND_MS,
        got: joinGot([describeStatus(status), `${quits} quit(s) acknowledged`, tookMs >= EXIT_BOUND_MS && !status.timedOut && 'late']),
      };
    });
  },
};

/** An interactive shell's view of one wrapper run, for the job-control cases. */
interface Control {
  readonly sent: string;
  run(shell: Shell, scratch: string): Promise<string[]>;
}

function jobControlCase(name: string, about: string, controls: readonly Control[]): HostileCase {
  return {
    name,
    about,
    tries: { short: controls.length, long: controls.length * 10 },
    async run(i) {
      const control = controls[i % controls.length] ?? controls[0]!;
      return withScratch((scratch) =>
        withShell(scratch, async (shell) => {
          let problems: string[];
          try {
            problems = await control.run(shell, scratch);
          } catch (error) {
            problems = [(error as Error).message];
          }
          return {
            sent: control.sent,
            ok: problems.length === 0,
            got: problems.length === 0 ? 'as the command alone' : problems.join('; '),
          };
        }),
      );
    },
  };
}

/** What runs under the shell and in which state, with the terminal's last line: what a failed Ctrl-Z left. */
function jobSnapshot(shell: Shell): string {
  const states = tree(shell.pid)
    .slice(1)
    .map((pid) => {
      try {
        return `${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()} ${processState(pid) ?? '?'}`;
      } catch {
        return undefined;
      }
    })
    .filter((state) => state !== undefined);
  const last = shell.screen().trimEnd().split('\n').at(-1) ?? '';
  return `(under the shell: ${states.join(', ') || 'nothing'}; last line ${JSON.stringify(last.slice(0, 60))})`;
}

/** `sh -c SCRIPT` through the wrapper, as typed at the shell (the wrapper as a shell word). */
const typedJob = (script: string): string => `${WRAPPER} --sidecar none -- /bin/sh -c '${script}'`;

/** The state letter of the command under the shell: the process whose last argument (cmdline ends in a NUL) holds `marker`. */
function commandState(shell: Shell, marker: string): string | undefined {
  for (const pid of tree(shell.pid)) {
    try {
      if (
        readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').at(-2)?.includes(marker) &&
        !readlinkSync(`/proc/${pid}/exe`).includes('istio-job-run')
      )
        return processState(pid);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** A line of output at the shell: at the start of a line, or after a prompt (a background job's). */
const output = (text: string): RegExp => new RegExp(`(^|\\$ )${text}$`);

/** Whether the shell has its prompt: it runs a typed line (its output differs from the typed text). */
async function prompt(shell: Shell, n: number): Promise<boolean> {
  shell.line(`echo prompt-$((${n}*1000+1))`);
  return shell.shows(new RegExp(`^prompt-${n * 1000 + 1}$`), 5_000);
}

const ctrlZ: HostileCase = jobControlCase(
  'job control: Ctrl-Z, fg and bg',
  'an interactive bash on a pty runs the wrapper (--sidecar none) in the foreground; Ctrl-Z is typed: the shell reports the job ' +
    'Stopped and has its prompt back (a typed line runs), the command is stopped; then `fg` (a typed line reaches the command) or ' +
    '`bg` (it finishes in the background): the shell sees exit 5',
  [
    {
      sent: 'Ctrl-Z, then fg',
      async run(shell) {
        shell.line(typedJob('echo job-$((1+1)); read x; echo got-$x; exit 5'));
        if (!(await shell.shows(output('job-2')))) return ['the job never started'];
        shell.keys(['C-z']);
        const problems: string[] = [];
        if (!(await shell.shows(/Stopped/))) problems.push(`Ctrl-Z: no "Stopped" from the shell ${jobSnapshot(shell)}`);
        if (!(await prompt(shell, 1))) return [...problems, 'Ctrl-Z: the shell never got its prompt back'];
        const state = commandState(shell, 'echo job-');
        if (state !== 'T') problems.push(`Ctrl-Z: the command is ${state ?? 'gone'}, not stopped`);
        shell.line('fg');
        shell.line('hello');
        if (!(await shell.shows(output('got-hello')))) return [...problems, 'fg: the typed line never reached the command'];
        shell.line('echo code-$((0+$?))');
        if (!(await shell.shows(output('code-5'))))
          problems.push(`fg: not exit 5 (${shell.screen().match(/^code-\d+$/m)?.[0] ?? 'no code'})`);
        return problems;
      },
    },
    {
      sent: 'Ctrl-Z, then bg',
      async run(shell, scratch) {
        const go = join(scratch, 'go');
        shell.line(typedJob(`echo job-$((1+1)); until [ -e ${go} ]; do sleep 0.02; done; echo bg-done; exit 5`));
        if (!(await shell.shows(output('job-2')))) return ['the job never started'];
        shell.keys(['C-z']);
        const problems: string[] = [];
        if (!(await shell.shows(/Stopped/))) problems.push(`Ctrl-Z: no "Stopped" from the shell ${jobSnapshot(shell)}`);
        if (!(await prompt(shell, 1))) return [...problems, 'Ctrl-Z: the shell never got its prompt back'];
        shell.line('bg');
        writeFileSync(go, '');
        if (!(await shell.shows(output('bg-done')))) return [...problems, 'bg: the command never went on'];
        if (!(await shell.shows(/Exit 5/))) problems.push('bg: the shell never saw "Exit 5"');
        return problems;
      },
    },
  ],
);

const backgroundRead: HostileCase = jobControlCase(
  'job control: a background job reads the terminal',
  'an interactive bash on a pty starts the wrapper (--sidecar none) with `&`; its command reads the terminal: the shell reports it ' +
    'Stopped (tty input); `fg` gives it the terminal, a typed line reaches it, and the shell sees exit 5',
  [
    {
      sent: 'job & (the command reads), then fg',
      async run(shell) {
        shell.line(`${typedJob('echo job-$((1+1)); read x; echo got-$x; exit 5')} &`);
        if (!(await shell.shows(output('job-2')))) return ['the job never started'];
        const problems: string[] = [];
        if (!(await shell.shows(/Stopped/))) problems.push('no "Stopped" from the shell');
        if (!(await prompt(shell, 1))) return [...problems, 'the shell never got its prompt back'];
        shell.line('fg');
        shell.line('hello');
        if (!(await shell.shows(output('got-hello')))) return [...problems, 'fg: the typed line never reached the command'];
        shell.line('echo code-$((0+$?))');
        if (!(await shell.shows(output('code-5'))))
          problems.push(`fg: not exit 5 (${shell.screen().match(/^code-\d+$/m)?.[0] ?? 'no code'})`);
        return problems;
      },
    },
  ],
);

const tostop: HostileCase = jobControlCase(
  'job control: stty tostop',
  'an interactive bash on a pty with `stty tostop` runs `istio-job-run --version` or `--help` in the foreground: it prints and ' +
    'exits 0, never stopped',
  ['--version', '--help'].map(
    (flag): Control => ({
      sent: `stty tostop; ${flag}`,
      async run(shell) {
        shell.line(`stty tostop; ${WRAPPER} ${flag}; echo code-$((0+$?))`);
        if (await shell.shows(output('code-0'))) return [];
        return [shell.screen().includes('Stopped') ? 'the wrapper stopped (tty output)' : 'no exit within 5 s'];
      },
    }),
  ),
);

const broadcastAsPid1: HostileCase = {
  name: 'kill -1 from a job alone in its PID namespace',
  about:
    'the wrapper as PID 1, classic mode; the command (the C helper) sends STOP, KILL or TERM to -1 (every process but itself and ' +
    'PID 1: the Node half), then exits 3 when told: exit 3, the quit acknowledged, no TERM sent back to the command (a PWR to PID 1 ' +
    'after it reaches the command first), no line ' +
    'blaming the out-of-memory killer',
  tries: { short: 3, long: 30 },
  async run(i) {
    const signal = (['SIGSTOP', 'SIGKILL', 'SIGTERM'] as const)[i % 3] ?? 'SIGSTOP';
    return withStandIn({}, async (sidecar) => {
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
      return {
        sent: `kill -${signal.slice(3)} -1 from the command, as PID 1`,
        ...judgeOutcome(status, 3, acknowledged(sidecar), oomBefore, [
          ...problems,
          terms > 0 && `the command got TERM back ${terms} time(s)`,
        ]),
      };
    });
  },
};

const nodeKilledWhileRunning: HostileCase = {
  name: 'the Node half killed while the command runs',
  about:
    'classic mode; while the command runs, the Node half is sent KILL (as the out-of-memory killer would, but not by it) or STOP ' +
    'from outside; then the command exits 3: exit 3, the quit acknowledged, no line blaming the out-of-memory killer',
  tries: { short: 2, long: 40 },
  async run(i) {
    const signal = i % 2 === 0 ? 'SIGKILL' : 'SIGSTOP';
    const pid1 = Math.floor(i / 2) % 2 === 1;
    return withStandIn({}, async (sidecar) => {
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
      return {
        sent: `${signal.slice(3)} to the Node half, ${where(pid1)}`,
        ...judgeOutcome(status, 3, acknowledged(sidecar), oomBefore, [problem]),
      };
    });
  },
};

/** A pool of workers, each smaller than the Node half (about 50 MB resident, most of it its executable's pages). */
const WORKERS = 3;
const WORKER_MIB = 30;
/** Room for the workers, the launcher and the shell (about 91 MiB), but not for the Node half's own 10 MiB too. */
const POOL_LIMIT_MIB = 97;

const oomTakesNode: HostileCase = {
  name: 'the out-of-memory killer takes the Node half',
  about:
    `classic mode in a memory cgroup (v1) of ${POOL_LIMIT_MIB} MiB, no swap; the job is ${WORKERS} workers of ${WORKER_MIB} MiB, ` +
    "each smaller than the Node half, so the cgroup's out-of-memory killer takes the Node half; then the job exits 3: " +
    "exit 3, the quit acknowledged (the launcher's own), and one line names the out-of-memory killer",
  tries: { short: 2, long: 10 },
  async run(i) {
    const pid1 = i % 2 === 1;
    const sent = `${WORKERS} workers of ${WORKER_MIB} MiB in ${POOL_LIMIT_MIB} MiB, ${where(pid1)}`;
    const group = cgroup('memory', { 'memory.limit_in_bytes': String(POOL_LIMIT_MIB * 2 ** 20) });
    if (group === undefined) return { sent, ok: false, got: 'no memory cgroup (v1) could be made here' };
    try {
      return await withScratch((scratch) =>
        withStandIn({}, async (sidecar) => {
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
            sent,
            ok: problems.length === 0 && status.code === 3 && acknowledged(sidecar) >= 1 && kills >= 1 && blamed.length === 1,
            got: joinGot([
              describeStatus(status),
              ...problems,
              `${released} of ${WORKERS} workers finished`,
              `${acknowledged(sidecar)} quit(s) acknowledged`,
              `${kills} out-of-memory kill(s)`,
              blamed.length === 1 ? 'the line names the out-of-memory killer' : `${blamed.length} line(s) name the out-of-memory killer`,
            ]),
          };
        }),
      );
    } finally {
      group.remove();
    }
  },
};

const nodeKilledDuringQuit: HostileCase = {
  name: 'the Node half killed during the quit',
  about:
    'classic mode, the job exits 0; the first quit hangs, and meanwhile the Node half is sent KILL: exit 0 (the job succeeded), ' +
    'and a quit is acknowledged all the same',
  tries: { short: 2, long: 20 },
  async run(i) {
    const pid1 = i % 2 === 1;
    return withStandIn({ quitScript: ['hang'] }, async (sidecar) => {
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
        sent: `KILL to the Node half during a hanging quit, ${where(pid1)}`,
        ok: node !== undefined && status.code === 0 && quits >= 1,
        got: joinGot([describeStatus(status), node === undefined && 'no Node half found', `${quits} quit(s) acknowledged`]),
      };
    });
  },
};

const closedStdio: HostileCase = {
  name: 'stdio closed at start',
  about:
    "the wrapper is exec'd with fds 0 and 2 closed (`<&- 2>&-`) or 1 and 2 (`>&- 2>&-`), classic mode, a job that exits 4: exit 4, " +
    'the quit acknowledged',
  tries: { short: 2, long: 20 },
  async run(i) {
    const closing = i % 2 === 0 ? '<&- 2>&-' : '>&- 2>&-';
    const pid1 = Math.floor(i / 2) % 2 === 1;
    return withStandIn({}, async (sidecar) => {
      const argv = ['/bin/sh', '-c', `exec "$@" ${closing}`, 'sh', WRAPPER, ...CLASSIC, '--', '/bin/sh', '-c', 'exit 4'];
      const status = await spawnHow(pid1Argv(pid1, argv), { timeoutMs: 8_000 }).status;
      const quits = acknowledged(sidecar);
      return {
        sent: `${closing}, ${where(pid1)}`,
        ok: status.code === 4 && quits === 1,
        got: joinGot([describeStatus(status), `${quits} quit(s) acknowledged`]),
      };
    });
  },
};

const softLimits: HostileCase = {
  name: 'soft data and stack limits',
  about:
    'a soft RLIMIT_DATA of 400000 KiB (`ulimit -S -d 400000`) or RLIMIT_STACK of 64 KiB (`ulimit -S -s 64`), the hard limit above ' +
    'it, classic mode: the job runs with its own soft limit (it prints it) and exits 7, the quit acknowledged',
  tries: { short: 2, long: 20 },
  async run(i) {
    const limits: [string, string, string, string][] = [
      ['ulimit -S -d 400000, hard unlimited', `--data=${400_000 * 1024}:unlimited`, 'd', '400000'],
      ['ulimit -S -s 64, hard unlimited', `--stack=${64 * 1024}:unlimited`, 's', '64'],
      ['ulimit -S -d 400000, hard 4 GiB', `--data=${400_000 * 1024}:${4 * 2 ** 30}`, 'd', '400000'],
      ['ulimit -S -s 64, hard 64 MiB', `--stack=${64 * 1024}:${64 * 2 ** 20}`, 's', '64'],
    ];
    const [what, option, letter, expected] = limits[i % limits.length] ?? limits[0]!;
    return withStandIn({}, async (sidecar) => {
      const job = ['/bin/sh', '-c', `echo "limit $(ulimit -S -${letter})"; exit 7`];
      const status = await spawnHow(['prlimit', option, '--', WRAPPER, ...CLASSIC, '--', ...job], { timeoutMs: 12_000 }).status;
      const quits = acknowledged(sidecar);
      const seen = status.stdout.match(/^limit (\S+)$/m)?.[1];
      const said = status.stderr.split('\n').filter((line) => line !== '');
      const first = (said.find((line) => line.startsWith('istio-job-run:')) ?? said[0])?.slice(0, 90);
      return {
        sent: what,
        ok: status.code === 7 && quits === 1 && seen === expected,
        got: joinGot([
          describeStatus(status),
          seen === undefined ? 'the job never ran' : seen === expected ? 'the job keeps its limit' : `the job's limit ${seen}`,
          `${quits} quit(s) acknowledged`,
          status.code !== 7 && first !== undefined && `stderr: ${JSON.stringify(first)}`,
        ]),
      };
    });
  },
};

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

const forgedExit: HostileCase = {
  name: "a forged line in the wrapper's channel",
  about:
    'wrapper and job run as UID 65534; the job opens every pipe of the Node half that leads to the launcher through /proc/PID/fd/N ' +
    'and writes `exit 0`, then ' +
    'exits 3 when told: the wrapper waits for it and exits 3, the quit acknowledged',
  tries: { short: 2, long: 20 },
  async run(i) {
    const pid1 = i % 2 === 1;
    const user = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'];
    return withStandIn({}, async (sidecar) => {
      const spawned = spawnHow(pid1Argv(pid1, [...user, bundleForAnyone(), ...CLASSIC, '--', '/bin/sh', '-c', FORGER]), {
        timeoutMs: 10_000,
      });
      const forged = await spawned.line(/^forged \d+$/).catch(() => undefined);
      spawned.helperProcess.stdin?.end('go\n');
      const status = await spawned.status;
      const quits = acknowledged(sidecar);
      return {
        sent: `as UID 65534, ${where(pid1)}`,
        ok: forged !== undefined && status.code === 3 && quits === 1,
        got: joinGot([
          describeStatus(status),
          forged === undefined ? 'no "forged" line: the job ended first' : `the job opened ${forged.split(' ')[1]} pipe(s)`,
          `${quits} quit(s) acknowledged`,
        ]),
      };
    });
  },
};

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

const groupSignals: HostileCase = {
  name: 'group signals reach the command once',
  about:
    'the command (the C helper, taking signals from a signalfd) sends TERM to its own process group (`kill 0`, `kill -TERM -- -$$`), or coreutils timeout passes ' +
    'a TERM or INT on to the wrapper and to its group; a PWR to the wrapper as a barrier: the command gets the signal exactly once ' +
    '(from timeout twice only if it was preempted between its two sends, as the command alone would), ' +
    'its own kill succeeds, and it exits 3 when told',
  tries: { short: GROUP_SENDS.length, long: GROUP_SENDS.length * 10 },
  async run(i) {
    const how = GROUP_SENDS[i % GROUP_SENDS.length] ?? GROUP_SENDS[0]!;
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
      sent: how.sent,
      ok: problems.length === 0 && count >= 1 && count <= (how.upTo ?? 1) && status.code === 3,
      got: joinGot([describeStatus(status), ...problems, `the command got ${how.signal.slice(3)} ${count} time(s)${preempted}`]),
    };
  },
};

const realTimeQueue: HostileCase = {
  name: 'queued real-time signals',
  about:
    'sigqueue(2) sends 20000 instances of real-time signal 39 to the wrapper as fast as it can, then one of 50; ' +
    'the command (the C helper, counting with sigwaitinfo until the 50) gets every instance of 39',
  tries: { short: 2, long: 20 },
  async run(i) {
    const pid1 = i % 2 === 1;
    const count = 20_000;
    const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, '--sidecar', 'none', '--', helper(), 'count', '39', '50']), { timeoutMs: 20_000 });
    let sent = 0;
    let problem: string | undefined;
    try {
      const pid = await target(spawned, pid1);
      await spawned.line(/^ready \d+$/);
      sent = Number((await exec(helper(), ['queue', String(pid), '39', String(count)])).stdout.match(/sent (\d+)/)?.[1] ?? 0);
      await exec(helper(), ['queue', String(pid), '50', '1']);
    } catch (error) {
      problem = (error as Error).message;
    }
    const status = await spawned.status;
    const got = Number(status.stdout.match(/^count (\d+)$/m)?.[1] ?? -1);
    return {
      sent: `${count} of signal 39, ${where(pid1)}`,
      ok: problem === undefined && sent === count && got === sent && status.code === 0,
      got: joinGot([
        describeStatus(status),
        problem,
        sent !== count && `only ${sent} queued`,
        got < 0
          ? 'the command never counted'
          : got === sent
            ? 'every instance forwarded'
            : sent - got < 1000
              ? `${sent - got} of ${sent} lost`
              : `about ${Math.round((sent - got) / 1000)}k of ${sent} lost`,
      ]),
    };
  },
};

const launcherJson: HostileCase = {
  name: "the launcher's own lines as JSON",
  about:
    'with --log-format json (or ISTIO_JOB_RUN_LOG_FORMAT=json): the Node half killed from outside while the command runs (classic ' +
    'mode, the job exits 3), or an open files limit of 16 (the launcher refuses, 125): every stderr line is a JSON object, and ' +
    'none blames the out-of-memory killer',
  tries: { short: 2, long: 20 },
  async run(i) {
    const refused = i % 2 === 1;
    return withStandIn({}, async (sidecar) => {
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
        sent: refused ? 'ISTIO_JOB_RUN_LOG_FORMAT=json, nofile 16' : '--log-format json, KILL to the Node half',
        ok: problem === undefined && status.code === expected && lines.length >= 1 && notJson.length === 0 && blamed.length === 0,
        got: joinGot([
          describeStatus(status),
          problem,
          lines.length === 0
            ? 'nothing on stderr'
            : notJson.length === 0
              ? 'every line JSON'
              : `not JSON: ${JSON.stringify(notJson[0]?.slice(0, 90))}`,
          blamed.length > 0 && 'blames the OOM killer',
          !refused && `${quits} quit(s) acknowledged`,
        ]),
      };
    });
  },
};

/** The suite, in the order it runs and is reported. */
export const HOSTILE_CASES: readonly HostileCase[] = [
  stopDuringStartUp,
  userSignalsDuringStartUp,
  floodAcrossExit,
  termStreamNotPid1,
  realTimeDeath,
  signalsDuringQuit,
  stalledStderr,
  closedStdout,
  brokenPreload,
  nodeVariables,
  environmentBytes,
  argumentBytes,
  orphansReaped,
  deletedCwd,
  failedReinstall,
  installWithoutDir,
  blackHoledDns,
  urlCredentials,
  terminal,
  ...LIMITS,
  ignoredSigchld,
  ctrlZ,
  backgroundRead,
  tostop,
  broadcastAsPid1,
  nodeKilledWhileRunning,
  oomTakesNode,
  nodeKilledDuringQuit,
  closedStdio,
  softLimits,
  forgedExit,
  groupSignals,
  realTimeQueue,
  launcherJson,
];

export function hostileCase(name: string): HostileCase {
  const found = HOSTILE_CASES.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no hostile case named ${JSON.stringify(name)}`);
  return found;
}
