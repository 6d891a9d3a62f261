// The words of the shell model: a word as the shell expands it (variables, `${X:-word}`, quotes, the output of a
// `$(...)` already run), assignments, `[ ]`/`[[ ]]`/`test` expressions, case patterns, and the command
// substitutions a node's words run first.

import { arithmetic } from './arithmetic.ts';
import { capped, type Context, live, put, type Scope, type State, without } from './state.ts';
import type { Syntax as SyntaxNode } from './syntax.ts';

/**
 * The words of a redirected command that the parser puts after a redirection's target (`exec 2>&1 ./job`, `curl
 * 2>/dev/null -X POST URL`): a redirection takes one word, and the shell passes the rest to the command as its
 * arguments, in order. STATEMENT is the redirected_statement around the command.
 */
export function redirectArguments(statement: SyntaxNode): SyntaxNode[] {
  const extra: SyntaxNode[] = [];
  for (const redirect of statement.children) {
    if (redirect.type === 'file_redirect') extra.push(...redirect.childrenForFieldName('destination').slice(1));
  }
  return extra;
}

/** Runs the command substitutions in a node's words, in order, keeping each one's output when known. */
export function substitutions(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  if (!node.hasSubstitution) return [state];
  // The outermost ones: those inside another run with it.
  const found: SyntaxNode[] = [];
  let end = -1;
  for (const substitution of node.descendantsOfType('command_substitution')) {
    if (substitution === null || substitution.startIndex < end) continue;
    found.push(substitution);
    end = substitution.endIndex;
  }
  if (found.length === 0) return [state];
  let states = [state];
  for (const substitution of found) {
    states = capped(
      states.flatMap((current) => {
        if (!live(current)) return [current];
        const output = echoed(substitution, current);
        return context.walk
          .subshell(substitution, current, scope, context, (child) => context.walk.sequence(substitution, [child], scope, context))
          .map((after) => {
            after.outputs = put(after.outputs, String(substitution.id), output);
            return after;
          });
      }),
      context,
    );
  }
  return states;
}

/** What `$(echo WORDS)` or `$(printf WORD)` prints, when its words are known. */
function echoed(substitution: SyntaxNode, state: State): string | undefined {
  const commands = substitution.namedChildren;
  const only = commands.length === 1 ? commands[0] : undefined;
  if (only?.type !== 'command') return undefined;
  const name = only.childForFieldName('name');
  const program = name === null ? undefined : expand(name, state);
  if (program !== 'echo' && program !== 'printf') return undefined;
  const args = only.childrenForFieldName('argument').map((arg) => (arg === null ? undefined : expand(arg, state)));
  if (args.some((arg) => arg === undefined)) return undefined;
  const words = args as string[];
  if (program === 'printf') return (words[0] ?? '').replace(/%s/, words[1] ?? '').replace(/\\n$/, '');
  return words.filter((word) => !/^-[neE]+$/.test(word)).join(' ');
}

/** `x=VALUE`, `local x=$?`, `export A`: the value kept when known. */
export function assign(node: SyntaxNode, state: State, scope: Scope): void {
  void scope;
  const pairs = node.type === 'variable_assignment' ? [node] : node.namedChildren.filter((child) => child?.type === 'variable_assignment');
  for (const pair of pairs) {
    const name = pair?.childForFieldName('name')?.text;
    const value = pair?.childForFieldName('value');
    if (name === undefined) continue;
    state.vars = put(state.vars, name, value === null || value === undefined ? '' : expand(value, state));
    state.loopVariables = without(state.loopVariables, name);
  }
  if (node.type === 'unset_command') {
    const names = node.namedChildren.map((name) => name.text);
    const functions = names.includes('-f');
    for (const name of names) {
      if (name.startsWith('-')) continue;
      if (functions) state.functions = put(state.functions, name, undefined);
      else state.vars = put(state.vars, name, null);
    }
  }
}

