// Durations as users write them: "500ms", "30s", "2m", "1h", Go-style "1m30s", or a bare number of seconds.
// scuttle's variables also take the rest of Go's units (ns, us, µs), as Go's time.ParseDuration did.

import { quote } from '../quote.ts';

/** Nanoseconds per unit, exact: the parts of "1h2m3.5s" add up without floating-point error. */
const UNIT_NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const NS_PER_MS = 1_000_000n;

/** The longest duration a timer can hold (about 24.8 days). */
export const MAX_DURATION_MS = 2_147_483_647;

const EXAMPLES = '(examples: 500ms, 30s, 2m)';
const NUMBER = /^(\d+(?:\.\d+)?|\.\d+)$/;
const PART = /(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h)/y;
// "µs" is U+00B5 (micro sign), "μs" U+03BC (Greek mu): Go accepts both. Escaped: the bundle stays ASCII.
const GO_PART = /(\d+(?:\.\d+)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;

export interface DurationSyntax {
  /**
   * Go's time.ParseDuration units too (ns, us, µs, μs), for scuttle's variables. Such a duration is rounded up
   * to whole milliseconds (1ns is 1ms, never 0); otherwise to the nearest.
   */
  readonly go?: boolean;
}

/** Parses a duration into milliseconds; throws an Error whose message names the value and what is allowed. */
export function parseDuration(text: string, syntax: DurationSyntax = {}): number {
  const trimmed = text.trim();
  const parts: [number: string, unit: string][] = [];
  if (NUMBER.test(trimmed)) {
    parts.push([trimmed, 's']);
  } else {
    const part = syntax.go === true ? GO_PART : PART;
    for (let at = 0; at < trimmed.length || parts.length === 0; ) {
      part.lastIndex = at;
      const match = part.exec(trimmed);
      if (match === null) throw new Error(`${quote(text)} is not a duration ${EXAMPLES}`);
      parts.push([match[1] ?? '', match[2] ?? '']);
      at = part.lastIndex;
    }
  }

  // The sum as an exact fraction: numerator / 10^digits nanoseconds.
  let numerator = 0n;
  let digits = 0;
  for (const [number, unit] of parts) {
    const [whole = '', fraction = ''] = number.split('.');
    if (fraction.length > digits) {
      numerator *= 10n ** BigInt(fraction.length - digits);
      digits = fraction.length;
    }
    numerator += BigInt(`${whole}${fraction}`) * (UNIT_NS[unit] ?? 0n) * 10n ** BigInt(digits - fraction.length);
  }
  const denominator = NS_PER_MS * 10n ** BigInt(digits);
  if (numerator > BigInt(MAX_DURATION_MS) * denominator) {
    throw new Error(`${quote(text)} is too long (at most ${formatDuration(MAX_DURATION_MS)})`);
  }
  const ms = syntax.go === true ? (numerator + denominator - 1n) / denominator : (2n * numerator + denominator) / (2n * denominator);
  return Number(ms);
}

/** Renders milliseconds the way people read them: 850ms, 1.2s, 2m, 24d 20h. */
export function formatDuration(ms: number): string {
  // Round first, then pick the unit, so 59999ms reads 1m rather than 60s.
  if (Math.round(ms) < 1_000) return `${Math.round(ms)}ms`;
  for (const [unit, size, next] of [
    ['s', 1_000, 60],
    ['m', 60_000, 60],
    ['h', 3_600_000, 24],
  ] as const) {
    const value = round2(ms / size);
    if (value < next) return `${value}${unit}`;
  }
  const hours = Math.floor(ms / 3_600_000);
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
