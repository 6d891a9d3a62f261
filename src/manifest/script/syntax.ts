// A parsed script as plain objects. The parser's own nodes live in WebAssembly memory, and every property read
// of one crosses into it and builds a new object; the outcome model reads the same nodes many times (once per
// path), so the tree is copied out once, in one walk of a cursor, and the parser's tree freed at once.

import type { Language, Tree } from 'web-tree-sitter';

/**
 * The cursor functions of web-tree-sitter's WebAssembly binding (its tree-sitter.c), which its TreeCursor calls.
 * Each takes the tree's address and finds the cursor in the binding's transfer buffer, where every move writes
 * it back; TreeCursor copies the cursor's four words in and out of that buffer in JavaScript around every call,
 * which costs more than the call. The walk below calls them directly: the buffer carries the cursor from one
 * call to the next, and nothing else runs in between. A move answers 1 when it moved.
 */
const CURSOR_FUNCTIONS = [
  '_ts_tree_root_node_wasm',
  '_ts_tree_cursor_new_wasm',
  '_ts_tree_cursor_delete_wasm',
  '_ts_tree_cursor_goto_first_child_wasm',
  '_ts_tree_cursor_goto_next_sibling_wasm',
  '_ts_tree_cursor_goto_parent_wasm',
  '_ts_tree_cursor_current_node_type_id_wasm',
  '_ts_tree_cursor_current_node_is_missing_wasm',
  '_ts_tree_cursor_current_field_id_wasm',
  '_ts_tree_cursor_start_index_wasm',
  '_ts_tree_cursor_end_index_wasm',
] as const;

type CursorBinding = Record<(typeof CURSOR_FUNCTIONS)[number], (tree: number) => number>;

let binding: CursorBinding | undefined;

/**
 * Keeps the binding: MODULE is the options object given to Parser.init, which the binding's loader fills in with
 * its exports. Throws, naming what is missing, when it does not hold them (another version of web-tree-sitter).
 */
export function useCursorBinding(module: object): void {
  const missing = CURSOR_FUNCTIONS.filter((name) => typeof (module as Record<string, unknown>)[name] !== 'function');
  if (missing.length > 0) throw new Error(`web-tree-sitter's binding has no ${missing.join(', ')}`);
  binding = module as CursorBinding;
}

export interface Point {
  readonly row: number;
  readonly column: number;
}

let nextId = 1;

const NONE: readonly Syntax[] = Object.freeze([]);

/** The text a tree was parsed from, and where each of its lines starts. */
/** The text of a tree that a reader other than the parser builds (common.ts). */
export const textOf = (text: string): Text => new Text(text);

class Text {
  readonly source: string;
  readonly #lineStarts: number[] = [0];

  constructor(source: string) {
    this.source = source;
    for (let at = source.indexOf('\n'); at >= 0; at = source.indexOf('\n', at + 1)) this.#lineStarts.push(at + 1);
  }

  /** The row and column of INDEX (both counted as the parser counts them, in UTF-16 units). */
  point(index: number): Point {
    let low = 0;
    let high = this.#lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.#lineStarts[middle] as number) <= index) low = middle;
      else high = middle - 1;
    }
    return { row: low, column: index - (this.#lineStarts[low] as number) };
  }
}

const NAMED = 1;
const MISSING = 2;
const ERROR = 4;
const SUBSTITUTION = 8;

/**
 * A node of the tree, with the part of web-tree-sitter's Node interface that the readers of scripts use. Kept
 * small (a script of a few megabytes has millions of nodes): flags in one number, text and position computed
 * when asked, a leaf's lists the one empty list, and the named children the same list as all of them until an
 * anonymous one (a token) comes.
 */
export class Syntax {
  /** Unique among the nodes of every tree made in this process. */
  readonly id = nextId++;
  children: readonly Syntax[] = NONE;
  namedChildren: readonly Syntax[] = NONE;
  nextSibling: Syntax | null = null;
  /** The field of its parent it is, if any. */
  field: string | null = null;
  #flags: number;
  readonly #source: Text;
  readonly type: string;
  readonly startIndex: number;
  readonly endIndex: number;

  constructor(type: string, isNamed: boolean, isMissing: boolean, start: number, end: number, source: Text) {
    this.type = type;
    this.startIndex = start;
    this.endIndex = end;
    this.#source = source;
    this.#flags =
      (isNamed ? NAMED : 0) |
      (isMissing ? MISSING : 0) |
      (type === 'ERROR' || isMissing ? ERROR : 0) |
      (type === 'command_substitution' ? SUBSTITUTION : 0);
  }

