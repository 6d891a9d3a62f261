// The proof that a script without its quits does what it did, less those quits: for the job succeeding and for it
// failing, the sequences of the job's commands and of the requests to sidecars on every way through the rewritten
// script must be those of the original with the quits taken out (the same commands, in the same order, each
// matched to its place in the original through the cuts), and each ends no worse: with the job's status where the
// original did, or with 0 after a failure only where the original already ended so (a status the script loses by
// itself, a finding that stays). The wrapper then adds its wait before the job and its quit after it.

import type { Path, World } from '../script/state.ts';
import type { Place } from '../script/requests.ts';
import type { Cut } from './unquit.ts';

/** One container's script before and after: the texts the model read, and the cuts that made one from the other. */
export interface Rewrite {
  readonly before: string;
  readonly after: string;
  readonly cuts: readonly Cut[];
}

/**
 * What a comparison found: the same sequences (and whether a failed run the rewrite ends with 0 ended so in the
 * original too, on every such way: a status the script loses by itself), or the first place where they part.
 */
export type Compared =
  | { readonly kind: 'same'; readonly lostBefore: boolean }
  | { readonly kind: 'differs'; readonly world: World; readonly offset: number; readonly how: 'runs' | 'skips' };

/** The offset in TEXT of a place (row, column). */
function offsetOf(starts: readonly number[], place: Place): number {
  return (starts[place.row] ?? Number.MAX_SAFE_INTEGER) + place.column;
}

const rowStarts = (text: string): number[] => {
  const starts = [0];
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
  return starts;
};

/** The offset in the original of OFFSET in the rewritten text; a place inside a cut's new text maps to the cut's start. */
function originalOffset(cuts: readonly Cut[], offset: number): number {
  let delta = 0;
  for (const cut of cuts) {
    const start = cut.start + delta;
    if (offset < start) break;
    if (offset < start + cut.text.length) return cut.start;
    delta += cut.text.length - (cut.end - cut.start);
  }
  return offset - delta;
}

/** Whether OFFSET of the original lies in what a cut took out. */
const cutOut = (cuts: readonly Cut[], offset: number): boolean => cuts.some((cut) => offset >= cut.start && offset < cut.end);

/** A path as the sequence of its commands (work and requests) at their offsets in the original, with its status. */
function sequence(path: Path, offset: (place: Place) => number | undefined): string {
  const steps: string[] = [];
  for (const event of path.events) {
    const at = offset(event.place);
    if (at !== undefined) steps.push(`${event.what === 'work' ? 'w' : 's'}${at}${event.trap === undefined ? '' : `@${event.trap}`}`);
  }
  return steps.join(',');
}

/** The first offset of a sequence that the other lacks, for the message. */
function firstMissing(sequence: string, others: readonly string[]): number {
  const steps = sequence === '' ? [] : sequence.split(',');
  for (const [index, step] of steps.entries()) {
    if (!others.some((other) => other.split(',')[index] === step)) return Number(/\d+/.exec(step)?.[0] ?? 0);
  }
  return Number(/\d+/.exec(steps.at(-1) ?? '')?.[0] ?? 0);
}

/**
 * The paths of the original (BEFORE, read from REWRITE.before) and the rewritten script (AFTER) compared, world by
 * world: every sequence of one the other's (the original's quits, inside the cuts, left out), and the status of
 * the rewritten no worse than the original's on the same sequence.
 */
export function compare(
  rewrite: Rewrite,
  before: { readonly success: readonly Path[]; readonly failure: readonly Path[] },
  after: { readonly success: readonly Path[]; readonly failure: readonly Path[] },
): Compared {
  const beforeStarts = rowStarts(rewrite.before);
  const afterStarts = rowStarts(rewrite.after);
  const fromBefore = (place: Place): number | undefined => {
    const at = offsetOf(beforeStarts, place);
    return cutOut(rewrite.cuts, at) ? undefined : at;
  };
  const fromAfter = (place: Place): number => originalOffset(rewrite.cuts, offsetOf(afterStarts, place));
  let lostBefore = true;
  for (const world of ['success', 'failure'] as const) {
    const old = before[world].map((path) => ({ path, steps: sequence(path, fromBefore) }));
    const now = after[world].map((path) => ({ path, steps: sequence(path, fromAfter) }));
    const oldSteps = old.map((entry) => entry.steps);
    const nowSteps = now.map((entry) => entry.steps);
    const extra = now.find((entry) => !oldSteps.includes(entry.steps));
    if (extra !== undefined) return { kind: 'differs', world, offset: firstMissing(extra.steps, oldSteps), how: 'runs' };
    const missing = old.find((entry) => !nowSteps.includes(entry.steps));
    if (missing !== undefined) return { kind: 'differs', world, offset: firstMissing(missing.steps, nowSteps), how: 'skips' };
    // A failed run that now ends with 0 is no worse only where the original ended with 0 on that sequence too.
    for (const entry of now) {
      if (!(entry.path.failed && entry.path.status === 0)) continue;
      if (old.some((other) => other.steps === entry.steps && other.path.status !== 0)) lostBefore = false;
    }
  }
  return { kind: 'same', lostBefore };
}
