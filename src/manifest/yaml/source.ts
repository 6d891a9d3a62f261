// A YAML file as Kubernetes reads it, for --check and --inject: every document parsed with the `yaml` package's
// Document API under YAML 1.1 (what Kubernetes' own readers follow: `0644` is octal, `yes` a boolean), each node
// with its place in the text. As kubectl does, a key written twice in one map keeps its last value (and is
// reported), aliases stand for their anchored node and `<<` merge keys add the keys a map does not write itself.
// Nothing is ever printed from the parsed values: --inject inserts text at these places (edits.ts), so every
// byte it does not add stays as it was written.

import { Alias, type Document, LineCounter, type Node, Pair, parseAllDocuments, Scalar, visit, YAMLMap, YAMLSeq } from 'yaml';

// What kind of node a value is, by its class. The yaml package's isScalar, isMap... read a symbol-keyed property
// that every kind of node has; where one place meets every kind (as these readers do, for every field of every
// pod), V8 looks that property up in a table each time, and a class check costs a fraction of it. The parser's
// nodes are all of these classes (a set or an omap, of a subclass).
export const isScalar = (node: unknown): node is Scalar => node instanceof Scalar;
export const isMap = (node: unknown): node is YAMLMap => node instanceof YAMLMap;
export const isSeq = (node: unknown): node is YAMLSeq => node instanceof YAMLSeq;
const isAlias = (node: unknown): node is Alias => node instanceof Alias;
const isPair = (node: unknown): node is Pair => node instanceof Pair;
const isNode = (node: unknown): node is Node => isScalar(node) || isMap(node) || isSeq(node) || isAlias(node);

export interface Source {
  /** How messages name the file: its path as given, or <stdin>. */
  readonly name: string;
  readonly text: string;
  readonly documents: readonly Document.Parsed[];
  readonly lines: LineCounter;
  /** Each key written again in the same map: the later pair (whose value wins) and the line of the first. */
  readonly duplicates: readonly { readonly pair: Pair<Node, Node | null>; readonly key: string; readonly firstLine: number }[];
  /** The anchored nodes that aliases refer to, each once. */
  readonly aliased: readonly Node[];
}

/** The anchored node of each alias of every file parsed, so lookups need no document at hand. */
const anchored = new WeakMap<object, Node>();

/** The file parsed, or the first reason it cannot be (with its line). */
export function parseSource(name: string, text: string): Source | { readonly error: string } {
  const lines = new LineCounter();
  // uniqueKeys off: the package's own check compares each key with every other (quadratic), and refuses the
  // file; duplicates are found below in one pass and reported as kubectl warns of them.
  const parsed = parseAllDocuments(text, { version: '1.1', lineCounter: lines, prettyErrors: false, uniqueKeys: false });
  const documents = Array.isArray(parsed) ? parsed : [];
  for (const document of documents) {
    const error = document.errors[0];
    if (error !== undefined) {
      const line = lines.linePos(error.pos[0]).line;
      return { error: `${name}:${line}: not YAML: ${error.message.split('\n')[0]}` };
    }
  }
  const duplicates: Source['duplicates'][number][] = [];
  const aliased = new Set<Node>();
  for (const document of documents) {
    visit(document, {
      Alias(_, alias) {
        const target = alias.resolve(document);
        if (target === undefined) return;
        anchored.set(alias, target as Node);
        aliased.add(target as Node);
      },
      Map(_, map) {
        const seen = new Map<string, Pair<Node, Node | null>>();
        for (const pair of (map as YAMLMap<Node, Node | null>).items) {
          if (!isScalar(pair.key) || typeof pair.key.value === 'symbol') continue;
          const key = String(pair.key.value);
          const first = seen.get(key);
          if (first !== undefined) duplicates.push({ pair, key, firstLine: lines.linePos(first.key.range?.[0] ?? 0).line });
          seen.set(key, pair);
        }
      },
    });
  }
  return { name, text, documents, lines, duplicates, aliased: [...aliased] };
}

/** The node an alias stands for; any other node as it is. */
function deref(node: unknown): Node | undefined {
  if (isScalar(node) || isMap(node) || isSeq(node)) return node;
  return isAlias(node) ? anchored.get(node) : undefined;
}

/** Whether a pair is a `<<` merge key. */
const isMerge = (pair: Pair<Node, Node | null>): boolean => isScalar(pair.key) && typeof pair.key.value === 'symbol';

/** The maps a `<<` pair merges in, first one first. */
function merged(pair: Pair<Node, Node | null>): YAMLMap[] {
  const value = deref(pair.value);
  const sources = isSeq(value) ? (value as YAMLSeq<Node>).items.map(deref) : [value];
  return sources.filter((source): source is YAMLMap => isMap(source));
}