/** A word as the shell expands it; undefined when any part of it is not known. */
export function expand(node: SyntaxNode, state: State): string | undefined {
  switch (node.type) {
    case 'word':
    case 'extglob_pattern':
      return node.text.includes('\\') ? node.text.replace(/\\(.)/gs, '$1') : node.text;
    case 'number':
    case 'test_operator':
      return node.text;
    case 'raw_string':
      return node.text.slice(1, -1);
    case 'ansi_c_string':
      return node.text.slice(2, -1);
    case 'string':
    case 'concatenation':
    case 'command_name': {
      let text = '';
      for (const child of node.children) {
        if (child === null || child.type === '"') continue;
        const part = child.type === 'string_content' ? unescapeDouble(child.text) : expand(child, state);
        if (part === undefined) return undefined;
        text += part;
      }
      return text;
    }
    case 'simple_expansion':
    case 'expansion': {
      const name = node.namedChildren.find((child) => child?.type === 'variable_name' || child?.type === 'special_variable_name');
      if (name === undefined || name === null) return undefined;
      const value = variable(name.text, state);
      if (node.type === 'simple_expansion') return value === null ? '' : value;
      return expansion(node, name, value, state);
    }
    case 'command_substitution':
      return state.outputs.get(String(node.id));
    case 'arithmetic_expansion': {
      // `$((n + 1))` of known values (one that assigns, `$((n++))`, is left not known).
      const result = arithmetic(node.text.slice(3, -2), (name) => variable(name, state));
      return result === undefined || result.assigned.size > 0 ? undefined : String(result.value);
    }
    default:
      return node.text.includes('$') || node.text.includes('`') ? undefined : node.text;
  }
}

