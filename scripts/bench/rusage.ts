// The bench's timer (rusage.c): wall time and the CPU time of a whole process tree (wait4's rusage), which
// Node cannot give. Built once per run with the machine's C compiler, into the run's copy of dist/.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { cleanEnv } from '../../test/support/process.ts';
import { root } from '../pinned-node.ts';
import { describe } from './process.ts';
import { TIMEOUT_MS } from './settings.ts';

export interface Usage {
  readonly wallMs: number;
  /** user + sys of the process and every descendant it waited for. */
  readonly cpuMs: number;
  /** The largest single process of the tree (ru_maxrss). */
  readonly maxRssMiB: number;
  /** Exit code, or 128 + N for a death by signal N. */
  readonly code: number;
}

export interface RunOptions {
  /** cgroup.procs of the cgroup the command runs in, from its first instruction. */
  readonly cgroupProcs?: string;
  /** Files dropped from the page cache first. */
  readonly evict?: readonly string[];
}

/** Compiles rusage.c into DIR; the helper's path. */
export function buildTimer(dir: string): string {
  const out = join(dir, 'rusage');
  execFileSync('cc', ['-O2', '-Wall', '-Wextra', '-Werror', '-o', out, join(root, 'scripts', 'bench', 'rusage.c')], { stdio: 'inherit' });
  return out;
}

function helperArgs(file: string, args: readonly string[], options: RunOptions): string[] {
  const cgroup = options.cgroupProcs === undefined ? [] : ['--cgroup', options.cgroupProcs];
  const evict = (options.evict ?? []).flatMap((path) => ['--evict', path]);
  return [...cgroup, ...evict, '--', file, ...args];
}

function parse(line: string, what: string): Usage {
  const fields = line.trim().split(' ').map(Number);
  if (fields.length !== 5 || fields.some((n) => !Number.isFinite(n))) throw new Error(`${what}: the timer said ${JSON.stringify(line)}`);
  const [wall = 0, user = 0, sys = 0, maxRss = 0, status = 0] = fields;
  const code = (status & 0x7f) === 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f);
  return { wallMs: wall / 1000, cpuMs: (user + sys) / 1000, maxRssMiB: maxRss / 1024, code };
}

/** One run, blocking (nothing of the bench has to answer meanwhile). */
export function usageSync(timer: string, file: string, args: readonly string[], options: RunOptions = {}): Usage {
  const what = describe(file, args);
  const result = spawnSync(timer, helperArgs(file, args, options), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: cleanEnv(),
    timeout: TIMEOUT_MS.startup,
    killSignal: 'SIGKILL',
  });
  if (result.error !== undefined) throw new Error(`${what}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${what}: the timer failed: ${result.stderr.trim()}`);
  return parse(result.stdout, what);
}

/** One run while the bench's event loop goes on (a stand-in proxy of the bench must answer it). */
export async function usage(
  timer: string,
  file: string,
  args: readonly string[],
  options: RunOptions,
  timeoutMs: number,
): Promise<Usage & { stderr: string }> {
  const what = describe(file, args);
  const child = spawn(timer, helperArgs(file, args, options), { stdio: ['ignore', 'pipe', 'pipe'], env: cleanEnv(), detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer_ = setTimeout(() => {
    try {
      process.kill(-(child.pid ?? 0), 'SIGKILL');
    } catch {
      // gone
    }
  }, timeoutMs);
  try {
    const [status, signal] = (await once(child, 'close')) as [number | null, string | null];
    if (status !== 0) throw new Error(`${what}: the timer ended with ${status ?? signal} (timeout ${timeoutMs} ms?): ${stderr.trim()}`);
  } finally {
    clearTimeout(timer_);
  }
  return { ...parse(stdout, what), stderr: stderr.trim() };
}
