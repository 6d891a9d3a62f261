// Running real processes in tests: the built executable, with a clean environment, a hard timeout so a
// hang fails instead of stalling CI, and waits on output lines rather than sleeps.

import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCUTTLE_VARIABLES } from '../../src/config/scuttle.ts';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** What users run: the portable bundle, its launcher in front of Node (dist/istio-job-run links to it). */
export const WRAPPER = join(root, 'dist', 'istio-job-run');
/** The single executable alone, without the launcher: for development, without the launcher's guarantees. */
export const PLAIN_EXECUTABLE = join(root, 'dist', 'bundle', 'istio-job-run.lib', 'istio-job-run');
export const FIXTURES = join(root, 'test', 'support', 'fixtures');
/** The pinned Node that runs the tests; fixtures run on it too. */
export const NODE = process.execPath;
export const REPORTER = join(FIXTURES, 'reporter.mjs');

const HARD_TIMEOUT_MS = 20_000;
/** After the hard timeout, how long what is still in the output pipes has to arrive before they are let go. */
const PIPE_GRACE_MS = 1_000;

/**
 * The environment without anything that would steer the wrapper from outside the test, nor the test runner's
 * mark of its own children (a node --test started with it reports in the runner's binary form).
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('ISTIO_JOB_RUN_') || key.startsWith('KUBERNETES_') || key === 'NODE_OPTIONS' || key === 'NODE_TEST_CONTEXT')
      continue;
    if ((SCUTTLE_VARIABLES as readonly string[]).includes(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

export interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutBytes: Buffer;
}

export interface Running {
  readonly process: ChildProcess;
  readonly pid: number;
  /** Resolves with the first line (stdout or stderr) that matches. */
  line(pattern: RegExp, stream?: 'stdout' | 'stderr'): Promise<string>;
  /** Resolves once predicate() holds, checked whenever output arrives. */
  until(predicate: () => boolean, what: string): Promise<void>;
  readonly finished: Promise<Finished>;
  stdout(): string;
  stderr(): string;
}

/** Starts a process with piped stdio (stdin stays open for the test to write). */
export function start(file: string, args: readonly string[], options: SpawnOptions & { timeoutMs?: number } = {}): Running {
  const child = spawn(file, args, { env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'], ...options });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const events = new EventEmitter();
  // A process that exits without reading its stdin makes the test's write fail with EPIPE: that is the process's
  // choice, and what it did is judged from its exit and output, not from the write.
  child.stdin?.on('error', () => {});
  child.stdout?.on('data', (chunk: Buffer) => {
    out.push(chunk);
    events.emit('data');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err.push(chunk);
    events.emit('data');
  });
  const timeoutMs = options.timeoutMs ?? HARD_TIMEOUT_MS;
  // What the hard timeout found: the process still running (killed), or ended with its output still held open by
  // a process it left behind. Either way the output pipes are let go soon after, so the test fails instead of
  // waiting for that process for good.
  let timedOut: 'running' | 'held' | undefined;
  let release: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    const ended = child.exitCode !== null || child.signalCode !== null;
    timedOut = ended ? 'held' : 'running';
    child.kill('SIGKILL');
    const letGo = (): void => {
      release = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, PIPE_GRACE_MS);
    };
    if (ended) letGo();
    else child.once('exit', letGo);
  }, timeoutMs);

  const finished = (async (): Promise<Finished> => {
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    clearTimeout(timer);
    clearTimeout(release);
    events.emit('data');
    const stdoutBytes = Buffer.concat(out);
    const result = { code, signal, stdout: stdoutBytes.toString(), stderr: Buffer.concat(err).toString(), stdoutBytes };
    const what = `${file} ${args.join(' ')}`;
    if (timedOut === 'running') throw new Error(`${what}: still running after ${timeoutMs}ms; killed.\nstderr:\n${result.stderr}`);
    if (timedOut === 'held')
      throw new Error(
        `${what}: ended (${signal ?? code}), but a process it left behind still held its output after ${timeoutMs}ms.\nstderr:\n${result.stderr}`,
      );
    return result;
  })();
  finished.catch(() => undefined);

  const text = (stream: 'stdout' | 'stderr'): string => Buffer.concat(stream === 'stdout' ? out : err).toString();
  let closed = false;
  finished
    .finally(() => {
      closed = true;
      events.emit('data');
    })
    .catch(() => undefined);

  return {
    process: child,
    pid: child.pid ?? -1,
    finished,
    stdout: () => text('stdout'),
    stderr: () => text('stderr'),
    async until(predicate, what) {
      while (!predicate()) {
        if (closed) throw new Error(`${what}: not before the process ended.\nstdout:\n${text('stdout')}\nstderr:\n${text('stderr')}`);
        await once(events, 'data');
      }
    },
    async line(pattern, stream) {
      for (;;) {
        const streams: ('stdout' | 'stderr')[] = stream === undefined ? ['stdout', 'stderr'] : [stream];
        for (const name of streams) {
          const found = text(name)
            .split('\n')
            .find((candidate) => pattern.test(candidate));
          if (found !== undefined) return found;
        }
        if (closed)
          throw new Error(`no line matching ${pattern} before the process ended.\nstdout:\n${text('stdout')}\nstderr:\n${text('stderr')}`);
        await once(events, 'data');
      }
    },
  };
}

/**
 * Python, making its stdin a terminal (a pty nobody controls; its other end stays open, or the terminal is hung up),
 * then running the rest of its arguments with SIGPIPE back to its default action (Python ignores it).
 */
const ON_A_TERMINAL = [
  'import os, pty, signal, sys',
  'master, slave = pty.openpty()',
  'os.set_inheritable(master, True)',
  'os.dup2(slave, 0)',
  'signal.signal(signal.SIGPIPE, signal.SIG_DFL)',
  'os.execvp(sys.argv[1], sys.argv[1:])',
].join('; ');

/** The file and arguments that run ARGV with its stdin a terminal (Python, which execs ARGV in its place). */
export const onATerminal = (argv: readonly string[]): [string, string[]] => ['/usr/bin/python3', ['-c', ON_A_TERMINAL, ...argv]];

/** The host PID of the process that `unshare --fork` started: PID 1 of the new PID namespace. */
export function pidOne(unsharePid: number): number {
  const children = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim().split(/\s+/);
  const pid = Number(children[0]);
  // Not forked yet: no pid, and never 0, which kill(2) reads as the caller's own process group.
  if (!(pid > 1)) throw new Error(`unshare (pid ${unsharePid}) has not started its child yet`);
  return pid;
}

/** Runs the wrapper to completion. */
export function wrapper(args: readonly string[], options: SpawnOptions & { timeoutMs?: number } = {}): Running {
  return start(WRAPPER, args, options);
}

export async function run(args: readonly string[], options: SpawnOptions & { timeoutMs?: number; input?: string } = {}): Promise<Finished> {
  const running = wrapper(args, options);
  running.process.stdin?.end(options.input ?? '');
  return running.finished;
}
