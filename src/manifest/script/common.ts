// The shapes of script most Jobs carry, read here without the WebAssembly parser: simple commands of plain
// words, numbers, quotes and $NAME; assignments; pipelines; && and ||; while and until loops; statements ended by
// newlines and `;`. The tree is the one tree-sitter's bash grammar gives for the same text, node for node
// (common.test.ts compares the two on every script it reads); anything else (a comment, a redirection, `$(...)`,
// `if`, a glob, a backslash...) is left to the parser. A file whose scripts all have these shapes never runs the
// parser's code hot enough for V8 to optimise it, which for 10,000 such scripts costs more CPU than parsing them.

import { Syntax, textOf } from './syntax.ts';

/** Characters of a plain word: anything else (globs, braces, `~`, `!`, `\`...) is the parser's. */
const PLAIN = /[A-Za-z0-9_./:=-]/y;
const PLAIN_RUN = /[A-Za-z0-9_./:=-]+/y;
/** A command's name, as the parser reads it in every context (`-x`, `x@y` as a name it reads otherwise). */
const COMMAND_NAME = /^[A-Za-z_./][A-Za-z0-9_./-]*$/;
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
/** `_` alone is the shell's own variable, which the parser reads otherwise. */
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]+|[A-Za-z])=/;
const NUMBER = /^-?[0-9]+$/;
const DIGIT_FIRST = /^-?[0-9]/;
const BLANK = /[ \t]*/y;
/** Loops inside loops read here; deeper, the parser reads the script (the reader recurses). */
const MAX_LOOPS = 64;
/** Words with a meaning of their own where a command starts: what this reader does not read. */
const RESERVED = new Set([
  'do',
  'done',
  'while',
  'until',
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'case',
  'esac',
  'for',
  'select',
  'in',
  'function',
  'declare',
  'typeset',
  'export',
  'local',
  'readonly',
  'unset',
  'unsetenv',
]);

/** Not a shape this reader knows: the parser reads the script. One error, thrown again and again (no stack each time). */
const UNKNOWN = new Error('a shape the common reader leaves to the parser');

const give = (): never => {
  throw UNKNOWN;
};

/** The tree of SCRIPT, as tree-sitter's bash grammar makes it; undefined: a shape left to the parser. */
export function parseCommon(script: string): Syntax | undefined {
  try {
    return new Reader(script).program();
  } catch (error) {
    if (error === UNKNOWN) return undefined;
    throw error;
  }
}

type Child = readonly [Syntax, string | null];

class Reader {
  readonly #text: string;
  readonly #source: ReturnType<typeof textOf>;
  #at = 0;
  /** Loops open around the place being read. */
  #loops = 0;

  constructor(text: string) {
    this.#text = text;
    this.#source = textOf(text);
  }

  /** A node of TYPE from START to END with CHILDREN (each under its field). */
  #node(type: string, start: number, end: number, children: readonly Child[] = []): Syntax {
    const node = new Syntax(type, true, false, start, end, this.#source);
    for (const [child, field] of children) node.append(child, field);
    node.done();
    return node;
  }

  /** The token TYPE (an anonymous node: an operator, a keyword, a quote) at START. */
  #token(type: string, start: number): Child {
    return [new Syntax(type, false, false, start, start + type.length, this.#source), null];
  }

  #blank(): void {
    BLANK.lastIndex = this.#at;
    BLANK.test(this.#text);
    this.#at = BLANK.lastIndex;
  }

  #blankLines(): void {
    for (;;) {
      this.#blank();
      if (this.#text.charCodeAt(this.#at) !== 10) return;
      this.#at++;
    }
  }

  #peek(offset = 0): string {
    return this.#text[this.#at + offset] ?? '';
  }

