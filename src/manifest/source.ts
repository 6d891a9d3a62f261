// A YAML file as Kubernetes reads it, for --check and --inject: every document parsed with the `yaml` package's
// Document API under YAML 1.1 (what Kubernetes' own readers follow: `0644` is octal, `yes` a boolean), each node
// with its place in the text. Nothing is ever printed from the parsed values: --inject inserts text at these
// places (edits.ts), so every byte it does not add stays as it was written.

import {
  type Document,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  type Pair,
  parseAllDocuments,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';

export interface Source {
  /** How messages name the file: its path as given, or <stdin>. */
  readonly name: string;
  readonly text: string;
  readonly documents: readonly Document.Parsed[];
  readonly lines: LineCounter;
}

/** The file parsed, or the first reason it cannot be (with its line). */
export function parseSource(name: string, text: string): Source | { readonly error: string } {
  const lines = new LineCounter();
  const parsed = parseAllDocuments(text, { version: '1.1', lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const documents = Array.isArray(parsed) ? parsed : [];
  for (const document of documents) {
    const error = document.errors[0];
    if (error !== undefined) {
      const line = lines.linePos(error.pos[0]).line;
      return { error: `${name}:${line}: not YAML: ${error.message.split('\n')[0]}` };
    }
  }
  return { name, text, documents, lines };
}

/** The line (from 1) where a node starts. */
export const lineOf = (source: Source, node: Node | Pair | undefined | null): number => {
  const at: unknown = isPair(node) ? node.key : node;
  return source.lines.linePos(isNode(at) ? (at.range?.[0] ?? 0) : 0).line;
};

/** The pair of a map under a key (written as a plain or quoted string). */
export function pairOf(node: unknown, key: string): Pair<Node, Node | null> | undefined {
  if (!isMap(node)) return undefined;
  return (node as YAMLMap<Node, Node | null>).items.find((pair) => isScalar(pair.key) && String(pair.key.value) === key);
}

/** The value of a map under a key; undefined when missing or null. */
export function get(node: unknown, key: string): Node | undefined {
  return pairOf(node, key)?.value ?? undefined;
}

export function getIn(node: unknown, path: readonly string[]): Node | undefined {
  let current: unknown = node;
  for (const key of path) current = get(current, key);
  return current as Node | undefined;
}

/** A scalar's value as Kubernetes' string fields read it; undefined for anything else. */
export function text(node: unknown): string | undefined {
  if (!isScalar(node)) return undefined;
  const value = node.value;
  return value === null || value === undefined ? undefined : String(value);
}

/** The items of a sequence (none for anything else). */
export function items(node: unknown): readonly Node[] {
  return isSeq(node) ? ((node as YAMLSeq<Node>).items as Node[]) : [];
}

/** A map's pairs with string keys, as [key, value]. */
export function entries(node: unknown): [string, Node | null, Pair<Node, Node | null>][] {
  if (!isMap(node)) return [];
  return (node as YAMLMap<Node, Node | null>).items
    .filter((pair) => isScalar(pair.key))
    .map((pair) => [String((pair.key as { value: unknown }).value), pair.value, pair]);
}

/** Every string scalar under a node, map keys included, with its node. */
export function* scalars(node: unknown): Generator<{ readonly value: string; readonly node: Node }> {
  if (isScalar(node)) {
    if (typeof node.value === 'string') yield { value: node.value, node };
  } else if (isMap(node)) {
    for (const pair of (node as YAMLMap<Node, Node | null>).items) {
      yield* scalars(pair.key);
      yield* scalars(pair.value);
    }
  } else if (isSeq(node)) {
    for (const item of (node as YAMLSeq<Node>).items) yield* scalars(item);
  }
}
