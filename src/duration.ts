// Durations as users write them: "500ms", "30s", "2m", "1h", Go-style "1m30s", or a bare number of seconds.

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** The longest duration a timer can hold (about 24.8 days). */
export const MAX_DURATION_MS = 2_147_483_647;

const EXAMPLES = '(examples: 500ms, 30s, 2m)';
const PART = /(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h)/y;

/** Parses a duration into milliseconds; throws an Error whose message names the value and what is allowed. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (/^(\d+(\.\d+)?|\.\d+)$/.test(trimmed)) return checkRange(text, Number(trimmed) * 1_000);
  let total = 0;
  let parts = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < trimmed.length) {
    const match = PART.exec(trimmed);
    if (match === null) break;
    total += Number(match[1]) * (UNIT_MS[match[2] ?? ''] ?? Number.NaN);
    parts += 1;
  }
  if (parts === 0 || PART.lastIndex !== trimmed.length) throw new Error(`${quote(text)} is not a duration ${EXAMPLES}`);
  return checkRange(text, total);
}

function checkRange(text: string, ms: number): number {
  if (!Number.isFinite(ms) || ms > MAX_DURATION_MS) {
    throw new Error(`${quote(text)} is too long (at most ${formatDuration(MAX_DURATION_MS)})`);
  }
  return Math.round(ms);
}

/** Renders milliseconds the way people read them: 850ms, 1.2s, 2m, 24d 20h. */
export function formatDuration(ms: number): string {
  // Round first, then pick the unit, so 59999ms reads 1m rather than 60s.
  if (Math.round(ms) < 1_000) return `${Math.round(ms)}ms`;
  for (const [unit, size, next] of [['s', 1_000, 60], ['m', 60_000, 60], ['h', 3_600_000, 24]] as const) {
    const value = round2(ms / size);
    if (value < next) return `${value}${unit}`;
  }
  const hours = Math.floor(ms / 3_600_000);
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/** JSON quoting keeps empty strings, spaces and control characters visible in messages. */
export function quote(text: string): string {
  const shown = text.length > 80 ? `${text.slice(0, 77)}...` : text;
  return JSON.stringify(shown);
}
