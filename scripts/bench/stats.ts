// Order statistics of a sample: what the report gives, never one run on its own.

export interface Summary {
  readonly n: number;
  readonly min: number;
  readonly p10: number;
  readonly p25: number;
  readonly median: number;
  readonly p75: number;
  readonly p90: number;
  readonly max: number;
}

/** Quantile q (0..1) of sorted values, linear between the closest ranks (R's type 7, NumPy's default). */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const low = sorted[below] ?? Number.NaN;
  const high = sorted[Math.min(below + 1, sorted.length - 1)] ?? low;
  return low + (high - low) * (position - below);
}

/** The summary of a sample. */
export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    min: sorted[0] ?? Number.NaN,
    p10: quantile(sorted, 0.1),
    p25: quantile(sorted, 0.25),
    median: quantile(sorted, 0.5),
    p75: quantile(sorted, 0.75),
    p90: quantile(sorted, 0.9),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** The values in a random order (Fisher-Yates), so interleaved variants take turns being first. */
export function shuffled<T>(values: readonly T[]): T[] {
  const out = [...values];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** Rounded for the JSON file: 0.01 is finer than anything this machine can tell apart. */
export const round2 = (value: number): number => Math.round(value * 100) / 100;
/** Rounded for ratios: three decimals. */
export const round3 = (value: number): number => Math.round(value * 1000) / 1000;
