// Start-up: spawn -> reaped, for the wrapper and its floors, interleaved in a random order each round. Wall
// time and CPU time (user + sys of the whole process tree, from wait4: the launcher, Node behind it and the
// command), both through the bench's timer (rusage.c).

import { usageSync } from './rusage.ts';
import { PINNED_NODE, STARTUP_WARMUP_ROUNDS } from './settings.ts';
import { round2, round3, shuffled } from './stats.ts';

export interface StartupVariant {
  readonly id: 'wrapper' | 'node' | 'tini' | 'true';
  readonly label: string;
  readonly file: string;
  readonly args: readonly string[];
}

/** The wrapper and its floors. */
const startupVariants = (wrapper: string): readonly StartupVariant[] => [
  { id: 'wrapper', label: 'istio-job-run --sidecar none -- true', file: wrapper, args: ['--sidecar', 'none', '--', 'true'] },
  { id: 'node', label: 'node -e 0 (the embedded Node)', file: PINNED_NODE, args: ['-e', '0'] },
  { id: 'tini', label: 'tini -- true', file: 'tini', args: ['--', 'true'] },
  { id: 'true', label: 'true', file: 'true', args: [] },
];

type PerVariant = Record<StartupVariant['id'], number[]>;

export interface StartupResult {
  /** Wall ms per variant, one per round, in round order. */
  readonly samples: PerVariant;
  /** CPU ms (user + sys of the whole tree) per variant, the same rounds. */
  readonly cpuSamples: PerVariant;
  /** wrapper / node -e 0 within each round: a paired check of the ratio of medians (wall, then CPU). */
  readonly pairedRatios: number[];
  readonly pairedCpuRatios: number[];
}

const perVariant = (): PerVariant => ({ wrapper: [], node: [], tini: [], true: [] });

/** One round: every variant once, in a random order. */
function round(timer: string, variants: readonly StartupVariant[]): Record<StartupVariant['id'], { wall: number; cpu: number }> {
  const zero = { wall: 0, cpu: 0 };
  const times = { wrapper: zero, node: zero, tini: zero, true: zero };
  for (const variant of shuffled(variants)) {
    const used = usageSync(timer, variant.file, variant.args);
    if (used.code !== 0) throw new Error(`${variant.label}: exit ${used.code}`);
    times[variant.id] = { wall: used.wallMs, cpu: used.cpuMs };
  }
  return times;
}

/** Warm-up rounds (thrown away), then `rounds` measured ones. */
export function measureStartup(timer: string, wrapper: string, rounds: number): StartupResult {
  const variants = startupVariants(wrapper);
  for (let i = 0; i < STARTUP_WARMUP_ROUNDS; i++) round(timer, variants);
  const result: StartupResult = { samples: perVariant(), cpuSamples: perVariant(), pairedRatios: [], pairedCpuRatios: [] };
  for (let i = 0; i < rounds; i++) {
    const times = round(timer, variants);
    for (const variant of variants) {
      result.samples[variant.id].push(round2(times[variant.id].wall));
      result.cpuSamples[variant.id].push(round2(times[variant.id].cpu));
    }
    result.pairedRatios.push(round3(times.wrapper.wall / times.node.wall));
    result.pairedCpuRatios.push(round3(times.wrapper.cpu / times.node.cpu));
  }
  return result;
}