/** The line (from 1) where a node starts. */
export const lineOf = (source: Source, node: Node | Pair | undefined | null): number => {
  const at: unknown = isPair(node) ? node.key : node;
  return source.lines.linePos(isNode(at) ? (at.range?.[0] ?? 0) : 0).line;
};

/** The text of a line of the file (from 1), without its line break; '' past the end. */
export function lineText(source: Source, line: number): string {
  const starts = source.lines.lineStarts;
  const start = starts[line - 1];
  if (start === undefined) return '';
  const end = starts[line] ?? source.text.length;
  return source.text.slice(start, end).replace(/\r?\n$/, '');
}

/** The column (from 1) where a node starts; undefined for none. */
export const columnOf = (source: Source, node: Node | Pair | undefined | null): number | undefined => {
  const at: unknown = isPair(node) ? node.key : node;
  return isNode(at) && at.range ? source.lines.linePos(at.range[0]).col : undefined;
};

/**
 * The pair of a map under a key (written as a plain or quoted string): the last one written, else the first
 * merged map that has it. Aliases are followed.
 */
export function pairOf(node: unknown, key: string, depth = 0): Pair<Node, Node | null> | undefined {
  const map = deref(node);
  if (!isMap(map) || depth > 20) return undefined;
  const pairs = (map as YAMLMap<Node, Node | null>).items;
  // A loop from the end (the last one written wins), not findLast: every field of every pod is read through here.
  let merges = false;
  for (let i = pairs.length - 1; i >= 0; i--) {
    const pairKey = (pairs[i] as Pair<Node, Node | null>).key;
    if (!isScalar(pairKey)) continue;
    const value = pairKey.value;
    if (value === key || (typeof value !== 'string' && typeof value !== 'symbol' && String(value) === key)) return pairs[i];
    if (typeof value === 'symbol') merges = true;
  }
  if (!merges) return undefined;
  for (const pair of pairs) {
    if (!isMerge(pair)) continue;
    for (const source of merged(pair)) {
      const found = pairOf(source, key, depth + 1);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** The value of a map under a key, aliases followed; undefined when missing or null. */
export function get(node: unknown, key: string): Node | undefined {
  return deref(pairOf(node, key)?.value);
}

export function getIn(node: unknown, path: readonly string[]): Node | undefined {
  let current: unknown = node;
  for (const key of path) current = get(current, key);
  return current as Node | undefined;
}

/** A scalar's value as Kubernetes' string fields read it; undefined for anything else. */
export function text(node: unknown): string | undefined {
  const scalar = deref(node);
  if (!isScalar(scalar)) return undefined;
  const value = scalar.value;
  return value === null || value === undefined ? undefined : String(value);
}

/** The items of a sequence, aliases followed (none for anything else). */
export function items(node: unknown): readonly Node[] {
  const seq = deref(node);
  return isSeq(seq) ? (seq as YAMLSeq<Node>).items.map((item) => deref(item) ?? item) : [];
}

/** A map's pairs with string keys as kubectl reads them (each key once, merged keys too), as [key, value, pair]. */
export function entries(node: unknown, depth = 0): [string, Node | null, Pair<Node, Node | null>][] {
  const map = deref(node);
  if (!isMap(map) || depth > 20) return [];
  const found = new Map<string, [string, Node | null, Pair<Node, Node | null>]>();
  const pairs = (map as YAMLMap<Node, Node | null>).items;
  for (const pair of pairs) {
    if (!isScalar(pair.key) || isMerge(pair)) continue;
    const key = String(pair.key.value);
    found.delete(key);
    found.set(key, [key, deref(pair.value) ?? null, pair]);
  }
  for (const pair of pairs) {
    if (!isMerge(pair)) continue;
    for (const source of merged(pair)) {
      for (const entry of entries(source, depth + 1)) if (!found.has(entry[0])) found.set(entry[0], entry);
    }
  }
  return [...found.values()];
}

/** Every string scalar under a node, map keys included, with its node, in the order written (aliases not followed: each place once). */
export function scalars(node: unknown): { readonly value: string; readonly node: Node }[] {
  const found: { value: string; node: Node }[] = [];
  const stack: { node: unknown; depth: number }[] = [{ node, depth: 0 }];
  while (stack.length > 0) {
    const { node: at, depth } = stack.pop() as { node: unknown; depth: number };
    if (depth > 200) continue;
    if (isScalar(at)) {
      if (typeof at.value === 'string') found.push({ value: at.value, node: at });
    } else if (isMap(at)) {
      const pairs = (at as YAMLMap<Node, Node | null>).items;
      for (let i = pairs.length - 1; i >= 0; i--) {
        const pair = pairs[i] as Pair<Node, Node | null>;
        stack.push({ node: pair.value, depth: depth + 1 }, { node: pair.key, depth: depth + 1 });
      }
    } else if (isSeq(at)) {
      const seq = (at as YAMLSeq<Node>).items;
      for (let i = seq.length - 1; i >= 0; i--) stack.push({ node: seq[i], depth: depth + 1 });
    }
  }
  return found;
}

/** One line of a scalar's value, made of pieces of the file's lines (several where YAML folded them into one). */
interface ValueLine {
  readonly pieces: readonly { readonly column: number; readonly line: number }[];
}

/** Where the lines of a string scalar's value come from in the file. */
export interface ValueLines {
  /** The file's line of a place (row and column from 0) in the value; undefined for an empty value. */
  lineAt(row: number, column: number): number | undefined;
  /** Each line of the value, made of pieces of the file's lines. */
  readonly rows: readonly ValueLine[];
}

/**
 * Where the lines of a string scalar's value come from. A literal block keeps its lines, so its row N is the
 * Nth line under its header, found without listing them (every script of every pod is read here); a folded block
 * or a multi-line flow scalar joins lines into one, and its rows are listed.
 */
export function valueLines(source: Source, node: Node): ValueLines {
  const scalar = node as Scalar;
  if (scalar.type !== 'BLOCK_LITERAL') {
    const rows = valueRows(source, scalar);
    return { rows, lineAt: (row, column) => lineInRows(rows, row, column) };
  }
  const start = scalar.range?.[0] ?? 0;
  const end = scalar.range?.[1] ?? start;
  let count = 0;
  for (let at = start; at < end; at++) if (source.text.charCodeAt(at) === NEWLINE) count++;
  const first = source.lines.linePos(start).line + 1;
  return {
    lineAt: (row) => (count === 0 ? undefined : first + Math.min(row, count - 1)),
    get rows() {
      return valueRows(source, scalar);
    },
  };
}

const NEWLINE = 10;

/**
 * Each line of a string scalar's value as pieces of the file's lines: a literal block keeps its lines, a folded
 * block or a multi-line flow scalar joins lines into one, which YAML's folding decides as done here.
 */
function valueRows(source: Source, scalar: Scalar): readonly ValueLine[] {
  const start = scalar.range?.[0] ?? 0;
  const end = scalar.range?.[1] ?? start;
  const first = source.lines.linePos(start).line;
  const raw = source.text.slice(start, end).split(/\r?\n/);
  const block = scalar.type === 'BLOCK_LITERAL' || scalar.type === 'BLOCK_FOLDED';
  // A block's content starts on the line after its header; a flow scalar's on its own first line.
  const content = block ? raw.slice(1) : raw;
  const firstLine = block ? first + 1 : first;
  // A loop, not Math.min(...lines): a script of a few hundred thousand lines is more arguments than a call takes.
  let indent = block ? 1_000 : 0;
  if (block) for (const line of content) if (line.trim() !== '') indent = Math.min(indent, line.length - line.trimStart().length);
  const out: { column: number; line: number }[][] = [];
  let row: { column: number; line: number }[] = [];
  let width = 0;
  let empties = 0;
  let previousNormal = false;
  const folds = scalar.type !== 'BLOCK_LITERAL';
  content.forEach((text, index) => {
    const line = firstLine + index;
    const body = block ? text.slice(indent) : index === 0 ? text : text.trimStart();
    if (index === 0) {
      row.push({ column: 0, line });
      width = body.length;
      previousNormal = body !== '' && !/^\s/.test(body);
      return;
    }
    if (body.trim() === '' && folds) {
      empties++;
      return;
    }
    const normal = !/^\s/.test(body);
    const joined = folds && empties === 0 && previousNormal && normal;
    if (joined) {
      row.push({ column: width + 1, line });
      width += 1 + body.length;
    } else {
      const breaks = folds && empties > 0 && previousNormal && normal ? empties : empties + 1;
      for (let i = 0; i < breaks; i++) {
        out.push(row);
        row = [];
      }
      row.push({ column: 0, line });
      width = body.length;
    }
    empties = 0;
    previousNormal = normal;
  });
  out.push(row);
  return out.map((pieces) => ({ pieces }));
}

/** The file's line of a place (row and column from 0) in a scalar's value, from its rows. */
function lineInRows(lines: readonly ValueLine[], row: number, column: number): number | undefined {
  const pieces = lines[row]?.pieces ?? lines.at(-1)?.pieces;
  if (pieces === undefined || pieces.length === 0) return undefined;
  let line = pieces[0]?.line;
  for (const piece of pieces) if (piece.column <= column) line = piece.line;
  return line;
}