  /** Where a word ends: a blank, a newline, an operator or the end. */
  #delimiter(offset = 0): boolean {
    const char = this.#peek(offset);
    return char === '' || char === ' ' || char === '\t' || char === '\n' || char === ';' || char === '|' || char === '&';
  }

  /** The keyword WORD where a command starts. */
  #keyword(word: string): boolean {
    return this.#text.startsWith(word, this.#at) && this.#delimiter(word.length);
  }

  program(): Syntax {
    this.#blankLines();
    if (this.#at >= this.#text.length) give();
    const start = this.#at;
    const children = this.#statements(null, () => this.#at >= this.#text.length);
    return this.#node('program', start, this.#text.length, children);
  }

  /** Statements (under FIELD) until END says so, each ended by a newline, `;` or the end; at least one. */
  #statements(field: string | null, end: () => boolean): Child[] {
    const children: Child[] = [];
    for (;;) {
      this.#blankLines();
      if (end()) return children.length === 0 ? give() : children;
      children.push([this.#list(), field]);
      this.#blank();
      const char = this.#peek();
      if (char === ';') {
        if (this.#peek(1) === ';' || this.#peek(1) === '&') give();
        children.push([this.#token(';', this.#at)[0], field]);
        this.#at++;
      } else if (char !== '\n' && char !== '') give();
    }
  }

  /** Pipelines joined by && and ||, the first pair innermost. */
  #list(): Syntax {
    let left = this.#pipeline();
    for (;;) {
      this.#blank();
      const operator = this.#text.startsWith('&&', this.#at) ? '&&' : this.#text.startsWith('||', this.#at) ? '||' : undefined;
      if (operator === undefined) return this.#peek() === '&' ? give() : left;
      const at = this.#at;
      this.#at += 2;
      this.#blank();
      if (this.#peek() === '\n') give();
      const right = this.#pipeline();
      left = this.#node('list', left.startIndex, right.endIndex, [[left, null], this.#token(operator, at), [right, null]]);
    }
  }

  #pipeline(): Syntax {
    const first = this.#command();
    const children: Child[] = [[first, null]];
    for (;;) {
      this.#blank();
      if (this.#peek() !== '|' || this.#peek(1) === '|') break;
      if (this.#peek(1) === '&') give();
      children.push(this.#token('|', this.#at));
      this.#at++;
      this.#blank();
      if (this.#peek() === '\n') give();
      children.push([this.#command(), null]);
    }
    if (children.length === 1) return first;
    return this.#node('pipeline', first.startIndex, (children.at(-1) as Child)[0].endIndex, children);
  }

  #command(): Syntax {
    this.#blank();
    if (this.#keyword('while') || this.#keyword('until')) return this.#loop();
    const start = this.#at;
    PLAIN_RUN.lastIndex = start;
    const word = PLAIN_RUN.exec(this.#text)?.[0] ?? give();
    if (RESERVED.has(word)) give();
    const assignment = ASSIGNMENT.exec(word);
    if (assignment !== null) return this.#assignment(start, (assignment[1] as string).length);
    if (!COMMAND_NAME.test(word)) give();
    const name = this.#word();
    if (name.type !== 'word') give();
    const children: Child[] = [[this.#node('command_name', name.startIndex, name.endIndex, [[name, null]]), 'name']];
    let end = name.endIndex;
    for (;;) {
      this.#blank();
      if (this.#delimiter()) break;
      const argument = this.#word();
      children.push([argument, 'argument']);
      end = argument.endIndex;
    }
    return this.#node('command', start, end, children);
  }

  /** `NAME=VALUE` alone as a statement (a command after it is the parser's). */
  #assignment(start: number, length: number): Syntax {
    this.#at = start + length + 1;
    if (this.#delimiter()) give();
    const value = this.#word();
    this.#blank();
    const next = this.#peek();
    if (next !== '' && next !== '\n' && next !== ';') give();
    return this.#node('variable_assignment', start, value.endIndex, [
      [this.#node('variable_name', start, start + length), 'name'],
      this.#token('=', start + length),
      [value, 'value'],
    ]);
  }

  /** One word: plain (a word or a number), '...', "..." or $NAME, followed by a delimiter. */
  #word(): Syntax {
    const start = this.#at;
    const char = this.#peek();
    let node: Syntax;
    if (char === "'") {
      const close = this.#text.indexOf("'", start + 1);
      if (close < 0 || this.#text.slice(start, close).includes('\n')) give();
      node = this.#node('raw_string', start, close + 1);
      this.#at = close + 1;
    } else if (char === '"') {
      node = this.#string();
    } else if (char === '$') {
      node = this.#expansion();
    } else {
      PLAIN_RUN.lastIndex = start;
      const text = PLAIN_RUN.exec(this.#text)?.[0] ?? give();
      const number = NUMBER.test(text);
      if (text.startsWith('=') || (!number && DIGIT_FIRST.test(text))) give();
      node = this.#node(number ? 'number' : 'word', start, start + text.length);
      this.#at = start + text.length;
    }
    // Two pieces side by side (a"b", $a/b) are a concatenation: the parser's.
    if (!this.#delimiter()) give();
    return node;
  }

  /** "...": its text and $NAMEs (no other expansion, no backslash, on one line). */
  #string(): Syntax {
    const start = this.#at;
    const close = this.#text.indexOf('"', start + 1);
    if (close < 0 || /[\\`\n]/.test(this.#text.slice(start + 1, close))) give();
    const children: Child[] = [this.#token('"', start)];
    let from = start + 1;
    for (let dollar = this.#text.indexOf('$', from); dollar >= 0 && dollar < close; dollar = this.#text.indexOf('$', from)) {
      if (dollar > from) children.push([this.#node('string_content', from, dollar), null]);
      this.#at = dollar;
      children.push([this.#expansion(), null]);
      from = this.#at;
    }
    if (close > from) children.push([this.#node('string_content', from, close), null]);
    children.push(this.#token('"', close));
    this.#at = close + 1;
    return this.#node('string', start, close + 1, children);
  }

  /** $NAME or $?. */
  #expansion(): Syntax {
    const start = this.#at;
    let name: Syntax;
    if (this.#peek(1) === '?') name = this.#node('special_variable_name', start + 1, start + 2);
    else {
      NAME.lastIndex = start + 1;
      const found = NAME.exec(this.#text)?.[0] ?? give();
      if (found === '_') give();
      name = this.#node('variable_name', start + 1, start + 1 + found.length);
    }
    // $a.b, $a-b: where the name ends, a word that goes on is a concatenation.
    PLAIN.lastIndex = name.endIndex;
    if (PLAIN.test(this.#text)) give();
    this.#at = name.endIndex;
    return this.#node('simple_expansion', start, name.endIndex, [this.#token('$', start), [name, null]]);
  }

  /** `while|until CONDITION; do BODY; done`. */
  #loop(): Syntax {
    if (++this.#loops > MAX_LOOPS) give();
    const start = this.#at;
    const keyword = this.#text.startsWith('while', start) ? 'while' : 'until';
    const children: Child[] = [this.#token(keyword, start)];
    this.#at += keyword.length;
    children.push(...this.#statements('condition', () => this.#keyword('do')));
    const doAt = this.#at;
    this.#at += 2;
    const body: Child[] = [this.#token('do', doAt), ...this.#statements(null, () => this.#keyword('done')), this.#token('done', this.#at)];
    this.#at += 4;
    this.#loops--;
    children.push([this.#node('do_group', doAt, this.#at, body), 'body']);
    return this.#node('while_statement', start, this.#at, children);
  }
}
