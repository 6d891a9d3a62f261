// A script's own quit of its sidecar, taken out by the byte ranges of its parsed tree, so that the wrapper that
// --inject puts in front is the only one to quit (it quits on every way out). What goes: the statement of each
// quit with its separator (`;`, `&`, its newline when it had the line to itself), or, in an and-or list, the
// quit with its operator before it and a `|| true` after it (where an `||` next to it made its success matter, the
// quit becomes `:`); the scaffolding that only served the quit: a trap whose action was only the quit (the quit
// alone out of a single-quoted action that does more), a `sleep N` right before a quit that nothing follows, and
// after a quit that ends its body, the `sleep N` and, when asked, the `exit 0` that only waited for it and ended the
// script (a status the wrapper would report for every run). A body left with no statement gets `:`, which the shell
// needs there. Everything else stays as written, comments too; what the rewrite does is then proven by the outcome
// model (hand-rolled.ts, sequences.ts).

import { BOOKKEEPING, basename, FILTERS, runsWords } from '../script/commands.ts';
import type { Place } from '../script/requests.ts';
import { parseShell } from '../script/shell.ts';
import type { Syntax } from '../script/syntax.ts';

/** A part of the script replaced: START to END (indexes of the script's text) by TEXT. */
export interface Cut {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

export type Unquitted =
  | { readonly kind: 'rewritten'; readonly script: string; readonly cuts: readonly Cut[] }
  | { readonly kind: 'refused'; readonly why: string };

/** Commands that are neither the job nor a quit: what a statement taken out may hold besides its quit. */
const HARMLESS = new Set([...BOOKKEEPING, ...FILTERS, 'exit', 'return', 'false', 'sleep']);
/** What a trap's action may hold besides its quit and still go whole: it only waited for the quit, or ended the script. */
const TRAP_HARMLESS = new Set(['exit', 'return', 'sleep', 'true', ':']);
/** The bodies whose statements run one after another (those of if, elif and case come after their keyword). */
const BODIES = new Set(['program', 'compound_statement', 'do_group', 'subshell', 'else_clause']);
/** Bodies after a token: `then` of if and elif, `)` of a case item. */
const BODY_AFTER: Readonly<Record<string, string>> = { if_statement: 'then', elif_clause: 'then', case_item: ')' };

/**
 * SCRIPT with the quits at PLACES (each quit command's first word) taken out, or why it cannot be done safely
 * (the quit shares its statement with the job's commands, ...), naming the line of the script.
 */
export function takeQuitsOut(
  script: string,
  places: readonly Place[],
  lineOf: (row: number) => number,
  sleeps = true,
  exits = true,
): Unquitted {
  const root = parseShell(script);
  if (root === null || root.hasError) return { kind: 'refused', why: 'the shell rejects its script' };
  const starts = [0];
  for (let at = script.indexOf('\n'); at >= 0; at = script.indexOf('\n', at + 1)) starts.push(at + 1);
  const quits = places.map((place) => (starts[place.row] ?? script.length) + place.column);
  const cuts: Cut[] = [];
  const gone = new Map<Syntax, Set<Syntax>>();
  for (const [index, quit] of quits.entries()) {
    const line = lineOf(places[index]?.row ?? 0);
    const chain = ancestors(root, quit);
    let at = -1;
    for (let i = chain.length - 2; i >= 0; i--) {
      if (isBodyOf(chain[i] as Syntax, chain[i + 1] as Syntax)) {
        at = i;
        break;
      }
    }
    const body = chain[at];
    const statement = chain[at + 1];
    if (body === undefined || statement === undefined)
      return { kind: 'refused', why: `its quit on line ${line} is in no statement it can take out` };
    const cut = statementCut(body, statement, quit, quits, line, sleeps, exits);
    if ('why' in cut) return { kind: 'refused', why: cut.why };
    cuts.push(...cut.cuts);
    const set = gone.get(body) ?? new Set<Syntax>();
    for (const whole of cut.whole) set.add(whole);
    gone.set(body, set);
  }
  // A loop whose body held only quits goes whole (`for url in $URLS; do curl -X POST $url; done`).
  for (const [body, statements] of [...gone]) {
    const chain = ancestors(root, body.startIndex);
    const loop = chain[chain.indexOf(body) - 1];
    if (
      body.type !== 'do_group' ||
      loop === undefined ||
      !statementsOf(body).every((node) => statements.has(node)) ||
      holdsJob(loop, quits)
    )
      continue;
    const at = chain.indexOf(loop);
    const outer = chain.slice(0, at).findLast((node, i) => isBodyOf(node, chain[i + 1] as Syntax));
    if (outer === undefined || !isBodyOf(outer, loop)) continue;
    gone.delete(body);
    gone.set(outer, new Set([...(gone.get(outer) ?? []), loop]));
  }
  for (const [body, statements] of gone) {
    // A body whose every statement went needs one: `:`, in the place of its first.
    const emptied = body.type !== 'program' && body.type !== 'case_item' && statementsOf(body).every((node) => statements.has(node));
    const ordered = [...statements].sort((a, b) => a.startIndex - b.startIndex);
    for (const [index, node] of ordered.entries()) {
      cuts.push(emptied && index === 0 ? { start: node.startIndex, end: node.endIndex, text: ':' } : lineCut(script, node));
    }
  }
  const merged = mergeCuts(cuts);
  const rewritten = applyCuts(script, merged);
  // A script that was only its sleep and its quit keeps the sleep: it was all the container did.
  if (sleeps && statementsOf(parseShell(rewritten) ?? root).length === 0) return takeQuitsOut(script, places, lineOf, false, exits);
  return { kind: 'rewritten', script: rewritten, cuts: merged };
}

/** The nodes from the root down to the deepest that holds AT. */
function ancestors(root: Syntax, at: number): Syntax[] {
  const chain = [root];
  for (let node: Syntax | undefined = root; node !== undefined; ) {
    node = node.children.find((child) => child.startIndex <= at && at < child.endIndex);
    if (node !== undefined) chain.push(node);
  }
  return chain;
}

/** Whether CHILD is one of the statements of PARENT's body. */
function isBodyOf(parent: Syntax, child: Syntax): boolean {
  if (!child.isNamed || child.type === 'comment') return false;
  if (BODIES.has(parent.type)) return true;
  const token = BODY_AFTER[parent.type];
  if (token === undefined) return false;
  const after = parent.children.findIndex((node) => node.type === token);
  return after >= 0 && parent.children.indexOf(child) > after && child.type !== 'elif_clause' && child.type !== 'else_clause';
}

function statementsOf(body: Syntax): Syntax[] {
  return body.children.filter((child) => isBodyOf(body, child));
}

/** A simple command's program (its first word, a path's last part), or undefined for another node. */
function programOf(node: Syntax): string | undefined {
  const command = node.type === 'redirected_statement' ? node.childForFieldName('body') : node;
  if (command?.type !== 'command') return undefined;
  const name = command.childForFieldName('name');
  return name === null ? undefined : basename(name.text);
}

/** `sleep N`: before a quit that ends the script, or after one, it only waited for the quit. */
const isSleep = (node: Syntax): boolean => programOf(node) === 'sleep';
/** `exit 0` (or `exit` after a quit, whose status is the quit's): the script ends as a success whatever the job did. */
const isExitZero = (node: Syntax): boolean => {
  if (programOf(node) !== 'exit') return false;
  const words = node.text.trim().split(/\s+/);
  return words.length === 1 || (words.length === 2 && /^0$/.test(words[1] ?? ''));
};
const isTolerated = (node: Syntax): boolean => {
  const program = programOf(node);
  return program === 'true' || program === ':' || program === 'echo' || program === 'printf';
};

/** Whether NODE holds a command of the job: anything not a quit (at one of QUITS) nor bookkeeping. */
function holdsJob(node: Syntax, quits: readonly number[]): boolean {
  const stack = [node];
  while (stack.length > 0) {
    const at = stack.pop() as Syntax;
    if (at.type === 'command') {
      const name = at.childForFieldName('name');
      if (name !== null && quits.some((quit) => quit >= at.startIndex && quit < at.endIndex)) {
        // The quit itself, or a command around it (sh -c '...', trap '...'): what else its strings run counts.
        if (quits.includes(name.startIndex)) continue;
        if (stringsHoldJob(at, quits)) return true;
        continue;
      }
      if (name !== null && !HARMLESS.has(basename(name.text))) return true;
    }
    for (const child of at.children) stack.push(child);
  }
  return false;
}

/** Whether the strings of COMMAND that hold quits (a trap's action, sh -c's script) run more commands than those quits. */
function stringsHoldJob(command: Syntax, quits: readonly number[]): boolean {
  const name = command.childForFieldName('name');
  const program = name === null ? '' : basename(name.text);
  for (const word of command.children) {
    if (word.field !== 'argument') continue;
    const inside = quits.filter((quit) => quit >= word.startIndex && quit < word.endIndex);
    if (inside.length === 0) continue;
    // Quoted in pieces ('...'\''...'): its script is not one string to read, so what else it runs is not known.
    if (word.type === 'concatenation') return true;
    const text = word.type === 'raw_string' || word.type === 'string' ? word.text.slice(1, -1) : word.text;
    const tree = parseShell(text);
    if (tree === null || tree.hasError) return true;
    let commands = 0;
    const stack = [tree];
    // A trap's action is more than its quit with any other command in it, a line it writes too.
    const harmless = program === 'trap' ? TRAP_HARMLESS : HARMLESS;
    while (stack.length > 0) {
      const at = stack.pop() as Syntax;
      const inner = at.type === 'command' ? at.childForFieldName('name') : null;
      if (inner !== null && !harmless.has(basename(inner.text))) commands++;
      for (const child of at.children) stack.push(child);
    }
    if (commands > inside.length) return true;
  }
  // A trap's action, a shell's script and the command a program runs are the quit's; any other command's words are the job's.
  return !(program === 'trap' || runsWords(program));
}

/** The and-or list of a statement: its operands and the operator before each (the first has none). */
function andOr(statement: Syntax): { operands: Syntax[]; operators: string[] } {
  if (statement.type !== 'list') return { operands: [statement], operators: [''] };
  const [left, operator, right] = statement.children;
  if (left === undefined || operator === undefined || right === undefined) return { operands: [statement], operators: [''] };
  const inner = andOr(left);
  return { operands: [...inner.operands, right], operators: [...inner.operators, operator.text] };
}

/** What goes of STATEMENT of BODY for the quit at QUIT: its cuts, and the statements taken out whole. */
function statementCut(
  body: Syntax,
  statement: Syntax,
  quit: number,
  quits: readonly number[],
  line: number,
  sleeps: boolean,
  exits: boolean,
): { cuts: Cut[]; whole: Syntax[] } | { why: string } {
  const { operands, operators } = andOr(statement);
  const k = operands.findIndex((operand) => operand.startIndex <= quit && quit < operand.endIndex);
  const operand = operands[k];
  if (operand === undefined) return { why: `its quit on line ${line} is in no statement it can take out` };
  const quitOperand = (node: Syntax): boolean => quits.some((at) => at >= node.startIndex && at < node.endIndex) && !holdsJob(node, quits);
  if (!quitOperand(operand)) {
    const inTrap = trapCuts(operand, quits, line, sleeps, exits);
    if (inTrap !== undefined) return inTrap;
    return { why: `its quit on line ${line} shares a command with the job's (${firstLine(operand.text)}): take it out by hand` };
  }
  // The quit, the quits and `|| true` after it, the sleeps before it when nothing follows.
  let last = k;
  while (last + 1 < operands.length) {
    const next = operands[last + 1] as Syntax;
    const tolerated = operators[last + 1] === '||' && isTolerated(next);
    if (!tolerated && !quitOperand(next) && !(exits && last + 2 === operands.length && isExitZero(next))) break;
    last++;
  }
  let first = k;
  if (last === operands.length - 1) {
    while (first > 0 && ((sleeps && isSleep(operands[first - 1] as Syntax)) || quitOperand(operands[first - 1] as Syntax))) first--;
  }
  // In the middle of a list whose operators around the quit are not both `&&`-like (`a || quit && b`, `quit || b`),
  // the quit's success decided what ran next: it becomes `:`, which succeeds as it did.
  const end = (operands[last] as Syntax).endIndex;
  const middle = last < operands.length - 1;
  if (middle && (operators[first] === '||' || operators[last + 1] === '||'))
    return { cuts: [{ start: (operands[first] as Syntax).startIndex, end, text: ':' }], whole: [] };
  if (first > 0) {
    const before = operands[first - 1] as Syntax;
    return { cuts: [{ start: before.endIndex, end, text: '' }], whole: [] };
  }
  if (middle) {
    const after = operands[last + 1] as Syntax;
    return { cuts: [{ start: statement.startIndex, end: after.startIndex, text: '' }], whole: [] };
  }
  // The whole statement; then the sleeps before it and, where it ends its body, the sleeps and exit 0 after it.
  const siblings = statementsOf(body);
  const at = siblings.indexOf(statement);
  let to = at;
  while (sleeps && to + 1 < siblings.length && isSleep(siblings[to + 1] as Syntax)) to++;
  const ends = to + 1 === siblings.length || (exits && to + 2 === siblings.length && isExitZero(siblings[to + 1] as Syntax));
  if (!ends) to = at;
  else to = siblings.length - 1;
  let from = at;
  if (ends && sleeps) while (from > 0 && isSleep(siblings[from - 1] as Syntax)) from--;
  return { cuts: [], whole: siblings.slice(from, to + 1) };
}

/**
 * The quits of a trap whose single-quoted action holds more than them (`trap 'echo $? > /dev/termination-log; curl
 * ...' EXIT`): taken out of the action as out of a script, the rest of it kept; undefined: NODE is no such trap.
 */
function trapCuts(
  node: Syntax,
  quits: readonly number[],
  line: number,
  sleeps: boolean,
  exits: boolean,
): { cuts: Cut[]; whole: Syntax[] } | { why: string } | undefined {
  const command = node.type === 'redirected_statement' ? node.childForFieldName('body') : node;
  if (command === null || programOf(node) !== 'trap') return undefined;
  const words = command.children.filter(
    (word) => word.field === 'argument' && quits.some((at) => at >= word.startIndex && at < word.endIndex),
  );
  const word = words[0];
  if (words.length !== 1 || word === undefined) return undefined;
  if (word.type !== 'raw_string')
    return {
      why: `its quit on line ${line} is in a trap's action that is not in single quotes, beside other commands: take it out by hand`,
    };
  const inner = word.text.slice(1, -1);
  const base = word.startIndex + 1;
  const places = quits
    .filter((at) => at >= base && at < word.endIndex - 1)
    .map((at) => {
      const relative = at - base;
      const row = inner.slice(0, relative).split('\n').length - 1;
      return { row, column: relative - (inner.lastIndexOf('\n', relative - 1) + 1) };
    });
  const taken = takeQuitsOut(inner, places, () => line, sleeps, exits);
  if (taken.kind === 'refused') return { why: taken.why };
  return { cuts: taken.cuts.map((cut) => ({ start: base + cut.start, end: base + cut.end, text: cut.text })), whole: [] };
}

const firstLine = (text: string): string => {
  const line = text.split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
};

/** A whole statement's cut: with its `;` or `&`, and its line when it had the line to itself (a comment after it stays). */
function lineCut(script: string, node: Syntax): Cut {
  let start = node.startIndex;
  let end = node.endIndex;
  const spaces = /[ \t]*/y;
  spaces.lastIndex = end;
  spaces.exec(script);
  let after = spaces.lastIndex;
  if ((script[after] === ';' && script[after + 1] !== ';') || (script[after] === '&' && script[after + 1] !== '&')) {
    spaces.lastIndex = after + 1;
    spaces.exec(script);
    after = spaces.lastIndex;
    end = after;
  }
  const lineStart = script.lastIndexOf('\n', start - 1) + 1;
  const alone = script.slice(lineStart, start).trim() === '';
  const endsLine = after >= script.length || script[after] === '\n' || script[after] === '\r';
  if (alone && endsLine) {
    start = lineStart;
    end = script.indexOf('\n', after) < 0 ? script.length : script.indexOf('\n', after) + 1;
  } else if (endsLine) {
    while (start > lineStart && (script[start - 1] === ' ' || script[start - 1] === '\t')) start--;
    end = after;
  } else if (!alone || after > end) end = Math.max(end, after);
  return { start, end, text: '' };
}

/** CUTS in order, those that overlap made one (a `:` that stands for a body's statements kept). */
function mergeCuts(cuts: readonly Cut[]): Cut[] {
  const merged: Cut[] = [];
  for (const cut of [...cuts].sort((a, b) => a.start - b.start || b.end - a.end)) {
    const last = merged.at(-1);
    if (last !== undefined && cut.start < last.end) {
      merged[merged.length - 1] = { start: last.start, end: Math.max(last.end, cut.end), text: last.text + cut.text };
    } else merged.push(cut);
  }
  return merged;
}

/** TEXT with CUTS (in order, apart) made. */
function applyCuts(text: string, cuts: readonly Cut[]): string {
  let out = '';
  let from = 0;
  for (const cut of cuts) {
    out += text.slice(from, cut.start) + cut.text;
    from = cut.end;
  }
  return out + text.slice(from);
}
