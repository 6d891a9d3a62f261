// Tools of the adversarial suite (test/support/hostile/): a spawner that can hand a program what
// Node's spawn cannot (a blocked signal mask, raw environment bytes, a deleted working directory, a full
// stderr pipe, a closed stdout, a terminal), a signal flooder, a CPU load, resource limits (prlimit and
// cgroup v1 controllers), and probes for listeners and zombies (shell.ts has the interactive shell with job
// control). Each process has a hard timeout.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES } from '../process.ts';

const SOURCE = join(FIXTURES, 'hostile.c');
const HARD_TIMEOUT_MS = 20_000;

/** The helper binary, built from test/support/fixtures/hostile.c once per version of that file. */
export function helper(): string {
  const source = readFileSync(SOURCE);
  const dir = join(tmpdir(), `istio-job-run-hostile-${createHash('sha256').update(source).digest('hex').slice(0, 12)}`);
  const binary = join(dir, 'hostile');
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  const temp = `${binary}.${process.pid}`;
  execFileSync('gcc', ['-O2', '-Wall', '-o', temp, SOURCE], { stdio: ['ignore', 'ignore', 'inherit'] });
  renameSync(temp, binary);
  return binary;
}

export interface SpawnHow {
  /** Every signal blocked at exec, so an early one stays pending instead of being dropped. */
  readonly blockSignals?: boolean;
  /** The whole environment, as raw bytes (each `NAME=value`); else this process's plus `env`. */
  readonly rawEnv?: readonly Buffer[];
  readonly env?: Readonly<Record<string, string>>;
  /** A directory to start in and remove before exec. */
  readonly deletedCwd?: string;
  readonly stdout?: 'pipe' | 'closed-pipe';
  readonly stderr?: 'pipe' | 'stalled-pipe';
  /** stdin a terminal (the child leads a session with it as its controlling terminal). */
  readonly terminal?: boolean;
  /** The argv as raw bytes (any byte but NUL), in place of `argv`. */
  readonly rawArgv?: readonly Buffer[];
  readonly timeoutMs?: number;
}

export interface Status {
  /** As a shell shows it: the exit code, or 128+N for a death by signal N; undefined after a timeout. */
  readonly code: number | undefined;
  readonly timedOut: boolean;
  /** It ended, but processes it started were still running at the bound (they were killed then). */
  readonly leftover: boolean;
  /** The signal that killed it, if one did. */
  readonly killedBy: number | undefined;
  readonly stdout: string;
  readonly stdoutBytes: Buffer;
  readonly stderr: string;
  /** When it ended (performance.now()). */
  readonly endedAt: number;
}

export interface Spawned {
  /** The pid of ARGV[0]. */
  readonly pid: Promise<number>;
  readonly status: Promise<Status>;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line matching, or rejects when the process ends (or after timeoutMs). */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Bytes typed at the terminal (SpawnHow.terminal). */
  type(bytes: string): void;
  /** The stdin of ARGV[0] (not with a terminal). */
  readonly helperProcess: ChildProcess;
}