  get isNamed(): boolean {
    return (this.#flags & NAMED) !== 0;
  }

  get isMissing(): boolean {
    return (this.#flags & MISSING) !== 0;
  }

  /** It, or a node under it, is an error or a missing token. */
  get hasError(): boolean {
    return (this.#flags & ERROR) !== 0;
  }

  /** It is a command substitution (`$(...)`, backquotes), or one is under it. */
  get hasSubstitution(): boolean {
    return (this.#flags & SUBSTITUTION) !== 0;
  }

  /** What a child passes up when it is done: its errors and its substitutions. */
  inherit(child: Syntax): void {
    this.#flags |= child.#flags & (ERROR | SUBSTITUTION);
  }

  get text(): string {
    return this.#source.source.slice(this.startIndex, this.endIndex);
  }

  get startPosition(): Point {
    return this.#source.point(this.startIndex);
  }

  get childCount(): number {
    return this.children.length;
  }

  get namedChildCount(): number {
    return this.namedChildren.length;
  }

  child(index: number): Syntax | null {
    return this.children[index] ?? null;
  }

  namedChild(index: number): Syntax | null {
    return this.namedChildren[index] ?? null;
  }

  fieldNameForChild(index: number): string | null {
    return this.children[index]?.field ?? null;
  }

  childForFieldName(name: string): Syntax | null {
    return this.children.find((child) => child.field === name) ?? null;
  }

  childrenForFieldName(name: string): Syntax[] {
    return this.children.filter((child) => child.field === name);
  }

  /** The nodes of TYPE under this one (itself included), in the order of the text. */
  descendantsOfType(type: string): Syntax[] {
    const found: Syntax[] = [];
    const stack: Syntax[] = [this];
    while (stack.length > 0) {
      const node = stack.pop() as Syntax;
      if (node.type === type) found.push(node);
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as Syntax);
    }
    return found;
  }

  /** Its lists at their exact size, once its last child is in (an array grown by push keeps room to spare). */
  done(): void {
    if (this.children.length < 2) return;
    const shared = this.namedChildren === this.children;
    this.children = this.children.slice();
    this.namedChildren = shared ? this.children : this.namedChildren.length < 2 ? this.namedChildren : this.namedChildren.slice();
  }

  /** Adds CHILD as the last child, under FIELD. */
  append(child: Syntax, field: string | null): void {
    child.field = field;
    const shared = this.namedChildren === this.children;
    if (this.children === NONE) this.children = [child];
    else {
      (this.children.at(-1) as Syntax).nextSibling = child;
      (this.children as Syntax[]).push(child);
    }
    if (shared && child.isNamed) this.namedChildren = this.children;
    else if (shared) this.namedChildren = this.children.length === 1 ? NONE : this.children.slice(0, -1);
    else if (child.isNamed && this.namedChildren === NONE) this.namedChildren = [child];
    else if (child.isNamed) (this.namedChildren as Syntax[]).push(child);
  }
}

const namedByLanguage = new WeakMap<Language, readonly boolean[]>();

/** Whether each kind of node of LANGUAGE is named, by its id. */
function namedTypes(language: Language): readonly boolean[] {
  let known = namedByLanguage.get(language);
  if (known === undefined) {
    known = Array.from({ length: language.types.length }, (_, id) => language.nodeTypeIsNamed(id));
    namedByLanguage.set(language, known);
  }
  return known;
}

/** TREE, parsed from TEXT, as plain nodes; the tree itself is left to the caller to delete. */
export function plainTree(tree: Tree, text: string): Syntax {
  if (binding === undefined) throw new Error('the shell parser is not loaded (useCursorBinding)');
  const c = binding;
  const source = new Text(text);
  // What a kind of node is named, and whether it is named, asked of the parser once per language.
  const { types, fields } = tree.language;
  const named = namedTypes(tree.language);
  // Only a tree with an error has missing tokens.
  const missing = tree.rootNode.hasError;
  // The tree's address in WebAssembly memory: web-tree-sitter keeps it at index 0 of its Tree.
  const address = (tree as unknown as { readonly 0: number })[0];
  const here = (): Syntax => {
    const id = c._ts_tree_cursor_current_node_type_id_wasm(address);
    // An id outside the language's table is tree-sitter's ERROR, a named node.
    return new Syntax(
      types[id] || 'ERROR',
      named[id] ?? true,
      missing && c._ts_tree_cursor_current_node_is_missing_wasm(address) === 1,
      c._ts_tree_cursor_start_index_wasm(address),
      c._ts_tree_cursor_end_index_wasm(address),
      source,
    );
  };
  // The binding's cursor starts from the node in the transfer buffer: the root.
  c._ts_tree_root_node_wasm(address);
  c._ts_tree_cursor_new_wasm(address);
  try {
    const root = here();
    // The nodes whose children are being read, the innermost last; a node's errors and substitutions reach its parent when it is done.
    const open: Syntax[] = [root];
    if (c._ts_tree_cursor_goto_first_child_wasm(address) !== 1) return root;
    for (;;) {
      const parent = open.at(-1) as Syntax;
      const node = here();
      parent.append(node, fields[c._ts_tree_cursor_current_field_id_wasm(address)] ?? null);
      if (c._ts_tree_cursor_goto_first_child_wasm(address) === 1) {
        open.push(node);
        continue;
      }
      parent.inherit(node);
      while (c._ts_tree_cursor_goto_next_sibling_wasm(address) !== 1) {
        c._ts_tree_cursor_goto_parent_wasm(address);
        const done = open.pop() as Syntax;
        done.done();
        const above = open.at(-1);
        if (above === undefined) return root;
        above.inherit(done);
      }
    }
  } finally {
    c._ts_tree_cursor_delete_wasm(address);
  }
}
