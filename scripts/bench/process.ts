// Processes for the bench: each in its own process group with a hard timeout that kills the whole group,
// all of them tracked so an interrupted bench leaves nothing behind.

import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanEnv } from '../../test/support/process.ts';

export { sleep };

export interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** performance.now() at the 'exit' event. */
  readonly exitAt: number;
}

export interface Launched {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly spawnedAt: number;
  /** Resolves once the process exited and its pipes closed; rejects if the hard timeout killed it. */
  readonly ended: Promise<Ended>;
  readonly stderr: () => string;
  /** Kills the process group if it still runs (cleanup after a failed run). */
  readonly kill: () => void;
}

const live = new Set<Launched>();

/** Kills a process group, ignoring one that is already gone. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Starts a process in a new process group; stderr is always kept for the error message. */
export function launch(
  file: string,
  args: readonly string[],
  stdio: readonly ['pipe' | 'ignore', 'pipe' | 'ignore'],
  timeoutMs: number,
): Launched {
  const spawnedAt = performance.now();
  const child = spawn(file, args, { stdio: [...stdio, 'pipe'] as StdioOptions, detached: true, env: cleanEnv() });
  const pid = child.pid;
  if (pid === undefined) {
    child.on('error', () => undefined); // reported here, not as an uncaught 'error' event
    throw new Error(`${describe(file, args)}: could not be started`);
  }
  const errors: Buffer[] = [];
  child.stderr?.on('data', (chunk: Buffer) => errors.push(chunk));
  const stderr = (): string => Buffer.concat(errors).toString().trim();
  let closed = false;
  let exitAt = Number.NaN;
  child.on('exit', () => (exitAt = performance.now()));

  const ended = new Promise<Ended>((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup(pid);
      reject(new Error(`${describe(file, args)}: still running after ${timeoutMs} ms; killed. stderr: ${stderr() || '(empty)'}`));
    }, timeoutMs);
    child.on('close', (code, signal) => {
      closed = true;
      clearTimeout(timer);
      live.delete(launched);
      resolve({ code, signal, exitAt });
    });
  });
  ended.catch(() => undefined);
  const kill = (): void => {
    if (!closed) killGroup(pid);
  };
  const launched: Launched = { child, pid, spawnedAt, ended, stderr, kill };
  live.add(launched);
  return launched;
}

/** Waits for a process to end and insists it ended well (exit 0). */
export async function succeeded(launched: Launched, what: string): Promise<Ended> {
  const end = await launched.ended;
  if (end.code !== 0) throw new Error(`${what}: exit ${end.code ?? end.signal}; stderr: ${launched.stderr() || '(empty)'}`);
  return end;
}

/** Resolves with `condition`, or rejects if the process ends (or is killed) first. */
export async function beforeEnd<T>(condition: Promise<T>, launched: Launched, what: string): Promise<T> {
  const ended = launched.ended.then((end): never => {
    throw new Error(`${what}: the process ended first (exit ${end.code ?? end.signal}); stderr: ${launched.stderr() || '(empty)'}`);
  });
  return Promise.race([condition, ended]);
}

/** Rejects after ms: for waits that have no process of their own to time out. */
export async function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  const controller = new AbortController();
  const deadline = sleep(ms, undefined, { signal: controller.signal }).then((): never => {
    throw new Error(`${what}: not done after ${ms} ms`);
  });
  deadline.catch(() => undefined);
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    controller.abort();
  }
}

/** Output of a short tool (git, sync), or undefined when it fails. */
export function toolOutput(file: string, args: readonly string[], timeoutMs: number): string | undefined {
  const result = spawnSync(file, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
  });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/** On an interrupted bench: kill every process group still running. */
export function killEverything(): void {
  for (const launched of live) launched.kill();
}

/** A command line as the error messages show it. */
export const describe = (file: string, args: readonly string[]): string => [file, ...args].join(' ');

/** The wrapper's arguments for one classic-mode run against a stand-in proxy: quiet but for warnings. */
export const classicArgs = (sidecar: { readonly readyUrl: string; readonly quitUrl: string }, command: readonly string[]): string[] => [
  '--sidecar',
  'classic',
  '--log-level',
  'warn',
  '--ready-url',
  sidecar.readyUrl,
  '--quit-url',
  sidecar.quitUrl,
  '--',
  ...command,
];