/** Starts ARGV through the helper, as `how` says. */
export function spawnHow(argv: readonly string[], how: SpawnHow = {}): Spawned {
  const options: string[] = [];
  if (how.blockSignals === true) options.push('-b');
  if (how.rawEnv !== undefined) {
    options.push('-E');
    for (const entry of how.rawEnv) options.push('-e', entry.toString('hex'));
  } else {
    for (const [name, value] of Object.entries(how.env ?? {})) options.push('-e', Buffer.from(`${name}=${value}`).toString('hex'));
  }
  if (how.deletedCwd !== undefined) options.push('-c', how.deletedCwd);
  if (how.stdout === 'closed-pipe') options.push('-o');
  if (how.stderr === 'stalled-pipe') options.push('-s');
  if (how.terminal === true) options.push('-t');
  if (how.rawArgv !== undefined) options.push('-x');
  const timeoutMs = how.timeoutMs ?? HARD_TIMEOUT_MS;
  options.push('-k', String(timeoutMs));
  const args = how.rawArgv === undefined ? argv : how.rawArgv.map((arg) => arg.toString('hex'));
  const child = spawn(helper(), ['spawn', ...options, '--', ...args], { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let report = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out.push(chunk);
    child.emit('output');
  });
  child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
  const control = child.stdio[3] as NodeJS.ReadableStream;
  control.setEncoding('utf8');
  control.on('data', (chunk: string) => {
    report += chunk;
    child.emit('report');
  });
  // The helper itself never outlives its own timeout by much; this is the net under it.
  const net = setTimeout(() => child.kill('SIGKILL'), timeoutMs + 5_000);
  const text = (chunks: Buffer[]): string => Buffer.concat(chunks).toString();
  const reported = async (pattern: RegExp): Promise<RegExpMatchArray | undefined> => {
    for (;;) {
      const match = report.match(pattern);
      if (match !== null) return match;
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      await Promise.race([once(child, 'report'), once(child, 'exit')]);
    }
  };
  const status = (async (): Promise<Status> => {
    await once(child, 'close');
    clearTimeout(net);
    const endedAt = performance.now();
    const exit = report.match(/^exit (\d+)$/m);
    const signal = report.match(/^signal (\d+)$/m);
    const code = exit !== null ? Number(exit[1]) : signal !== null ? 128 + Number(signal[1]) : undefined;
    return {
      code,
      timedOut: /^timeout$/m.test(report),
      leftover: /^leftover$/m.test(report),
      killedBy: signal === null ? undefined : Number(signal[1]),
      stdout: text(out),
      stdoutBytes: Buffer.concat(out),
      stderr: text(err),
      endedAt,
    };
  })();
  const pid = reported(/^pid (\d+)$/m).then((match) => {
    if (match === undefined) throw new Error(`the helper did not start ${argv[0]}: ${text(err)}`);
    return Number(match[1]);
  });
  pid.catch(() => undefined);
  return {
    pid,
    status,
    helperProcess: child,
    stdout: () => text(out),
    stderr: () => text(err),
    type: (bytes) => child.stdin?.write(`type ${Buffer.from(bytes).toString('hex')}\n`),
    async line(pattern, lineTimeoutMs = 10_000) {
      const deadline = performance.now() + lineTimeoutMs;
      for (;;) {
        const found = text(out)
          .split('\n')
          .find((candidate) => pattern.test(candidate));
        if (found !== undefined) return found;
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`no line matching ${pattern}: the process ended`);
        const left = deadline - performance.now();
        if (left <= 0) throw new Error(`no line matching ${pattern} within ${lineTimeoutMs} ms`);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([once(child, 'output'), once(child, 'exit'), new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
        clearTimeout(timer);
      }
    },
  };
}

/** The host PID of the first child of `pid` (PID 1 of the namespace `unshare --fork` made), once it exists and has exec'd `exe`. */
export async function childOf(pid: number, exe?: string, timeoutMs = 5_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      const first = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)[0];
      if (first !== undefined && first !== '' && (exe === undefined || readCmdline(Number(first))[0] === exe)) return Number(first);
    } catch {
      // not there yet, or gone
    }
    if (performance.now() > deadline)
      throw new Error(`no child of ${pid}${exe === undefined ? '' : ` running ${exe}`} within ${timeoutMs} ms`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const readCmdline = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

/** Every process under `pid` (its descendants), from /proc's children lists. */
export function tree(pid: number): number[] {
  const all: number[] = [];
  const visit = (at: number): void => {
    all.push(at);
    try {
      for (const task of readdirSync(`/proc/${at}/task`)) {
        for (const child of readFileSync(`/proc/${at}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean))
          visit(Number(child));
      }
    } catch {
      // gone meanwhile
    }
  };
  visit(pid);
  return all;
}

/** The state letter of a process (Z for a zombie), or undefined when it is gone. */
export function processState(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ')[0];
  } catch {
    return undefined;
  }
}

/** What listens on `port` in the network namespace of `pid` (from /proc/PID/net/tcp{,6}), as "addr:port" strings. */
export function listenersOf(pid: number, port: number): string[] {
  const found: string[] = [];
  for (const file of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${file}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [address, hexPort] = (fields[1] ?? '').split(':');
      if (fields[3] === '0A' && hexPort !== undefined && parseInt(hexPort, 16) === port) found.push(`${file}:${address}:${port}`);
    }
  }
  return found;
}

/** Whether a TCP connection to host:port is accepted (from this network namespace). */
export async function accepts(host: string, port: number): Promise<boolean> {
  const socket = createConnection({ host, port });
  try {
    await once(socket, 'connect');
    return true;
  } catch {
    return false;
  } finally {
    socket.destroy();
  }
}

/** Threads of these processes that only a started inspector has (Node names it InspectorIo). */
export function inspectorThreads(pids: readonly number[]): string[] {
  const names: string[] = [];
  for (const pid of pids) {
    try {
      for (const task of readdirSync(`/proc/${pid}/task`)) {
        const name = readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim();
        if (/InspectorIo/.test(name)) names.push(`${pid}/${task}:${name}`);
      }
    } catch {
      // gone meanwhile
    }
  }
  return names;
}

/**
 * A flood of one signal at a pid from the C helper. `started` resolves once `warmup` signals are out (the
 * flood is at full rate); stop() ends it and resolves with the count sent.
 */
export function flood(pid: number, signal: number, gapMicros = 0, warmup = 1): { started: Promise<void>; stop(): Promise<number> } {
  const child = spawn(helper(), ['flood', String(pid), String(signal), String(gapMicros), String(warmup)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const closed = once(child, 'close').catch(() => undefined);
  const started = new Promise<void>((resolve) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('started')) resolve();
    });
    void closed.then(() => resolve());
  });
  const net = setTimeout(() => child.kill('SIGKILL'), HARD_TIMEOUT_MS);
  return {
    started,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await closed;
      clearTimeout(net);
      return Number(out.match(/sent (\d+)/)?.[1] ?? 0);
    },
  };
}

/** A busy loop per core, for the length of body: start-up windows widen on a loaded machine. */
export async function underLoad<T>(loaded: boolean, body: () => Promise<T>): Promise<T> {
  if (!loaded) return body();
  const loops = cpus().map(() => spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
  try {
    return await body();
  } finally {
    for (const loop of loops) loop.kill('SIGKILL');
  }
}

/** A cgroup v1 controller group of its own (`pids`, `memory`), with its settings; argv prefix to enter it. */
export function cgroup(
  controller: 'pids' | 'memory',
  settings: Readonly<Record<string, string>>,
): { prefix: string[]; remove(): void } | undefined {
  const base = join('/sys/fs/cgroup', controller);
  if (!existsSync(join(base, 'cgroup.procs'))) return undefined;
  const dir = join(base, `istio-job-run-hostile-${process.pid}-${Math.floor(Math.random() * 1e9)}`);
  try {
    mkdirSync(dir);
    for (const [file, value] of Object.entries(settings)) writeFileSync(join(dir, file), value);
  } catch {
    return undefined;
  }
  return {
    prefix: ['/bin/sh', '-c', `echo $$ > ${join(dir, 'cgroup.procs')} && exec "$@"`, 'sh'],
    remove: () => {
      try {
        rmdirSync(dir);
      } catch {
        // still busy: a test failure already reported; the kernel frees it once its processes end
      }
    },
  };
}

/** Why the suite cannot run here (root, namespaces, a C compiler), or undefined. */
export function hostileUnavailable(): string | undefined {
  try {
    execFileSync('unshare', ['--net', '--pid', '--fork', '--mount-proc', 'ip', 'link', 'set', 'lo', 'up'], { stdio: 'ignore' });
  } catch {
    return 'needs root, unshare and ip (network and PID namespaces)';
  }
  try {
    helper();
    return undefined;
  } catch {
    return 'needs gcc to build test/support/fixtures/hostile.c';
  }
}
