// Start-up: spawn -> reaped, for the wrapper and its floors, interleaved in a random order each round.

import { PINNED_NODE, STARTUP_WARMUP_ROUNDS, TIMEOUT_MS } from './settings.ts';
import { round2, round3, shuffled } from './stats.ts';
import { timedSync } from './process.ts';

export interface StartupVariant {
  readonly id: 'wrapper' | 'node' | 'tini' | 'true';
  readonly label: string;
  readonly file: string;
  readonly args: readonly string[];
}

/** The wrapper and its floors. */
export const startupVariants = (wrapper: string): readonly StartupVariant[] => [
  { id: 'wrapper', label: 'istio-job-run --sidecar none -- true', file: wrapper, args: ['--sidecar', 'none', '--', 'true'] },
  { id: 'node', label: 'node -e 0 (the embedded Node)', file: PINNED_NODE, args: ['-e', '0'] },
  { id: 'tini', label: 'tini -- true', file: 'tini', args: ['--', 'true'] },
  { id: 'true', label: 'true', file: 'true', args: [] },
];

export interface StartupResult {
  /** ms per variant, one per round, in round order. */
  readonly samples: Record<StartupVariant['id'], number[]>;
  /** wrapper / node -e 0 within each round: a paired check of the ratio of medians. */
  readonly pairedRatios: number[];
}

/** One round: every variant once, in a random order. */
function round(variants: readonly StartupVariant[]): Record<StartupVariant['id'], number> {
  const times = { wrapper: 0, node: 0, tini: 0, true: 0 };
  for (const variant of shuffled(variants)) times[variant.id] = timedSync(variant.file, variant.args, TIMEOUT_MS.startup);
  return times;
}

/** Warm-up rounds (thrown away), then `rounds` measured ones. */
export function measureStartup(wrapper: string, rounds: number): StartupResult {
  const variants = startupVariants(wrapper);
  for (let i = 0; i < STARTUP_WARMUP_ROUNDS; i++) round(variants);
  const samples: StartupResult['samples'] = { wrapper: [], node: [], tini: [], true: [] };
  const pairedRatios: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const times = round(variants);
    for (const variant of variants) samples[variant.id].push(round2(times[variant.id]));
    pairedRatios.push(round3(times.wrapper / times.node));
  }
  return { samples, pairedRatios };
}
