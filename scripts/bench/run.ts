// What every part of the benchmark runs on: a copy of dist/, the timer of a whole process tree (rusage.c),
// processes with hard timeouts that leave nothing behind, and a stand-in proxy on loopback.

import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from '../root.ts';

export const MIB = 1024 ** 2;
export const PINNED_NODE = join(root, 'node_modules', `node-linux-${process.arch}`, 'bin', 'node');

/** The environment of every measured process: the bench's, without anything that configures the wrapper. */
function cleanEnv(): NodeJS.ProcessEnv {
  const keep = ([key]: [string, unknown]): boolean => !/^(ISTIO_JOB_RUN_|KUBERNETES_|NODE_OPTIONS$|ISTIO_QUIT_API$|ENVOY_)/.test(key);
  return Object.fromEntries(Object.entries(process.env).filter(keep));
}

export interface Build {
  readonly dir: string;
  readonly bundle: string;
  /** The launcher users run, and the single executable behind it. */
  readonly wrapper: string;
  readonly executable: string;
  readonly timer: string;
}

/** dist/bundle copied (a rebuild during the run changes nothing measured) and the timer compiled beside it. */
export function copyDist(): Build {
  const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-bench-'));
  const bundle = join(dir, 'bundle');
  cpSync(join(root, 'dist', 'bundle'), bundle, { recursive: true });
  const timer = join(dir, 'rusage');
  execFileSync('cc', ['-O2', '-Wall', '-Werror', '-o', timer, join(root, 'scripts', 'bench', 'rusage.c')], { stdio: 'inherit' });
  spawnSync('sync');
  const executable = join(bundle, 'istio-job-run.lib', 'istio-job-run');
  return { dir, bundle, wrapper: join(bundle, 'istio-job-run'), executable, timer };
}

export const discard = (build: Build | undefined): void => build && rmSync(build.dir, { recursive: true, force: true });

const live = new Set<ChildProcess>();
/** Every process group still running, killed (an interrupted or failed bench). */
export function killEverything(): void {
  for (const child of live) killGroup(child);
}
function killGroup(child: ChildProcess): void {
  try {
    process.kill(-(child.pid ?? 0), 'SIGKILL');
  } catch {
    // gone
  }
}

interface Ended {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** performance.now() at its exit. */
  readonly exitAt: number;
}

interface Running {
  readonly child: ChildProcess;
  /** Resolves when it ended with exit 0; rejects otherwise, or when the hard timeout killed its group. */
  readonly ended: Promise<Ended>;
}

/** A process in a group of its own, killed with its group after timeoutMs. */
export function launch(file: string, args: readonly string[], timeoutMs: number, stdin: 'pipe' | 'ignore' = 'ignore'): Running {
  const child = spawn(file, args, { stdio: [stdin, 'pipe', 'pipe'], detached: true, env: cleanEnv() });
  live.add(child);
  let stdout = '';
  let stderr = '';
  let exitAt = Number.NaN;
  // Only the first bytes are kept: a part that measures throughput reads the stream itself.
  child.stdout?.setEncoding('latin1').on('data', (chunk: string) => (stdout += stdout.length < 65_536 ? chunk : ''));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.on('exit', () => (exitAt = performance.now()));
  const what = [file, ...args].join(' ');
  const ended = new Promise<Ended>((resolve, reject) => {
    const timer = setTimeout(() => killGroup(child), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      if (code === 0) resolve({ code, stdout, stderr, exitAt });
      else
        reject(
          new Error(`${what}: ${code === null ? `killed by ${signal} (timeout ${timeoutMs} ms?)` : `exit ${code}`}; ${stderr.trim()}`),
        );
    });
  });
  ended.catch(() => undefined);
  return { child, ended };
}

interface Usage {
  readonly wallMs: number;
  /** user + sys of the whole tree: the process and every descendant waited for. */
  readonly cpuMs: number;
  /** The exit code, or 128 + N for a death by signal N. */
  readonly code: number;
  /** The largest resident set of any process of the tree, in KiB (wait4's ru_maxrss). */
  readonly maxRssKiB: number;
}

