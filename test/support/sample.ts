// The slowest tables of the unit tests run a seeded part of their rows in the fast loop (`npm run test:unit`) and
// every row in `npm run test:all`, which sets TEST_SAMPLE=whole. TEST_SAMPLE=N takes another part, seeded by N; the
// seed a file used is in its diagnostics, so a failure in the part can be repeated.

import { seeded } from './scenarios.ts';

/** The variable, and the value of it that runs every row. */
const SAMPLE_VARIABLE = 'TEST_SAMPLE';
const WHOLE = 'whole';
const DEFAULT_SEED = 1;

type Sampling = { readonly whole: true } | { readonly whole: false; readonly seed: number };

/** What this run takes, by TEST_SAMPLE. */
export const sampling = (): Sampling => samplingOf(process.env[SAMPLE_VARIABLE]);

/** Whether every row runs; otherwise the seed that picks the part. A bad value is an error naming the variable. */
export function samplingOf(value: string | undefined): Sampling {
  if (value === WHOLE) return { whole: true };
  if (value === undefined || value === '') return { whole: false, seed: DEFAULT_SEED };
  if (!/^\d+$/.test(value)) throw new Error(`${SAMPLE_VARIABLE}=${JSON.stringify(value)}: "${WHOLE}" or a whole number (a seed)`);
  return { whole: false, seed: Number(value) };
}

/**
 * ITEMS, or one in EVERY of them picked by the seed, in their order; never none of a list that has rows. SALT makes
 * each table's pick its own, so one seed does not leave out the same positions everywhere.
 */
export function sample<T>(items: readonly T[], every: number, salt: string, how = sampling()): T[] {
  if (how.whole || items.length === 0) return [...items];
  const random = seeded(how.seed ^ [...salt].reduce((hash, char) => Math.imul(hash ^ char.charCodeAt(0), 16_777_619), 2_166_136_261));
  const picked = items.filter(() => random() < 1 / every);
  return picked.length > 0 ? picked : [items[Math.floor(random() * items.length)] as T];
}

/** A line for a test's diagnostics: which part ran. */
export const sampleNote = (taken: number, of: number, how = sampling()): string =>
  how.whole ? `every row (${of})` : `${taken} of ${of} rows, seed ${how.seed} (${SAMPLE_VARIABLE}=${WHOLE} runs all)`;
