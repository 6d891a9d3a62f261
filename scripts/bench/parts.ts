// The parts of the benchmark, each returning its raw samples. Variants of a part are interleaved: each round
// runs every variant once, in a random order, so all of them see the same load.

import { once } from 'node:events';
import { copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Build, classicArgs, launch, MIB, PINNED_NODE, Proxy, shellRecipe, shuffled, timed } from './run.ts';

type Samples = Record<string, number[]>;
const push = (samples: Samples, key: string, value: number): void => void (samples[key] ??= []).push(value);

/** Start-up: the wrapper with no sidecar and its floors; wall and CPU of the whole tree, after 2 warm-up rounds. */
export async function startup(build: Build, rounds: number): Promise<{ wall: Samples; cpu: Samples }> {
  const variants: [string, string, string[]][] = [
    ['wrapper', build.wrapper, ['--sidecar', 'none', '--', 'true']],
    ['node', PINNED_NODE, ['-e', '0']],
    ['tini', 'tini', ['--', 'true']],
    ['true', 'true', []],
  ];
  const wall: Samples = {};
  const cpu: Samples = {};
  for (let round = -2; round < rounds; round++) {
    for (const [id, file, args] of shuffled(variants)) {
      const used = await timed(build, file, args);
      if (used.code !== 0) throw new Error(`start-up, ${id}: exit ${used.code}`);
      if (round < 0) continue;
      push(wall, id, used.wallMs);
      push(cpu, id, used.cpuMs);
    }
  }
  return { wall, cpu };
}

/** CPU of a whole classic job (`-- true`), the proxy ready readyMs after the job starts, against node -e 0 and the shell recipe. */
export async function jobCpu(build: Build, readyMs: number, rounds: number): Promise<Samples> {
  const cpu: Samples = {};
  for (let round = 0; round < rounds; round++) {
    for (const id of shuffled(['wrapper', 'shell', 'node'])) {
      if (id === 'node') {
        push(cpu, id, (await timed(build, PINNED_NODE, ['-e', '0'])).cpuMs);
        continue;
      }
      const proxy = await Proxy.start();
      try {
        proxy.readyIn(readyMs);
        const [file, args] = id === 'wrapper' ? [build.wrapper, classicArgs(proxy, ['true'])] : ['sh', shellRecipe(proxy, 'true')];
        const used = await timed(build, file, args, {}, readyMs + 30_000);
        if (used.code !== 0 || proxy.quitAnswers.length !== 1)
          throw new Error(`job CPU, ${id}: exit ${used.code}, ${proxy.quitAnswers.length} quits`);
        push(cpu, id, used.cpuMs);
      } finally {
        await proxy.close();
      }
    }
  }
  return cpu;
}

/** The job of the latency and memory parts: says it started, waits for a line on stdin, says it ends. */
const JOB = 'echo start; read _; echo end';
/** `pilot-agent wait` (pilot/cmd/pilot-agent/app/wait.go): sleep one period, GET with a timeout, ready on 200. */
export const PILOT_AGENT_WAIT = { periodMs: 500, requestTimeoutMs: 500 } as const;
/** The proxy turns ready uniformly within this span after the first readiness request: every poll phase is sampled. */
export const READY_SPAN_MS = 500;

/** Turns the proxy ready at a random moment after its first readiness request; resolves with that moment. */
const readyAtRandom = (proxy: Proxy): Promise<number> =>
  proxy.firstPoll().then(async () => {
    await sleep(Math.random() * READY_SPAN_MS);
    proxy.readyIn(0);
    return performance.now();
  });

/** The job, directly or under a waiter: its first stdout byte (stdin then released), and its last byte to the exit. */
async function runJob(file: string, args: readonly string[]): Promise<{ startAt: number; quitMs: number }> {
  const job = launch(file, args, 30_000, 'pipe');
  const stdout = job.child.stdout as Readable;
  let lastByte = Number.NaN;
  stdout.on('data', () => (lastByte = performance.now()));
  const first = once(stdout, 'data').then(() => {
    job.child.stdin?.end('\n');
    return performance.now();
  });
  const end = await job.ended;
  return { startAt: await first, quitMs: end.exitAt - lastByte };
}

/** `pilot-agent wait` simulated in the bench against the same stand-in, then the job started directly. */
async function pilotAgentWait(proxy: Proxy): Promise<void> {
  for (;;) {
    await sleep(PILOT_AGENT_WAIT.periodMs);
    const ok = await fetch(proxy.readyUrl, { signal: AbortSignal.timeout(PILOT_AGENT_WAIT.requestTimeoutMs) }).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ok) return;
  }
}