interface TimerOptions {
  /** cgroup.procs of a cgroup the program runs in from its first instruction. */
  readonly cgroupProcs?: string;
  /** Files dropped from the page cache first. */
  readonly evict?: readonly string[];
}

/** One run through the timer (stdin and stdout /dev/null), while the bench's event loop goes on. */
export async function timed(
  build: Build,
  file: string,
  args: readonly string[],
  options: TimerOptions = {},
  timeoutMs = 30_000,
): Promise<Usage> {
  const cgroup = options.cgroupProcs === undefined ? [] : ['--cgroup', options.cgroupProcs];
  const evict = (options.evict ?? []).flatMap((path) => ['--evict', path]);
  const { stdout } = await launch(build.timer, [...cgroup, ...evict, '--', file, ...args], timeoutMs).ended;
  const [wall = 0, user = 0, sys = 0, maxRss = 0, status = 0] = stdout.trim().split(' ').map(Number);
  const code = (status & 0x7f) === 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f);
  return { wallMs: wall / 1000, cpuMs: (user + sys) / 1000, code, maxRssKiB: maxRss };
}

/** A stand-in of istio-proxy on loopback: GET /healthz/ready 503 until ready, POST /quitquitquit as scripted, then 200. */
export class Proxy {
  readonly readyUrl: string;
  readonly quitUrl: string;
  readyRequests = 0;
  readonly quitAnswers: number[] = [];
  #readyAt = Number.POSITIVE_INFINITY;
  #quitScript: number[];
  #server: ReturnType<typeof createServer>;
  #firstPoll: Promise<void>;

  private constructor(server: ReturnType<typeof createServer>, quitScript: readonly number[]) {
    const { port } = server.address() as AddressInfo;
    this.readyUrl = `http://127.0.0.1:${port}/healthz/ready`;
    this.quitUrl = `http://127.0.0.1:${port}/quitquitquit`;
    this.#server = server;
    this.#quitScript = [...quitScript];
    this.#firstPoll = once(server, 'first-poll').then(() => undefined);
    server.on('request', (request, response) => {
      if (request.method === 'GET' && request.url === '/healthz/ready') {
        this.readyRequests += 1;
        if (this.readyRequests === 1) server.emit('first-poll');
        response.statusCode = performance.now() >= this.#readyAt ? 200 : 503;
      } else if (request.method === 'POST' && request.url === '/quitquitquit') {
        response.statusCode = this.#quitScript.shift() ?? 200;
        this.quitAnswers.push(response.statusCode);
      } else {
        response.statusCode = 404;
      }
      response.end();
    });
  }

  static async start(quitScript: readonly number[] = []): Promise<Proxy> {
    const server = createServer({ keepAliveTimeout: 5_000 }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    return new Proxy(server, quitScript);
  }

  /** Ready from now on, or in ms. */
  readyIn(ms = 0): void {
    this.#readyAt = performance.now() + ms;
  }
  /** Resolves at the first readiness request. */
  firstPoll(): Promise<void> {
    return this.#firstPoll;
  }
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    this.#server.close();
    await once(this.#server, 'close');
  }
}

/** The wrapper's arguments against a stand-in proxy: classic mode, quiet but for warnings. */
export const classicArgs = (proxy: Proxy, command: readonly string[]): string[] => [
  '--sidecar',
  'classic',
  '--log-level',
  'warn',
  '--ready-url',
  proxy.readyUrl,
  '--quit-url',
  proxy.quitUrl,
  '--',
  ...command,
];

/**
 * The seeds' shell recipe, with Debian's curl: poll readiness every second, run the command, ask the proxy to
 * quit. What a job without a wrapper does today.
 */
export const shellRecipe = (proxy: Proxy, command: string): string[] => [
  '-c',
  `until curl -fsS -o /dev/null ${proxy.readyUrl} 2>/dev/null; do sleep 1; done; ${command}; curl -fsS -o /dev/null -X POST ${proxy.quitUrl}`,
];

export const shuffled = <T>(items: readonly T[]): T[] =>
  items
    .map((item) => ({ item, key: Math.random() }))
    .sort((a, b) => a.key - b.key)
    .map(({ item }) => item);
