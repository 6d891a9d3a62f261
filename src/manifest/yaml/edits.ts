// Insertions into a YAML file's text at the places of its parsed nodes, and a scalar's text replaced (a script
// --inject takes a quit out of), so that every byte not inserted or replaced stays as written: comments, key
// order, quoting, indentation, `0644`. What is inserted follows its surroundings: a block collection gets block
// lines at its own indentation (sequences under a key indented as the file's `containers:` are), a flow
// collection gets JSON, which YAML reads as flow.

import type { Node, Pair, YAMLMap, YAMLSeq } from 'yaml';
import { isMap, isSeq, type Source } from './source.ts';

/** What can be inserted: strings, numbers, booleans, and lists and objects of them. */
export type Value = string | number | boolean | readonly Value[] | { readonly [key: string]: Value };

interface Insertion {
  readonly at: number;
  /** Where the text it replaces ends (an insertion replaces nothing: AT). */
  readonly end: number;
  /** Deeper insertions at the same place go first: an item of an inner list before a key of the map around it. */
  readonly depth: number;
  readonly order: number;
  readonly text: string;
}

export class Editor {
  readonly #source: Source;
  /** Where each document starts and its line ending: a file's documents may differ (one CRLF, one LF). */
  readonly #eols: readonly { readonly start: number; readonly eol: string }[];
  /** How far a block list under a key is indented past the key, as the pod being edited writes `containers:`. */
  seqOffset = 2;
  readonly #insertions: Insertion[] = [];

  constructor(source: Source) {
    this.#source = source;
    const text = source.text;
    const whole = text.includes('\r\n') ? '\r\n' : '\n';
    const starts = source.documents.map((document) => document.range[0]);
    this.#eols = source.documents.map((document, i) => {
      const start = document.range[0];
      // Judged from its contents on: its `---` line ends as whoever joined the documents wrote it.
      const own = text.slice(document.contents?.range?.[0] ?? start, starts[i + 1] ?? text.length);
      return { start, eol: own.includes('\r\n') ? '\r\n' : own.includes('\n') ? '\n' : whole };
    });
  }

  /**
   * The line ending of the document an insertion at AT goes into. A document's range starts at its `---`, where
   * the one before it ends: an insertion there (the end of a block collection) belongs to the one before.
   */
  #eol(at: number): string {
    let eol = this.#eols[0]?.eol ?? '\n';
    for (const document of this.#eols) {
      if (document.start >= at) break;
      eol = document.eol;
    }
    return eol;
  }

  get changed(): boolean {
    return this.#insertions.length > 0;
  }

  /** The file's text with every insertion made. */
  apply(): string {
    const sorted = [...this.#insertions].sort((a, b) => a.at - b.at || b.depth - a.depth || a.order - b.order);
    let out = '';
    let from = 0;
    for (const insertion of sorted) {
      out += this.#source.text.slice(from, Math.max(from, insertion.at)) + insertion.text;
      from = Math.max(from, insertion.end);
    }
    return out + this.#source.text.slice(from);
  }

  /** The column (from 0) of a place in the text. */
  column(at: number): number {
    return at - (this.#source.text.lastIndexOf('\n', at - 1) + 1);
  }

  readonly #appended = new WeakMap<YAMLSeq, number>();

  #insert(at: number, depth: number, text: string): void {
    this.#insertions.push({ at, end: at, depth, order: this.#insertions.length, text });
  }

  /** The text from START to END replaced by TEXT (a scalar rewritten); no other edit may fall inside it. */
  replace(start: number, end: number, text: string): void {
    this.#insertions.push({ at: start, end, depth: 0, order: this.#insertions.length, text });
  }

  /** Block lines at the end of a block collection, which ends at a line's start (or the file's end). */
  #insertLines(at: number, depth: number, lines: readonly string[]): void {
    const text = this.#source.text;
    const eol = this.#eol(at);
    const lead = at > 0 && text[at - 1] !== '\n' ? eol : '';
    this.#insert(at, depth, lead + lines.map((line) => line + eol).join(''));
  }

  /** Just inside a flow collection's opening bracket (after its anchor or tag, if it has one). */
  #inside(range: readonly number[], bracket: '[' | '{'): number {
    return this.#source.text.indexOf(bracket, range[0]) + 1;
  }

  /** VALUES before the first item of a sequence. */
  prepend(seq: YAMLSeq, depth: number, values: readonly Value[]): void {
    const first = seq.items[0] as Node | undefined;
    const start = (seq.range ?? [0])[0];
    if (seq.flow) {
      if (first === undefined) this.#insert(this.#inside([start], '['), depth, values.map(json).join(', '));
      else this.#insert((first.range ?? [start + 1])[0], depth, values.map((value) => `${json(value)}, `).join(''));
      return;
    }
    const pad = ' '.repeat(this.column(start));
    this.#insert(start, depth, values.map((value) => `- ${inline(value)}${this.#eol(start)}${pad}`).join(''));
  }

  /** VALUE after the last item of a sequence. */
  append(seq: YAMLSeq, depth: number, value: Value): void {
    const range = seq.range ?? [0, 0];
    if (seq.flow) {
      const last = seq.items.at(-1) as Node | undefined;
      // Into an empty `[]`: the second value appended there follows the first after a comma.
      const before = this.#appended.get(seq) ?? 0;
      this.#appended.set(seq, before + 1);
      if (last === undefined) this.#insert(this.#inside(range, '['), depth, `${before > 0 ? ', ' : ''}${json(value)}`);
      else this.#insert((last.range ?? range)[1], depth, `, ${json(value)}`);
      return;
    }
    this.#insertLines(range[1], depth, this.#seqLines([value], this.column(range[0])));
  }

  /** KEY: VALUE as the map's last pair, or, in a block map, before the pair BEFORE. */
  addPair(map: YAMLMap, depth: number, key: string, value: Value, before?: Pair<Node, unknown>): void {
    const range = map.range ?? [0, 0];
    if (map.flow) {
      const last = map.items.at(-1) as Pair<Node, Node | null> | undefined;
      const end = last === undefined ? undefined : ((last.value ?? last.key).range ?? range)[1];
      if (end === undefined) this.#insert(this.#inside(range, '{'), depth, `${json(key)}: ${json(value)}`);
      else this.#insert(end, depth, `, ${json(key)}: ${json(value)}`);
      return;
    }
    const indent = this.column(range[0]);
    const lines = this.#pairLines(key, value, indent);
    const keyStart = (before?.key.range ?? [undefined])[0];
    if (keyStart === undefined) this.#insertLines(range[1], depth, lines);
    else this.#insert(keyStart - this.column(keyStart), depth, lines.map((line) => line + this.#eol(keyStart)).join(''));
  }

  /** The pair PAIR of a block map, whose value is empty (`volumes:`, which reads as null), given VALUE instead. */
  fillPair(pair: Pair<Node, unknown>, depth: number, key: string, value: Value): void {
    const [keyStart = 0, keyEnd = keyStart] = pair.key.range ?? [];
    const colon = this.#source.text.indexOf(':', keyEnd);
    const indent = this.column(keyStart);
    const text = this.#pairLines(key, value, indent).join(this.#eol(keyStart)).slice(indent);
    this.#insertions.push({ at: keyStart, end: colon + 1, depth, order: this.#insertions.length, text });
  }

  #pairLines(key: string, value: Value, indent: number): string[] {
    const pad = ' '.repeat(indent);
    if (isBlockList(value)) return [`${pad}${scalar(key)}:`, ...this.#seqLines(value, indent + this.seqOffset)];
    if (isBlockMap(value)) return [`${pad}${scalar(key)}:`, ...this.#mapLines(value, indent + 2)];
    return [`${pad}${scalar(key)}: ${inline(value)}`];
  }

  #mapLines(map: { readonly [key: string]: Value }, indent: number): string[] {
    return Object.entries(map).flatMap(([key, value]) => this.#pairLines(key, value, indent));
  }

  #seqLines(values: readonly Value[], indent: number): string[] {
    const pad = ' '.repeat(indent);
    return values.flatMap((value) => {
      if (!isBlockMap(value)) return [`${pad}- ${inline(value)}`];
      const lines = this.#mapLines(value, indent + 2);
      return [`${pad}- ${(lines[0] ?? '').slice(indent + 2)}`, ...lines.slice(1)];
    });
  }
}

