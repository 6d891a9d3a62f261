// The smallest memory limit the wrapper runs at normal speed under: the wrapper in classic mode (a stand-in
// proxy ready at once, `-- true`) inside a memory cgroup of its own, at smaller and smaller limits.
// Judged with the executable's pages already in the page cache (read by the runs without a limit, so charged
// to the bench's cgroup, not the job's): a node that ran the image before, the runtime suite's condition.
// Then the cold case beside Node itself: the bundle's files (and the pinned Node) dropped from the page cache
// first, so the job's cgroup is charged for every page of the executable it reads: at too small a limit those
// pages are read again and again (slow) - `node -e 0` as much as the wrapper.

import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Sidecar } from '../../test/support/sidecar.ts';
import { classicArgs } from './process.ts';
import { usage, type Usage } from './rusage.ts';
import { LIMIT, MIB, PINNED_NODE_BINARY, TIMEOUT_MS } from './settings.ts';
import type { Build } from './snapshot.ts';
import { round2 } from './stats.ts';

export interface LimitStep {
  /** undefined: no limit (the reference). */
  readonly limitMiB: number | undefined;
  /** Wall ms per run; NaN for a run that failed or was killed. */
  readonly wallMs: number[];
  readonly codes: number[];
  readonly normal: boolean;
}

export interface ColdProbe {
  readonly label: string;
  readonly limitMiB: number | undefined;
  readonly wallMs: number;
  readonly code: number;
}

export interface LimitResult {
  /** Which cgroup interface was used, or why none could be. */
  readonly cgroup: string;
  readonly steps: LimitStep[];
  /** The smallest limit of the steps down from the largest that all ran at normal speed. */
  readonly smallestMiB: number | undefined;
  /** Page cache dropped first: the wrapper and node -e 0 without a limit and at LIMIT.coldProbeMiB. */
  readonly cold: ColdProbe[];
}

interface MemoryCgroup {
  readonly kind: string;
  readonly procs: string;
  remove(): void;
}

/** The bench's own cgroup v2 directory, when a cgroup2 hierarchy with the memory controller is mounted. */
function v2Parent(): string | undefined {
  const self = /^0::(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
  for (const mount of ['/sys/fs/cgroup', '/sys/fs/cgroup/unified']) {
    const controllers = join(mount, 'cgroup.controllers');
    if (self !== undefined && existsSync(controllers) && readFileSync(controllers, 'utf8').split(/\s+/).includes('memory')) {
      return join(mount, self);
    }
  }
  return undefined;
}

/** A memory cgroup of its own with a limit: cgroup v1 (memory.limit_in_bytes) or v2 (memory.max); no swap. */
function memoryCgroup(limitBytes: number): MemoryCgroup {
  const name = `istio-job-run-bench-${process.pid}-${limitBytes}`;
  const v1 = '/sys/fs/cgroup/memory';
  if (existsSync(join(v1, 'memory.limit_in_bytes'))) {
    const dir = join(v1, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'memory.limit_in_bytes'), String(limitBytes));
    if (existsSync(join(dir, 'memory.memsw.limit_in_bytes'))) writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), String(limitBytes));
    return {
      kind: 'cgroup v1, memory.limit_in_bytes (and memory.memsw.limit_in_bytes: no swap)',
      procs: join(dir, 'cgroup.procs'),
      remove: () => rmdirSync(dir),
    };
  }
  const parent = v2Parent();
  if (parent === undefined)
    throw new Error('no memory cgroup: neither v1 memory.limit_in_bytes nor a v2 hierarchy with the memory controller');
  const dir = join(parent, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'memory.max'), String(limitBytes));
  if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
  return { kind: 'cgroup v2, memory.max (and memory.swap.max 0)', procs: join(dir, 'cgroup.procs'), remove: () => rmdirSync(dir) };
}

/** Every file of the bundle: what a fresh pod reads from its image. */
const bundleFiles = (build: Build): string[] =>
  readdirSync(build.bundleDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));