/** The text of a double-quoted string's part: its backslashes as the shell reads them inside double quotes. */
const unescapeDouble = (text: string): string => text.replace(/\\([$`"\\\n])/g, (_, char: string) => (char === '\n' ? '' : char));

/**
 * `${X}` and its operators, X's VALUE known or not (null: unset): `${X:-w}` and `${X-w}` the word where X is empty
 * or unset (unset only, without the colon), `${X:=w}` and `${X=w}` the same, assigning it, `${X:+w}` and `${X+w}`
 * the word where X is set, `${#X}` its length; undefined: not known (another operator, or X not known).
 */
function expansion(node: SyntaxNode, name: SyntaxNode, value: string | undefined | null, state: State): string | undefined {
  const first = node.child(1);
  if (first !== null && first.type === '#' && first.startIndex < name.startIndex) {
    return value === undefined ? undefined : String((value ?? '').length);
  }
  const operator = node.children.find(
    (child) => child !== null && child.startIndex > name.startIndex && !child.isNamed && child.type !== '}',
  );
  if (operator === undefined) return value === null ? '' : value;
  const kind = /^(:?)([-=+])$/.exec(operator.type);
  if (kind === null || value === undefined) return undefined;
  const wordNode = node.namedChildren.find((child) => child !== null && child.startIndex > operator.startIndex);
  const word = (): string | undefined => (wordNode === undefined || wordNode === null ? '' : expand(wordNode, state));
  const missing = value === null || (kind[1] === ':' && value === '');
  if (kind[2] === '+') return missing ? '' : word();
  if (!missing) return value;
  const replaced = word();
  if (kind[2] === '=') state.vars = put(state.vars, name.text, replaced);
  return replaced;
}

/** Variables the pod's runtime, the image or the shell set, whatever the manifest says (a Service's too). */
const SET_OUTSIDE =
  /^(HOME|PATH|HOSTNAME|PWD|OLDPWD|SHLVL|IFS|PS[1-4]|PPID|UID|EUID|RANDOM|LINENO|SECONDS|OPTIND|OPTARG|TERM|USER|LOGNAME|SHELL|LANG|LC_\w+|TZ|BASH\w*|KUBERNETES_\w+|\w+_SERVICE_(HOST|PORT\w*)|\w+_PORT_\d+_(TCP|UDP)\w*|\w+_(HOME|VERSION|PATH)|GPG_KEY|GO\w+|PYTHON\w*|NODE_\w+|NPM_\w+|JAVA_\w+)$/;

/** A variable's value on the path (`$?` the status, `$!` a stand-in for the last background job); undefined: not known; null: unset. */
export function variable(name: string, state: State): string | undefined | null {
  if (name === '?') return state.status === undefined ? undefined : String(state.status);
  if (name === '!') return state.lastBackground === undefined ? undefined : '%background';
  if (state.vars.has(name)) return state.vars.get(name);
  return state.closed && /^[A-Za-z_]\w*$/.test(name) && !SET_OUTSIDE.test(name) ? null : undefined;
}

/** The first variable a node expands that is unset, without an operator that stands in for it: `set -u` ends the shell there. */
export function unboundIn(node: SyntaxNode, state: State): string | undefined {
  if (!node.text.includes('$')) return undefined;
  for (const type of ['simple_expansion', 'expansion']) {
    for (const found of node.descendantsOfType(type)) {
      const name = found.namedChildren.find((child) => child?.type === 'variable_name');
      if (name === undefined || name === null || variable(name.text, state) !== null) continue;
      if (type === 'expansion' && found.children.some((child) => child !== null && /^:?[-=+?]$/.test(child.type))) continue;
      return name.text;
    }
  }
  return undefined;
}

/** A word as an integer, as `exit` and `-eq` read it; undefined: not one. */
export const integer = (text: string | undefined): number | undefined =>
  text !== undefined && /^\s*-?\d+\s*$/.test(text) ? Number(text) : undefined;

/** A `[ ]`, `[[ ]]` or `test` expression's truth; undefined: not known. */
export function testExpression(node: SyntaxNode | null, state: State, scope: Scope): boolean | undefined {
  if (node === null) return undefined;
  switch (node.type) {
    case 'parenthesized_expression':
      return testExpression(node.namedChildren[0] ?? null, state, scope);
    case 'unary_expression': {
      const operator = node.child(0)?.text;
      const operand = node.namedChildren.at(-1) ?? null;
      if (operator === '!') {
        const inner = testExpression(operand, state, scope);
        return inner === undefined ? undefined : !inner;
      }
      return unary(operator, operand === null ? undefined : expand(operand, state));
    }
    case 'binary_expression': {
      const left = node.childForFieldName('left');
      const right = node.childForFieldName('right');
      const operator = node.childForFieldName('operator')?.text ?? node.child(1)?.text;
      if (operator === '&&' || operator === '||') {
        const a = testExpression(left, state, scope);
        const b = testExpression(right, state, scope);
        if (operator === '&&') return a === false || b === false ? false : a === true && b === true ? true : undefined;
        return a === true || b === true ? true : a === false && b === false ? false : undefined;
      }
      const a = left === null ? undefined : expand(left, state);
      const b = right === null ? undefined : right.type === 'extglob_pattern' || right.type === 'regex' ? right.text : expand(right, state);
      return binary(operator, a, b, right?.type === 'extglob_pattern');
    }
    default: {
      const value = expand(node, state);
      return value === undefined ? undefined : value !== '';
    }
  }
}

/** `-z X` and `-n X`; undefined: another operator, or X not known. */
function unary(operator: string | undefined, operand: string | undefined): boolean | undefined {
  if (operand === undefined) return undefined;
  if (operator === '-z') return operand === '';
  if (operator === '-n') return operand !== '';
  return undefined;
}

/** `A OP B` of a test: numbers compared, strings or (in `[[ ]]`) patterns matched; undefined: not known. */
function binary(operator: string | undefined, a: string | undefined, b: string | undefined, pattern = false): boolean | undefined {
  if (a === undefined || b === undefined) return undefined;
  const numbers: Record<string, (x: number, y: number) => boolean> = {
    '-eq': (x, y) => x === y,
    '-ne': (x, y) => x !== y,
    '-lt': (x, y) => x < y,
    '-le': (x, y) => x <= y,
    '-gt': (x, y) => x > y,
    '-ge': (x, y) => x >= y,
  };
  const compare = operator === undefined ? undefined : numbers[operator];
  if (compare !== undefined) {
    const [x, y] = [integer(a), integer(b)];
    return x === undefined || y === undefined ? undefined : compare(x, y);
  }
  if (operator === '=' || operator === '==') return pattern ? glob(b).test(a) : a === b;
  if (operator === '!=') return pattern ? !glob(b).test(a) : a !== b;
  return undefined;
}

/** `test ARGS` and `[ ARGS ]`, from their words. */
export function testWords(words: readonly (string | undefined)[]): boolean | undefined {
  const args = words.at(-1) === ']' ? words.slice(0, -1) : [...words];
  if (args[0] === '!') {
    const inner = testWords(args.slice(1));
    return inner === undefined ? undefined : !inner;
  }
  if (args.length === 0) return false;
  if (args.length === 1) return args[0] === undefined ? undefined : args[0] !== '';
  if (args.length === 2) return unary(args[0], args[1]);
  if (args.length === 3) return binary(args[1], args[0], args[2]);
  return undefined;
}

/** Whether a case's word matches one of its patterns; undefined: not known. */
export function matches(value: string | undefined, patterns: readonly SyntaxNode[], state: State): boolean | undefined {
  let unknown = false;
  for (const pattern of patterns) {
    const text = pattern.type === 'extglob_pattern' || pattern.type === 'word' ? pattern.text : expand(pattern, state);
    if (text === '*') return true;
    if (value === undefined || text === undefined || /\$/.test(text)) {
      unknown = true;
      continue;
    }
    if (glob(text).test(value)) return true;
  }
  return unknown ? undefined : false;
}

/** A shell pattern (`*`, `?`, `[...]`) as a regular expression of the whole word. */
function glob(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i] as string;
    if (char === '*') source += '.*';
    else if (char === '?') source += '.';
    else if (char === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) source += '\\[';
      else {
        source += `[${pattern
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else if (char === '\\' && i + 1 < pattern.length) source += `\\${pattern[++i]}`;
    else source += char.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}