/** Ready -> command start and command end -> exit: the wrapper (quit answered at once, or 503 twice first), pilot-agent wait, the shell recipe. */
export async function latency(
  build: Build,
  rounds: number,
  progress: (done: number) => void,
): Promise<{ detection: Samples; quit: Samples }> {
  const detection: Samples = {};
  const quit: Samples = {};
  for (let round = 0; round < rounds; round++) {
    for (const id of shuffled(['quit-200', 'quit-503x2', 'pilot-agent', 'shell'])) {
      const proxy = await Proxy.start(id === 'quit-503x2' ? [503, 503] : []);
      try {
        const ready = readyAtRandom(proxy);
        let job: { startAt: number; quitMs: number };
        if (id === 'pilot-agent') {
          await pilotAgentWait(proxy);
          job = await runJob('sh', ['-c', JOB]);
        } else if (id === 'shell') {
          job = await runJob('sh', shellRecipe(proxy, `sh -c '${JOB}'`));
        } else {
          job = await runJob(build.wrapper, classicArgs(proxy, ['sh', '-c', JOB]));
        }
        push(detection, id, job.startAt - (await ready));
        if (id !== 'pilot-agent') push(quit, id, job.quitMs);
        const expected = id === 'quit-503x2' ? '503,503,200' : id === 'pilot-agent' ? '' : '200';
        if (proxy.quitAnswers.join() !== expected)
          throw new Error(`latency, ${id}: quits answered ${proxy.quitAnswers.join()}, expected ${expected}`);
      } finally {
        await proxy.close();
      }
    }
    progress(round + 1);
  }
  return { detection, quit };
}

/** stdout: `head -c BYTES /dev/zero` into a pipe the bench drains, alone and as the wrapper's command; MiB/s from first byte to last. */
export async function stdout(build: Build, rounds: number, bytes: number): Promise<Samples> {
  const rates: Samples = {};
  const head = ['head', '-c', String(bytes), '/dev/zero'];
  for (let round = 0; round < rounds; round++) {
    for (const id of shuffled(['direct', 'wrapper'])) {
      const [file, args] = id === 'direct' ? ['head', head.slice(1)] : [build.wrapper, ['--sidecar', 'none', '--', ...head]];
      const writer = launch(file, args, 180_000);
      let received = 0;
      let firstChunk = 0;
      let firstAt = 0;
      let lastAt = 0;
      writer.child.stdout?.removeAllListeners('data').on('data', (chunk: Buffer) => {
        lastAt = performance.now();
        if (received === 0) [firstAt, firstChunk] = [lastAt, chunk.length];
        received += chunk.length;
      });
      await writer.ended;
      if (received !== bytes) throw new Error(`stdout, ${id}: ${received} bytes arrived, ${bytes} were written`);
      push(rates, id, (received - firstChunk) / MIB / ((lastAt - firstAt) / 1000));
    }
  }
  return rates;
}

const statusMiB = (pid: number, field: string): number =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024;

/** Memory of launcher + Node (the launcher's child through the bundled loader) while the command waits: 5 samples 50 ms apart. */
export async function memory(build: Build, rounds: number): Promise<Samples> {
  const samples: Samples = {};
  for (let round = 0; round < rounds; round++) {
    for (const mode of shuffled(['none', 'classic'])) {
      const proxy = mode === 'classic' ? await Proxy.start() : undefined;
      proxy?.readyIn(0);
      const args = proxy === undefined ? ['--sidecar', 'none', '--', 'sh', '-c', JOB] : classicArgs(proxy, ['sh', '-c', JOB]);
      const job = launch(build.wrapper, args, 20_000, 'pipe');
      try {
        await once(job.child.stdout as Readable, 'data');
        const launcher = job.child.pid ?? 0;
        const children = readFileSync(`/proc/${launcher}/task/${launcher}/children`, 'utf8').trim().split(' ').map(Number);
        // Node is the child the launcher started through the bundle's loader; the other one is the command.
        const node = children.find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').includes('--library-path'));
        if (node === undefined) throw new Error('memory: the launcher has no child running the bundled loader');
        const both = (field: string): number => statusMiB(launcher, field) + statusMiB(node, field);
        let peak = 0;
        for (let i = 0; i < 5; i++) {
          if (i > 0) await sleep(50);
          push(samples, `${mode}-anon`, both('RssAnon'));
          peak = Math.max(peak, both('VmHWM'));
        }
        push(samples, `${mode}-peak`, peak);
        job.child.stdin?.end('\n');
        await job.ended;
      } finally {
        await proxy?.close();
      }
    }
  }
  return samples;
}

export const LIMITS_MIB = [48, 40, 32, 28, 24, 20, 16] as const;
const COLD_LIMIT_MIB = 64;
/** Normal speed: every run exits 0 and the median wall time is within this factor of the runs without a limit. */
export const NORMAL_SPEED_FACTOR = 2;

interface Cgroup {
  readonly procs: string;
  remove(): void;
}

/** A memory cgroup of its own without swap: v1 memory.limit_in_bytes, or v2 memory.max beside the bench's own. */
function memoryCgroup(limitMiB: number): Cgroup {
  const bytes = String(limitMiB * MIB);
  const name = `istio-job-run-bench-${process.pid}-${limitMiB}`;
  if (existsSync('/sys/fs/cgroup/memory/memory.limit_in_bytes')) {
    const dir = join('/sys/fs/cgroup/memory', name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'memory.limit_in_bytes'), bytes);
    if (existsSync(join(dir, 'memory.memsw.limit_in_bytes'))) writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), bytes);
    return { procs: join(dir, 'cgroup.procs'), remove: () => rmdirSync(dir) };
  }
  const self = /^0::(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
  if (self === undefined || !readFileSync('/sys/fs/cgroup/cgroup.controllers', 'utf8').includes('memory'))
    throw new Error('no memory cgroup');
  const dir = join('/sys/fs/cgroup', self, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'memory.max'), bytes);
  if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
  return { procs: join(dir, 'cgroup.procs'), remove: () => rmdirSync(dir) };
}

