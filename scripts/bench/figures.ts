// From the raw samples to the figures the report shows: summaries and ratios, nothing formatted yet.

import type { LatencyRun, Scenario } from './latency.ts';
import type { ColdProbe, LimitResult, LimitStep } from './limit.ts';
import type { MemoryMode, MemoryRun } from './memory.ts';
import type { SizeResult } from './size.ts';
import type { StartupResult, StartupVariant } from './startup.ts';
import type { StdoutRun, StdoutVariant } from './stdout.ts';
import { MIB } from './settings.ts';
import { round3, summarize, type Summary } from './stats.ts';

export interface Figures {
  readonly startup: Record<StartupVariant['id'], Summary> & {
    readonly ratio: number;
    /** The same, net of the bench's own spawn cost (the `true` median) on both sides. */
    readonly netRatio: number;
    readonly pairedRatio: Summary;
    /** CPU (user + sys of the whole process tree) per variant, and the wrapper / node -e 0 ratio of medians. */
    readonly cpu: Record<StartupVariant['id'], Summary>;
    readonly cpuRatio: number;
    readonly pairedCpuRatio: Summary;
  };
  readonly detection: { readonly wrapper: Summary; readonly pilotAgent: Summary };
  readonly quit: { readonly answered: Summary; readonly after503x2: Summary };
  readonly stdout: Record<StdoutVariant, Summary> & { readonly ratio: number };
  readonly memory: Record<MemoryMode, { readonly vmHwmMiB: Summary; readonly rssAnonMiB: Summary }>;
  readonly limit: {
    readonly cgroup: string;
    readonly smallestMiB: number | undefined;
    readonly steps: readonly LimitStep[];
    readonly cold: readonly ColdProbe[];
  };
  readonly size: {
    readonly executableMiB: number;
    readonly executableGzipMiB: number;
    readonly bundleMiB: number;
    readonly bundleGzipMiB: number;
  };
}

/** Latency samples of some scenarios. */
const pick = (runs: readonly LatencyRun[], scenarios: readonly Scenario[], field: 'detectionMs' | 'quitMs'): number[] =>
  runs.filter((run) => scenarios.includes(run.scenario)).map((run) => run[field] ?? Number.NaN);

/** Memory of one mode: VmHWM per run (it only grows: the last sample is the run's peak) and RssAnon of every sample. */
function memoryOf(runs: readonly MemoryRun[], mode: MemoryMode): Figures['memory'][MemoryMode] {
  const mine = runs.filter((run) => run.mode === mode);
  return {
    vmHwmMiB: summarize(mine.map((run) => Math.max(...run.samples.map((s) => s.vmHwmMiB)))),
    rssAnonMiB: summarize(mine.flatMap((run) => run.samples.map((s) => s.rssAnonMiB))),
  };
}

export interface Raw {
  readonly startup: StartupResult;
  readonly latency: readonly LatencyRun[];
  readonly stdout: readonly StdoutRun[];
  readonly memory: readonly MemoryRun[];
  readonly limit: LimitResult;
  readonly size: SizeResult;
}

/** Every figure of the report. */
export function figuresOf(raw: Raw): Figures {
  const start = raw.startup.samples;
  const startup = {
    wrapper: summarize(start.wrapper),
    node: summarize(start.node),
    tini: summarize(start.tini),
    true: summarize(start.true),
  };
  const stdout = {
    direct: summarize(raw.stdout.filter((r) => r.variant === 'direct').map((r) => r.mibPerSecond)),
    wrapper: summarize(raw.stdout.filter((r) => r.variant === 'wrapper').map((r) => r.mibPerSecond)),
  };
  const cpu = raw.startup.cpuSamples;
  const cpuOf = {
    wrapper: summarize(cpu.wrapper),
    node: summarize(cpu.node),
    tini: summarize(cpu.tini),
    true: summarize(cpu.true),
  };
  const mib = (bytes: number): number => bytes / MIB;
  return {
    startup: {
      ...startup,
      ratio: round3(startup.wrapper.median / startup.node.median),
      netRatio: round3((startup.wrapper.median - startup.true.median) / (startup.node.median - startup.true.median)),
      pairedRatio: summarize(raw.startup.pairedRatios),
      cpu: cpuOf,
      cpuRatio: round3(cpuOf.wrapper.median / cpuOf.node.median),
      pairedCpuRatio: summarize(raw.startup.pairedCpuRatios),
    },
    detection: {
      wrapper: summarize(pick(raw.latency, ['quit-200', 'quit-503x2'], 'detectionMs')),
      pilotAgent: summarize(pick(raw.latency, ['pilot-agent'], 'detectionMs')),
    },
    quit: {
      answered: summarize(pick(raw.latency, ['quit-200'], 'quitMs')),
      after503x2: summarize(pick(raw.latency, ['quit-503x2'], 'quitMs')),
    },
    stdout: { ...stdout, ratio: round3(stdout.wrapper.median / stdout.direct.median) },
    memory: { none: memoryOf(raw.memory, 'none'), classic: memoryOf(raw.memory, 'classic') },
    limit: { cgroup: raw.limit.cgroup, smallestMiB: raw.limit.smallestMiB, steps: raw.limit.steps, cold: raw.limit.cold },
    size: {
      executableMiB: mib(raw.size.executable.bytes),
      executableGzipMiB: mib(raw.size.executable.gzipBytes),
      bundleMiB: mib(raw.size.bundle.bytes),
      bundleGzipMiB: mib(raw.size.bundle.gzipBytes),
    },
  };
}