const isObject = (value: Value): value is { readonly [key: string]: Value } => typeof value === 'object' && !Array.isArray(value);
/** A list written as block lines: one that holds objects. */
const isBlockList = (value: Value): value is readonly Value[] => Array.isArray(value) && value.some((item: Value) => isObject(item));
const isBlockMap = (value: Value): value is { readonly [key: string]: Value } => isObject(value) && Object.keys(value).length > 0;

const json = (value: Value): string => JSON.stringify(value);

/** A value on one line: a scalar, `{}`, or a flow list of scalars. */
function inline(value: Value): string {
  if (Array.isArray(value)) return `[${value.map((item: Value) => (typeof item === 'string' ? json(item) : inline(item))).join(', ')}]`;
  if (typeof value === 'object') return json(value);
  return scalar(value);
}

/** Plain where YAML 1.1 and 1.2 both read it as this very string; double-quoted (JSON) otherwise. */
function scalar(value: string | number | boolean): string {
  if (typeof value !== 'string') return String(value);
  const plain = /^[A-Za-z0-9/][A-Za-z0-9_./-]*$/.test(value);
  const special =
    /^(y|n|yes|no|on|off|true|false|null|~)$/i.test(value) || /^[-+]?[0-9_.]+([eE][-+]?[0-9]+)?$/.test(value) || /^0[xob]/i.test(value);
  return plain && !special ? value : json(value);
}

/** The column offset of a block sequence under a key, as the file writes `containers:` (0 or 2, mostly). */
export function sequenceOffset(source: Source, pair: Pair<Node, Node | null> | undefined): number {
  const seq = pair?.value;
  const keyStart = pair?.key.range?.[0];
  const seqStart = isSeq(seq) && seq.flow !== true ? seq.range?.[0] : undefined;
  if (keyStart === undefined || seqStart === undefined) return 2;
  const column = (at: number): number => at - (source.text.lastIndexOf('\n', at - 1) + 1);
  return Math.max(0, column(seqStart) - column(keyStart));
}

/** Whether a node is a collection the editor can add to. */
export const editable = (node: unknown): node is YAMLMap | YAMLSeq => isMap(node) || isSeq(node);