interface LimitStep {
  /** undefined: no limit (the reference). */
  readonly limitMiB: number | undefined;
  readonly wallMs: number[];
  readonly codes: number[];
  readonly normal: boolean;
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/** One classic `-- true` in the cgroup given; cold: every file of the bundle out of the page cache first. */
async function classicRun(build: Build, cgroup: Cgroup | undefined, cold = false): Promise<{ wallMs: number; code: number }> {
  const proxy = await Proxy.start();
  proxy.readyIn(0);
  const evict = cold
    ? readdirSync(build.bundle, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath, e.name))
    : [];
  try {
    return await timed(build, build.wrapper, classicArgs(proxy, ['true']), { evict, ...(cgroup && { cgroupProcs: cgroup.procs }) }, 20_000);
  } catch {
    return { wallMs: Number.NaN, code: -1 }; // killed at the timeout: not normal speed
  } finally {
    await proxy.close();
  }
}

/** Smaller and smaller memory limits until one is not at normal speed; then the cold case, for the wrapper and node -e 0. */
export async function memoryLimit(build: Build, runsPerStep: number, progress: (text: string) => void) {
  try {
    memoryCgroup(LIMITS_MIB[0]).remove();
  } catch (error) {
    return { steps: [] as LimitStep[], smallestMiB: undefined, cold: [] as [string, number][], error: String(error) };
  }
  await classicRun(build, undefined); // brings the executable's pages into the page cache
  const steps: LimitStep[] = [];
  let smallestMiB: number | undefined;
  for (const limitMiB of [undefined, ...LIMITS_MIB]) {
    const cgroup = limitMiB === undefined ? undefined : memoryCgroup(limitMiB);
    const runs = [];
    try {
      for (let i = 0; i < runsPerStep; i++) runs.push(await classicRun(build, cgroup));
    } finally {
      cgroup?.remove();
    }
    const wallMs = runs.map((run) => run.wallMs);
    const reference = steps[0] === undefined ? Number.POSITIVE_INFINITY : median(steps[0].wallMs) * NORMAL_SPEED_FACTOR;
    const normal = runs.every((run) => run.code === 0) && median(wallMs) <= reference;
    steps.push({ limitMiB, wallMs, codes: runs.map((run) => run.code), normal });
    progress(
      `  ${limitMiB === undefined ? 'no limit' : `${limitMiB} MiB`}: ${wallMs.map((ms) => ms.toFixed(0)).join(', ')} ms: ${normal ? 'normal' : 'not normal'}`,
    );
    if (!normal) break;
    if (limitMiB !== undefined) smallestMiB = limitMiB;
  }
  const cold: [string, number][] = [];
  // A copy: the bench runs on the pinned binary itself, whose pages it maps cannot be dropped.
  const node = join(build.dir, 'node');
  copyFileSync(PINNED_NODE, node);
  for (const limitMiB of [undefined, COLD_LIMIT_MIB]) {
    const cgroup = limitMiB === undefined ? undefined : memoryCgroup(limitMiB);
    const at = limitMiB === undefined ? 'no limit' : `${limitMiB} MiB`;
    try {
      cold.push([`istio-job-run, classic, -- true, ${at}`, (await classicRun(build, cgroup, true)).wallMs]);
      const node = await timed(
        build,
        PINNED_NODE,
        ['-e', '0'],
        { evict: [PINNED_NODE], ...(cgroup && { cgroupProcs: cgroup.procs }) },
        20_000,
      ).catch(() => undefined);
      cold.push([`node -e 0, ${at}`, node?.wallMs ?? Number.NaN]);
    } finally {
      cgroup?.remove();
    }
  }
  return { steps, smallestMiB, cold, error: undefined };
}

/** Bytes of the executable and of the bundle, on disk and through gzip -LEVEL (the bundle as a tarball, as it ships). */
export async function size(build: Build, level: number): Promise<Record<string, number>> {
  const gzipped = async (script: string): Promise<number> => {
    const run = launch('sh', ['-c', `${script} | gzip -${level} -c | wc -c`], 300_000);
    return Number((await run.ended).stdout.trim());
  };
  const files = readdirSync(build.bundle, { recursive: true, withFileTypes: true }).filter((entry) => !entry.isDirectory());
  const [executableGzip, bundleGzip] = await Promise.all([
    gzipped(`cat '${build.executable}'`),
    gzipped(`tar -cf - -C '${build.bundle}' .`),
  ]);
  return {
    executable: lstatSync(build.executable).size,
    executableGzip,
    bundle: files.reduce((sum, entry) => sum + lstatSync(join(entry.parentPath, entry.name)).size, 0),
    bundleGzip,
    bundleFiles: files.length,
  };
}
