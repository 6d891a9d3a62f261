// The shell scripts of a container's command (`sh -c SCRIPT`), read by a real parser of POSIX sh and bash
// (tree-sitter's bash grammar, which parses both) and walked the way the shell runs them: in order, through
// `&&` and `||`, `set -e` and `set +e`, functions, and the traps a script sets. What comes out is what the
// rules need to know of each script: every request that tells a sidecar to quit or waits for one, every
// wrapper it runs, whether each runs when the job's own commands fail and when they succeed, and what status
// the container ends with after a failure.

import { type Node as SyntaxNode, Language, Parser } from 'web-tree-sitter';
import { type Place, QUIT_URLS_VARIABLE, type Request, requestOf } from './requests.ts';
import type { ParserMemory } from '../yaml/memory.ts';
import { grammarFiles } from './shell-grammar.ts';

/** WebAssembly's Memory, which the project's type libraries leave out. */
declare const WebAssembly: { readonly Memory: new (descriptor: ParserMemory) => object };

let parser: Parser | undefined;

/** Loads the parser (WebAssembly) once; every other function here needs it loaded. */
export const loadShellParser = (): Promise<void> => loadShellParserWithin(undefined);

/** The same, its memory bounded (memory.ts): V8 maps a memory's whole maximum at once. */
export async function loadShellParserWithin(memory: ParserMemory | undefined): Promise<void> {
  if (parser !== undefined) return;
  const files = grammarFiles();
  await Parser.init({ wasmBinary: files.runtime, ...(memory === undefined ? {} : { wasmMemory: new WebAssembly.Memory(memory) }) });
  const bash = await Language.load(files.bash);
  parser = new Parser();
  parser.setLanguage(bash);
}

/** When a command runs, as far as the script says. */
export interface Runs {
  /** It runs when every command of the job before it succeeded. */
  readonly onSuccess: boolean;
  /** It runs when a command of the job before it failed. */
  readonly onFailure: boolean;
  /** It is under an `if`, a `while` or a `case`: when it runs depends on more than the job's outcome. */
  readonly conditional: boolean;
  /** A command of the job ran before it. */
  readonly afterWork: boolean;
  /** The trap it runs in: EXIT, ERR, or a signal's. */
  readonly trap?: string;
  /** Why it does not run after a failure, when it does not: `&&`, `set -e`, an exit. */
  readonly skippedBy?: string;
}

interface Wrapper {
  readonly program: string;
  /** It tells the sidecar to quit when its command ends (linkerd-await --shutdown; istio-job-run always). */
  readonly quits: boolean;
  /** The command it runs, its first word; undefined: none. */
  readonly child?: string;
  readonly place: Place;
  readonly runs: Runs;
}

export interface ScriptFacts {
  /** Where the parser rejects the script, and the words there. */
  readonly syntaxError?: { readonly place: Place; readonly near: string };
  readonly requests: readonly (Request & { readonly runs: Runs })[];
  readonly wrappers: readonly Wrapper[];
  /** A command of the job runs in it. */
  readonly works: boolean;
  /**
   * After a command of the job failed, the command that decides the container's exit status, when it is not
   * the job's own: a request (its status is the container's) or an `exit 0`.
   */
  readonly statusLostAt?: { readonly place: Place; readonly why: 'request' | 'exit' };
}

/** What the shell was started with: `-e` and `-o pipefail` on its command line. */
export interface ShellOptions {
  readonly errexit: boolean;
  readonly pipefail?: boolean;
}

/** Programs that only prepare, report or wait: not the job's work, whose failure is what the rules follow. */
const NOT_WORK = new Set([
  'echo',
  'printf',
  'sleep',
  'set',
  'trap',
  'export',
  'unset',
  'local',
  'readonly',
  'declare',
  'typeset',
  'shift',
  'true',
  ':',
  'cd',
  'pwd',
  'test',
  '[',
  '[[',
  'command',
  'type',
  'hash',
  'umask',
  'wait',
  'date',
  'source',
  '.',
  'return',
  'break',
  'continue',
  'let',
  'eval',
  'which',
]);
const QUIT_URLS = new RegExp(`\\b${QUIT_URLS_VARIABLE}\\b`);