/** One classic-mode run of the wrapper, in the cgroup if one is given; cold: the bundle out of the page cache first. */
async function classicRun(build: Build, cgroup: MemoryCgroup | undefined, cold = false): Promise<Usage | undefined> {
  const sidecar = await Sidecar.start({ readyAfter: 0 });
  try {
    const args = classicArgs(sidecar, ['true']);
    const options = { ...(cold ? { evict: bundleFiles(build) } : {}), ...(cgroup === undefined ? {} : { cgroupProcs: cgroup.procs }) };
    return await usage(build.timer, build.launcher, args, options, TIMEOUT_MS.limitRun);
  } catch {
    return undefined; // killed at the timeout: not normal speed
  } finally {
    await sidecar.close();
  }
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? Number.NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

async function step(build: Build, limitMiB: number | undefined, reference: number | undefined): Promise<LimitStep> {
  const cgroup = limitMiB === undefined ? undefined : memoryCgroup(limitMiB * MIB);
  const wallMs: number[] = [];
  const codes: number[] = [];
  try {
    for (let i = 0; i < LIMIT.runsPerStep; i++) {
      const used = await classicRun(build, cgroup);
      wallMs.push(used === undefined ? Number.NaN : round2(used.wallMs));
      codes.push(used?.code ?? -1);
    }
  } finally {
    cgroup?.remove();
  }
  const allRan = codes.every((code) => code === 0);
  const normal = allRan && (reference === undefined || median(wallMs) <= LIMIT.normalSpeedFactor * reference);
  return { limitMiB, wallMs, codes, normal };
}

/** Smaller and smaller limits, until one is not at normal speed. */
export async function measureLimit(build: Build, progress: (text: string) => void): Promise<LimitResult> {
  let kind: string;
  try {
    const probe = memoryCgroup(LIMIT.limitsMiB[0] * MIB);
    kind = probe.kind;
    probe.remove();
  } catch (error) {
    return {
      cgroup: `not measured: ${error instanceof Error ? error.message : String(error)}`,
      steps: [],
      smallestMiB: undefined,
      cold: [],
    };
  }
  await classicRun(build, undefined); // thrown away: it brings the executable's pages into the page cache
  const reference = await step(build, undefined, undefined);
  const referenceMs = median(reference.wallMs);
  progress(`  no limit: ${referenceMs.toFixed(0)} ms (median of ${LIMIT.runsPerStep})`);
  const steps = [reference];
  let smallestMiB: number | undefined;
  for (const limitMiB of LIMIT.limitsMiB) {
    const result = await step(build, limitMiB, referenceMs);
    steps.push(result);
    progress(
      `  ${limitMiB} MiB: ${result.wallMs.map((ms) => ms.toFixed(0)).join(', ')} ms, exit ${result.codes.join(', ')}: ${result.normal ? 'normal' : 'not normal'}`,
    );
    if (!result.normal) break;
    smallestMiB = limitMiB;
  }
  return { cgroup: kind, steps, smallestMiB, cold: await coldProbes(build) };
}

/** The cold case: the wrapper and node -e 0, page cache dropped first, without a limit and at LIMIT.coldProbeMiB. */
async function coldProbes(build: Build): Promise<ColdProbe[]> {
  const probes: ColdProbe[] = [];
  // A copy nobody maps (the bench itself runs on the pinned Node: its mapped pages would stay cached).
  const node = join(build.dir, 'node');
  copyFileSync(PINNED_NODE_BINARY, node);
  for (const limitMiB of [undefined, LIMIT.coldProbeMiB]) {
    const cgroup = limitMiB === undefined ? undefined : memoryCgroup(limitMiB * MIB);
    try {
      const wrapper = await classicRun(build, cgroup, true);
      probes.push({
        label: 'istio-job-run, classic, -- true',
        limitMiB,
        wallMs: round2(wrapper?.wallMs ?? Number.NaN),
        code: wrapper?.code ?? -1,
      });
      const alone = await usage(
        build.timer,
        node,
        ['-e', '0'],
        { evict: [node], ...(cgroup === undefined ? {} : { cgroupProcs: cgroup.procs }) },
        TIMEOUT_MS.limitRun,
      ).catch(() => undefined);
      probes.push({ label: 'node -e 0', limitMiB, wallMs: round2(alone?.wallMs ?? Number.NaN), code: alone?.code ?? -1 });
    } finally {
      cgroup?.remove();
    }
  }
  return probes;
}
