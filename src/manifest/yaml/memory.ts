// The manifest tools under an address-space limit (RLIMIT_AS: `ulimit -v`, `prlimit --as`, some CI runners'):
// Node maps over a GiB of it idle, the shell parser's WebAssembly memory would take whatever is left (V8 maps a
// memory's whole maximum up front, or all the room there is), and V8 aborts where a heap page cannot be mapped.
// So the parser's memory is sized from the room left, a file that would not fit is refused before it is read,
// and a limit too small for any work is said at once: each in one line naming the limit and what it needs.

import { readFileSync } from 'node:fs';

/** The address-space limit of this process and what it maps now, in bytes. */
export interface AddressSpace {
  readonly limit: number;
  readonly used: number;
}

const MIB = 1024 * 1024;

/** This process's soft RLIMIT_AS and VmSize (/proc); undefined without a limit, or without /proc to tell. */
export function addressSpace(read = (path: string): string => readFileSync(path, 'latin1')): AddressSpace | undefined {
  try {
    const limit = /^Max address space\s+(\d+)\s/m.exec(read('/proc/self/limits'))?.[1];
    const used = /^VmSize:\s+(\d+) kB$/m.exec(read('/proc/self/status'))?.[1];
    return limit === undefined || used === undefined ? undefined : { limit: Number(limit), used: Number(used) * 1024 };
  } catch {
    return undefined;
  }
}

/** The parser's WebAssembly memory: its starting size (web-tree-sitter's own), and its share of the room. */
const PARSER_INITIAL_BYTES = 32 * MIB;
const PARSER_SHARE = 1 / 4;
/** The most the parser's memory grows to without a limit: web-tree-sitter's own maximum. */
const PARSER_MAX_BYTES = 2048 * MIB;
/**
 * What is mapped for each byte of input at the peak, with room to spare: VmPeak less what was mapped once the
 * parser loaded came to 46-62 bytes per byte for --check and --inject (which keeps the text, the edits and the
 * output) of 1,000 to 30,000 Jobs, plus 40-50 MiB. test/e2e/manifest-memory.test.ts runs 10,000 under the bound.
 */
const BYTES_PER_INPUT_BYTE = 64;
/** What the heap maps at its peak for the smallest file, above what is mapped before the parser loads. */
const BASE_BYTES = 96 * MIB;

const PAGE = 65536;

/** A WebAssembly memory's size in 64 KiB pages: where it starts, the most it grows to. */
export interface ParserMemory {
  readonly initial: number;
  readonly maximum: number;
}

/** The parser's memory for ROOM bytes above what is mapped: its share, from its starting size to its maximum. */
const parserShare = (room: number): number => Math.min(PARSER_MAX_BYTES, Math.max(PARSER_INITIAL_BYTES, room * PARSER_SHARE));

/** The WebAssembly memory the shell parser gets under a limit; undefined (its own default) without one. */
export function parserMemory(space: AddressSpace | undefined): ParserMemory | undefined {
  if (space === undefined) return undefined;
  return { initial: PARSER_INITIAL_BYTES / PAGE, maximum: Math.floor(parserShare(space.limit - space.used) / PAGE) };
}

const LIMIT = 'the address space limit (RLIMIT_AS, ulimit -v)';
const mib = (bytes: number): number => Math.ceil(bytes / MIB);
/**
 * What a process maps before the parser loads differs from one start to the next by a few MiB (thread stacks,
 * where the code lands): a limit this much above the estimate, rounded up to it, still holds on the next run.
 */
const ADVICE_SLACK_MIB = 16;
const advised = (bytes: number): number => Math.ceil((mib(bytes) + ADVICE_SLACK_MIB) / ADVICE_SLACK_MIB) * ADVICE_SLACK_MIB;

/** The least room R with R - parserShare(R) >= REST: what the parser leaves grows with R. */
const roomFor = (rest: number): number =>
  Math.min(Math.max(rest + PARSER_INITIAL_BYTES, rest / (1 - PARSER_SHARE)), rest + PARSER_MAX_BYTES);

/** One line when the limit leaves no room for the tools at all (measured before the parser loads). */
export function tooSmall(space: AddressSpace | undefined): string | undefined {
  if (space === undefined) return undefined;
  const needed = space.used + roomFor(BASE_BYTES);
  if (space.limit >= needed) return undefined;
  return `${LIMIT} is ${mib(space.limit)} MiB; the manifest tools need at least ${mib(needed)} MiB`;
}

/** The address space before the parser loaded and now: what the inputs have to fit in. */
export interface Room {
  readonly before: AddressSpace;
  readonly now: AddressSpace;
}

/** The largest input that fits in the room left once the parser is loaded; Infinity without a limit. */
export function inputRoom(room: Room | undefined): number {
  if (room === undefined) return Number.POSITIVE_INFINITY;
  return Math.max(0, Math.floor((room.now.limit - room.now.used - BASE_BYTES) / BYTES_PER_INPUT_BYTE));
}

/**
 * The limit an input of SIZE bytes needs: the room above what was mapped before the parser loaded, less the
 * parser's share of it (which grows with the limit) and what loading it mapped besides, must hold the input.
 */
function limitFor(room: Room, size: number): number {
  const { before, now } = room;
  const loaded = now.used - before.used - parserShare(before.limit - before.used);
  return before.used + roomFor(loaded + BASE_BYTES + size * BYTES_PER_INPUT_BYTE);
}

/**
 * One line for an input refused for the room it would need: its size and the limit it needs when the size is
 * known (a file); from a pipe, the most that fits and the limit the largest input (LARGEST bytes) needs.
 */
export function inputTooLarge(name: string, room: Room, size: number | undefined, largest: number): string {
  const is = mib(room.now.limit);
  if (size !== undefined) {
    return `${name}: ${(size / MIB).toFixed(1)} MiB needs ${LIMIT} to be about ${advised(limitFor(room, size))} MiB; it is ${is} MiB`;
  }
  const most = (inputRoom(room) / MIB).toFixed(1);
  const needs = `${mib(largest)} MiB needs it to be about ${advised(limitFor(room, largest))} MiB`;
  return `${name}: larger than ${most} MiB, the most ${LIMIT} of ${is} MiB leaves room for; ${needs}`;
}