/** The wrappers that run a command and stop sidecars after it. */
export const WRAPPERS = ['istio-job-run', 'linkerd-await', 'scuttle', 'kubexit'] as const;
/** Commands that only add to the one they run. */
const PREFIXES = new Set(['exec', 'env', 'nice', 'nohup', 'time', 'timeout', 'stdbuf', 'setsid', 'busybox']);

const basename = (word: string): string => word.slice(word.lastIndexOf('/') + 1);

/** A word as the shell would see it, without running anything: quotes removed, expansions kept as written. */
function wordValue(node: SyntaxNode): string {
  switch (node.type) {
    case 'raw_string':
      return node.text.slice(1, -1);
    case 'string':
      return node.namedChildren
        .map((child) => (child?.type === 'string_content' ? unescapeDouble(child.text) : (child?.text ?? '')))
        .join('');
    case 'ansi_c_string':
      return node.text.slice(2, -1);
    case 'concatenation':
      return node.children.map((child) => (child === null ? '' : wordValue(child))).join('');
    case 'word':
      return node.text.replace(/\\(.)/gs, '$1');
    default:
      return node.text;
  }
}

const unescapeDouble = (text: string): string => text.replace(/\\([$`"\\\n])/g, (_, char: string) => (char === '\n' ? '' : char));

interface State {
  errexit: boolean;
  pipefail: boolean;
  /** A failure of the job can still reach this point. */
  failureGoesOn: boolean;
  /** Why it cannot, when it cannot. */
  stoppedBy?: string;
  afterWork: boolean;
  conditional: boolean;
  /** Inside the right side of `&&` after work: runs on success only. */
  onlyOnSuccess: boolean;
  /** Inside the right side of `||` after work: runs on failure only. */
  onlyOnFailure: boolean;
  trap?: string;
  depth: number;
  /** Variables that hold an exit status ($?). */
  statusVariables: Set<string>;
  /** Loop variables over the operator's variable of quit URLs. */
  urlVariables: Map<string, string>;
}

interface Collected {
  requests: (Request & { runs: Runs })[];
  wrappers: Wrapper[];
  works: boolean;
  /** How many of the job's commands were read so far. */
  workCount: number;
  /** The shell was replaced by `exec`: nothing after it runs, not even its traps. */
  replaced: boolean;
  /** Statements read so far, and how deep the one being read is. */
  spent: number;
  nesting: number;
  functions: Map<string, { body: SyntaxNode; offset: Place }>;
  traps: Map<string, { node: SyntaxNode; offset: Place; text: string }>;
  /** The last top-level command a failure of the job reaches, with what it is. */
  lastOnFailure?: { place: Place; what: 'request' | 'exit0' | 'keeps' | 'other' } | undefined;
}

const RESERVED = new Set(['do', 'done', 'then', 'fi', 'elif', 'else', 'esac', 'in', '}']);

/** What a script does, read with the options its shell was started with. */
export function readScript(script: string, options: ShellOptions): ScriptFacts {
  if (parser === undefined) throw new Error('the shell parser is not loaded (loadShellParser)');
  // A line continuation at the very end joins nothing: the shell takes it as the end.
  const tree = parser.parse(script.replace(/\\(\r?\n)?\s*$/, ''));
  if (tree === null) return { requests: [], wrappers: [], works: false, syntaxError: { place: { row: 0, column: 0 }, near: '' } };
  try {
    const root = tree.rootNode;
    const syntaxError = findSyntaxError(root);
    const collected: Collected = {
      requests: [],
      wrappers: [],
      works: false,
      workCount: 0,
      replaced: false,
      spent: 0,
      nesting: 0,
      functions: new Map(),
      traps: new Map(),
    };
    const state: State = {
      errexit: options.errexit,
      pipefail: options.pipefail ?? false,
      failureGoesOn: true,
      afterWork: false,
      conditional: false,
      onlyOnSuccess: false,
      onlyOnFailure: false,
      depth: 0,
      statusVariables: new Set(),
      urlVariables: new Map(),
    };
    statements(root, state, collected, ORIGIN);
    // The traps set for the exit and for errors run after the job, whatever its outcome (EXIT) or after a
    // failure (ERR): read them as running there.
    let statusLostAt: ScriptFacts['statusLostAt'];
    for (const [signal, trap] of collected.replaced ? [] : collected.traps) {
      const inTrap: State = {
        ...state,
        failureGoesOn: true,
        afterWork: true,
        conditional: false,
        onlyOnSuccess: false,
        onlyOnFailure: signal === 'ERR',
        trap: signal,
        statusVariables: new Set(),
      };
      if (signal !== 'EXIT' && signal !== 'ERR') inTrap.conditional = true;
      const lastBefore = collected.lastOnFailure;
      const parsed = parser.parse(trap.text);
      if (parsed === null) continue;
      try {
        statements(parsed.rootNode, inTrap, collected, trap.offset);
      } finally {
        parsed.delete();
      }
      // A trap that ends the script with `exit 0` (or `exit $?` after its request) sets the container's status.
      const last = collected.lastOnFailure;
      if ((signal === 'EXIT' || signal === 'ERR') && last !== lastBefore && last?.what === 'exit0') {
        statusLostAt ??= { place: last.place, why: 'exit' };
      }
      collected.lastOnFailure = lastBefore;
    }
    if (statusLostAt === undefined && collected.works && collected.lastOnFailure?.what === 'request') {
      statusLostAt = { place: collected.lastOnFailure.place, why: 'request' };
    }
    return {
      ...(syntaxError === undefined ? {} : { syntaxError }),
      requests: collected.requests,
      wrappers: collected.wrappers,
      works: collected.works,
      ...(statusLostAt === undefined ? {} : { statusLostAt }),
    };
  } finally {
    tree.delete();
  }
}

const ORIGIN: Place = { row: 0, column: 0 };

/** A node's place in the whole script, for a node of a script parsed from a part of it (a trap's action). */
function placeOf(node: SyntaxNode, offset: Place): Place {
  const { row, column } = node.startPosition;
  return row === 0 ? { row: offset.row, column: offset.column + column } : { row: offset.row + row, column };
}

/** The first place the shell would reject: what the parser could not read, or a reserved word used as a command. */
function findSyntaxError(root: SyntaxNode): ScriptFacts['syntaxError'] {
  const stack: SyntaxNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as SyntaxNode;
    if (node.type === 'ERROR' || node.isMissing) {
      return { place: node.startPosition, near: node.text.split('\n')[0]?.slice(0, 40) ?? '' };
    }
    if (node.type === 'command') {
      const name = node.childForFieldName('name');
      if (name !== null && RESERVED.has(name.text)) return { place: name.startPosition, near: name.text };
    }
    if (!node.hasError && node.type !== 'program' && node.type !== 'command') continue;
    for (let i = node.childCount - 1; i >= 0; i--) {
      const child = node.child(i);
      if (child !== null) stack.push(child);
    }
  }
  return undefined;
}

function statements(node: SyntaxNode, state: State, collected: Collected, offset: Place): void {
  for (const child of node.namedChildren) {
    if (collected.replaced) return;
    if (child !== null) statement(child, state, collected, offset);
  }
}

function runsOf(state: State): Runs {
  return {
    onSuccess: !state.onlyOnFailure,
    onFailure: !state.onlyOnSuccess && (state.failureGoesOn || state.trap === 'EXIT' || state.trap === 'ERR'),
    conditional: state.conditional,
    afterWork: state.afterWork,
    ...(state.trap === undefined ? {} : { trap: state.trap }),
    ...(state.onlyOnSuccess ? { skippedBy: '&&' } : state.failureGoesOn ? {} : { skippedBy: state.stoppedBy ?? 'set -e' }),
  };
}

/** How many statements one script may take to read, functions called as often as they are: a bound on hostile input. */
const BUDGET = 20_000;
/** How deep statements nest before the rest is left unread (the walk recurses). */
const MAX_NESTING = 400;

function statement(node: SyntaxNode, state: State, collected: Collected, offset: Place): void {
  if (state.depth > 40 || collected.spent++ > BUDGET || collected.nesting > MAX_NESTING) return;
  collected.nesting++;
  try {
    visitStatement(node, state, collected, offset);
  } finally {
    collected.nesting--;
  }
}

function visitStatement(node: SyntaxNode, state: State, collected: Collected, offset: Place): void {
  switch (node.type) {
    case 'comment':
    case 'heredoc_body':
      return;
    case 'redirected_statement': {
      const body = node.childForFieldName('body');
      if (body !== null) statement(body, state, collected, offset);
      return;
    }
    case 'command':
      command(node, state, collected, offset);
      return;
    case 'list':
      list(node, state, collected, offset);
      return;
    case 'pipeline': {
      // Each command runs; without pipefail only the last one's status counts, so under set -e a failure of the
      // others goes on.
      const commands = node.namedChildren.filter((child): child is SyntaxNode => child !== null);
      const before = { failureGoesOn: state.failureGoesOn, stoppedBy: state.stoppedBy, works: collected.workCount };
      commands.forEach((child, index) => {
        const last = index === commands.length - 1;
        if (last && !state.pipefail && collected.workCount > before.works) {
          statement(child, state, collected, offset);
          state.failureGoesOn = before.failureGoesOn;
          if (before.stoppedBy === undefined) delete state.stoppedBy;
          else state.stoppedBy = before.stoppedBy;
        } else if (last || state.pipefail) statement(child, state, collected, offset);
        else {
          const errexit = state.errexit;
          state.errexit = false;
          statement(child, state, collected, offset);
          state.errexit = errexit;
        }
      });
      return;
    }
    case 'negated_command':
    case 'subshell':
    case 'compound_statement':
    case 'do_group':
      statements(node, state, collected, offset);
      return;
    case 'for_statement':
    case 'c_style_for_statement': {
      const body = node.childForFieldName('body');
      const variable = node.childForFieldName('variable')?.text;
      const values = node.childrenForFieldName('value').map((value) => value?.text ?? '');
      const urls = values.find((value) => QUIT_URLS.test(value));
      if (variable !== undefined && urls !== undefined) state.urlVariables.set(variable, QUIT_URLS_VARIABLE);
      if (body !== null) statement(body, state, collected, offset);
      return;
    }
    case 'if_statement':
    case 'while_statement':
    case 'case_statement':
    case 'elif_clause':
    case 'else_clause':
    case 'case_item': {
      // A condition is tested: set -e spares it. A body runs only sometimes, but under set -e its failure ends the script.
      const inner: State = { ...state, conditional: true };
      for (let i = 0; i < node.childCount; i++) {
        const child = node.child(i);
        if (child === null || !child.isNamed) continue;
        const tested =
          node.fieldNameForChild(i) === 'condition' || (node.type === 'case_statement' && node.fieldNameForChild(i) === 'value');
        statement(child, tested ? { ...inner, errexit: false } : inner, collected, offset);
      }
      state.afterWork ||= inner.afterWork;
      if (!inner.failureGoesOn) {
        state.failureGoesOn = false;
        state.stoppedBy = inner.stoppedBy ?? 'set -e';
      }
      return;
    }
    case 'function_definition': {
      const name = node.childForFieldName('name')?.text;
      const body = node.childForFieldName('body');
      if (name !== undefined && body !== null) collected.functions.set(name, { body, offset });
      return;
    }
    case 'variable_assignment':
    case 'variable_assignments':
      assignment(node, state);
      return;
    case 'declaration_command':
      assignment(node, state);
      return;
    case 'test_command':
    case 'unset_command':
      return;
    default:
      statements(node, state, collected, offset);
  }
}

/** `x=$?`: x holds the status from now on. */
function assignment(node: SyntaxNode, state: State): void {
  const pairs = node.type === 'variable_assignment' ? [node] : node.descendantsOfType('variable_assignment');
  for (const pair of pairs) {
    const name = pair?.childForFieldName('name')?.text;
    const value = pair?.childForFieldName('value')?.text ?? '';
    if (name === undefined) continue;
    if (/\$\?/.test(value)) state.statusVariables.add(name);
    else state.statusVariables.delete(name);
  }
}

function list(node: SyntaxNode, state: State, collected: Collected, offset: Place): void {
  const [left, operator, right] = [node.child(0), node.child(1), node.child(2)];
  if (left === null || operator === null || right === null) return statements(node, state, collected, offset);
  const workBefore = collected.workCount;
  // The left side never ends the script under set -e: only a list's last command does.
  const leftState: State = { ...state, errexit: false };
  statement(left, leftState, collected, offset);
  state.afterWork = leftState.afterWork;
  state.statusVariables = leftState.statusVariables;
  const leftWorked = collected.workCount > workBefore;
  const rightState: State = { ...state };
  if (leftWorked && operator.type === '&&') rightState.onlyOnSuccess = true;
  if (leftWorked && operator.type === '||') rightState.onlyOnFailure = true;
  const lastBefore = collected.lastOnFailure;
  statement(right, rightState, collected, offset);
  // `quit || true`: the status is the one `true` gives, whatever the quit's; still the quit's doing.
  if (operator.type === '||' && /^\s*(true|:)\s*$/.test(right.text) && lastBefore?.what === 'request') collected.lastOnFailure = lastBefore;
  state.afterWork = rightState.afterWork;
  state.errexit = rightState.errexit;
  state.statusVariables = rightState.statusVariables;
  // `job || other`: a failure of OTHER under set -e ends the script (the job's own failure was handled).
  if (operator.type === '||' && !rightState.failureGoesOn) {
    state.failureGoesOn = false;
    state.stoppedBy = rightState.stoppedBy ?? 'set -e';
  }
  if (leftWorked && operator.type === '&&' && collected.lastOnFailure !== lastBefore) {
    // After a failure the right side never ran: the list's status is the job's.
    collected.lastOnFailure = { place: placeOf(left, offset), what: 'keeps' };
  }
  // `job || exit 1`: a failure goes no further.
  if (leftWorked && operator.type === '||' && /^\s*(exit|return)\b/.test(right.text)) {
    state.failureGoesOn = false;
    state.stoppedBy = `"${right.text.trim()}"`;
  }
}

function command(node: SyntaxNode, state: State, collected: Collected, offset: Place): void {
  const nameNode = node.childForFieldName('name');
  const args = node.childrenForFieldName('argument').filter((arg): arg is SyntaxNode => arg !== null);
  if (nameNode === null) {
    assignment(node, state);
    return;
  }
  let words = [wordValue(nameNode), ...args.map(wordValue)];
  let nodes = [nameNode, ...args];
  // `exec X` replaces the shell with X: nothing after it runs, its traps included.
  const replaces = basename(words[0] ?? '') === 'exec' && words.length > 1 && !state.conditional && state.trap === undefined;
  // `exec X`, `timeout 5m X`, `env A=1 X`: X is the command.
  while (words.length > 1 && PREFIXES.has(basename(words[0] as string))) {
    const prefix = basename(words[0] as string);
    let skip = 1;
    if (prefix === 'busybox' && !['sh', 'ash', 'wget'].includes(words[1] ?? '')) break;
    while (skip < words.length && ((words[skip] as string).startsWith('-') || /^\w+=/.test(words[skip] as string))) skip++;
    if (prefix === 'timeout' && skip < words.length) skip++;
    words = words.slice(skip);
    nodes = nodes.slice(skip);
  }
  const program = basename(words[0] ?? '');
  const place = placeOf(nodes[0] ?? nameNode, offset);
  try {
    runCommand(words, program, place, args, state, collected, offset);
  } finally {
    if (replaces && !state.onlyOnFailure) collected.replaced = true;
  }
}

/** A simple command, its prefixes (exec, timeout, env) taken off: what it does for the rules. */
function runCommand(
  words: string[],
  program: string,
  place: Place,
  args: readonly SyntaxNode[],
  state: State,
  collected: Collected,
  offset: Place,
): void {
  if (program === 'set') return setOptions(words.slice(1), state);
  if (program === 'trap') return trap(args, words.slice(1), collected, offset);
  if (program === 'exit' || program === 'return') {
    if (program === 'return' && state.depth === 0) return;
    const code = words[1];
    const variable = code?.replace(/^\$\{?|\}?$/g, '');
    const keeps = code === undefined || (code.startsWith('$') && variable !== undefined && state.statusVariables.has(variable));
    const zero = code === '0' || code === '$?';
    if (!state.onlyOnSuccess && (state.failureGoesOn || state.trap !== undefined) && !state.conditional) {
      collected.lastOnFailure = { place, what: zero ? 'exit0' : keeps ? 'keeps' : 'other' };
    }
    if (!state.conditional && !state.onlyOnSuccess && !state.onlyOnFailure) {
      state.failureGoesOn = false;
      state.stoppedBy = `"${words.join(' ')}"`;
    } else if (state.onlyOnFailure) {
      state.failureGoesOn = false;
      state.stoppedBy = `"${words.join(' ')}"`;
    }
    return;
  }
  const called = collected.functions.get(words[0] ?? '');
  if (called !== undefined) {
    const inner: State = { ...state, depth: state.depth + 1 };
    statement(called.body, inner, collected, called.offset);
    state.afterWork = inner.afterWork;
    state.errexit = inner.errexit;
    state.failureGoesOn = inner.failureGoesOn;
    if (inner.stoppedBy !== undefined) state.stoppedBy = inner.stoppedBy;
    return;
  }
  if ((WRAPPERS as readonly string[]).includes(program)) {
    const child = childOf(words.slice(1));
    collected.wrappers.push({
      program,
      quits:
        program === 'istio-job-run' ||
        program === 'scuttle' ||
        (program === 'linkerd-await' && words.some((word) => word === '--shutdown' || word === '-S')),
      ...(child === undefined ? {} : { child }),
      place,
      runs: runsOf(state),
    });
    if (child !== undefined && !NOT_WORK.has(basename(child))) work(state, collected, place);
    return;
  }
  const request = requestOf(program, words.slice(1), state.urlVariables, place);
  if (request !== undefined) {
    collected.requests.push({ ...request, runs: runsOf(state) });
    if (!state.onlyOnSuccess && (state.failureGoesOn || state.trap !== undefined) && !state.conditional) {
      collected.lastOnFailure = { place, what: 'request' };
    }
    return;
  }
  if (NOT_WORK.has(program) || program === '') {
    if (
      program !== 'echo' &&
      program !== 'printf' &&
      program !== 'sleep' &&
      !state.conditional &&
      !state.onlyOnSuccess &&
      state.failureGoesOn
    ) {
      collected.lastOnFailure = { place, what: 'other' };
    }
    return;
  }
  work(state, collected, place);
}

function work(state: State, collected: Collected, place: Place): void {
  collected.works = true;
  collected.workCount++;
  state.afterWork = true;
  if (!state.onlyOnSuccess && !state.conditional && (state.failureGoesOn || state.trap !== undefined)) {
    collected.lastOnFailure = { place, what: 'keeps' };
  }
  // Under set -e a failing command ends the script, unless it is tested (if, while, the left of && and ||).
  if (state.errexit && state.trap === undefined) {
    state.failureGoesOn = false;
    state.stoppedBy = 'set -e';
  }
}

/** `set -e`, `set +o errexit`, `set -euo pipefail`: the options the rules follow. */
function setOptions(words: readonly string[], state: State): void {
  for (const { name, on } of shellOptions(words)) {
    if (name === 'errexit') state.errexit = on;
    if (name === 'pipefail') state.pipefail = on;
  }
}

/** The options of `set` or of a shell's command line: single letters (-e) and named ones (-o NAME), each on or off. */
export function shellOptions(words: readonly string[]): { name: string; on: boolean }[] {
  const found: { name: string; on: boolean }[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    const flags = /^([-+])([a-zA-Z]+)$/.exec(word);
    if (flags === null) break;
    const on = flags[1] === '-';
    for (const letter of flags[2] as string) {
      if (letter === 'e') found.push({ name: 'errexit', on });
      else if (letter === 'o') found.push({ name: words[++i] ?? '', on });
    }
  }
  return found;
}

/** `trap ACTION SIGNAL...`: the action is kept, to be read as running at the exit, at an error or a signal. */
function trap(args: readonly SyntaxNode[], words: readonly string[], collected: Collected, offset: Place): void {
  const [action, ...signals] = words;
  const actionNode = args[0];
  if (action === undefined || actionNode === undefined) return;
  for (const raw of signals) {
    const signal = raw.toUpperCase().replace(/^SIG/, '');
    const name = signal === '0' ? 'EXIT' : signal;
    if (action === '' || action === '-') collected.traps.delete(name);
    else {
      const quoted = actionNode.type === 'string' || actionNode.type === 'raw_string';
      const at = placeOf(actionNode, offset);
      collected.traps.set(name, { node: actionNode, offset: quoted ? { row: at.row, column: at.column + 1 } : at, text: action });
    }
  }
}

/** Switches of the wrappers, which take no value; their other options do. */
const SWITCHES = /^(-S|--shutdown|--(no-)?wait|--(no-)?start-without-proxy|-v|--verbose)$/;

/** The command a wrapper runs: its first word after its own options (and `--`). */
function childOf(words: readonly string[]): string | undefined {
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (word === '--') return words[i + 1];
    if (!word.startsWith('-')) return word;
    if (!word.includes('=') && !SWITCHES.test(word)) i++;
  }
  return undefined;
}
