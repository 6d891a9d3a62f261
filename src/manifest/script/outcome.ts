// The outcome of a shell script, computed by running its parsed tree in the abstract, once for the job
// succeeding and once for it failing: which commands run in what order and the status the shell ends with, by
// the shell's own rules (lists, `!`, if, case, loops, functions, subshells and `$(...)`, pipelines and
// pipefail, set -e and its exceptions, exit, traps, exec, `&` and wait). The job is every command that is
// neither bookkeeping nor one that speaks to a sidecar; in the failing run each of them fails. A test the
// script cannot decide (a file, a variable from outside) is followed both ways, each a path of its own. What
// cannot be known (a sourced file, eval of what is not known, a loop with no end in sight) marks the path
// unknown, and nothing is claimed from it.

import { BOOKKEEPING, basename, FILTERS, innerCommand, shellOptions, shellScript } from './commands.ts';
import type { Place } from './requests.ts';
import type { Syntax as SyntaxNode } from './syntax.ts';

type World = 'success' | 'failure';

export interface Event {
  readonly what: 'work' | 'speak';
  readonly place: Place;
  /** The id of what spoke (a request or a wrapper), from the hooks. */
  readonly said?: number;
  /** The trap it ran in: EXIT or ERR. */
  readonly trap?: string;
  /** Sent in the background and never waited for: the shell may end, and the pod kill it, first. */
  readonly background?: boolean;
  /** Sent inside a loop (while, until, for): it is tried again while the loop goes on. */
  readonly looped?: boolean;
}

export interface Path {
  readonly events: readonly Event[];
  /** The status the shell ends with; undefined: not known. */
  readonly status: number | undefined;
  /** The command that set it, and what it was. */
  readonly statusAt?: Place;
  readonly statusBy: 'exit' | 'command' | 'speak' | 'none';
  /** How the shell ended: at the end of the script, by exit, by set -e, replaced by exec. */
  readonly end: 'end' | 'exit' | 'errexit' | 'exec';
  readonly endText?: string;
  /** A command of the job ran, and one failed. */
  readonly worked: boolean;
  readonly failed: boolean;
  /** Why this path cannot be known to its end. */
  readonly unknown?: string;
  /** The `set` that turned on pipefail in a shell that refuses it, which ended the shell with 2. */
  readonly refused?: Place;
}

export interface Outcome {
  readonly success: readonly Path[];
  readonly failure: readonly Path[];
  /** Why, in a world, the paths shown are not all there are. */
  readonly unknown: { readonly success?: string; readonly failure?: string };
  /** The ids said only in a trap on a signal (TERM, INT, HUP...), which a normal end never runs. */
  readonly onSignal: readonly { readonly said: number; readonly trap: string }[];
}

/** A shell's options at its start. */
export interface Start {
  readonly errexit: boolean;
  readonly pipefail: boolean;
  /** `set -o pipefail` ends the shell with 2 (dash). */
  readonly refusesPipefail: boolean;
  /** The container's environment: variables the script reads with values known. */
  readonly env: ReadonlyMap<string, string>;
}

/** A parsed script, and where its text sits in the whole (for a script inside a string). */
export interface Scope {
  readonly root: SyntaxNode;
  readonly offset: Place;
  readonly id: number;
}

export interface Hooks {
  /** The tree of a script inside a string of the script (`sh -c '...'`, a trap's action); undefined: unparsable. */
  readonly parse: (text: string, at: Place) => Scope | undefined;
  /** What a command says to a sidecar, from its words; `child`: the command a wrapper runs. */
  readonly speaks: (
    words: readonly string[],
    at: { readonly key: string; readonly place: Place },
    loopVariables: ReadonlyMap<string, string>,
  ) => { readonly said: number; readonly child?: readonly string[] } | undefined;
  /** What commands in a tree never run by the model say (a trap on a signal). */
  readonly collect: (scope: Scope) => readonly number[];
}

interface Cons<T> {
  readonly head: T;
  readonly tail: Cons<T> | undefined;
}

interface Fn {
  readonly body: SyntaxNode;
  readonly scope: Scope;
}

interface Trap {
  readonly text: string;
  readonly place: Place;
}

interface State {
  world: World;
  vars: ReadonlyMap<string, string | undefined>;
  loopVariables: ReadonlyMap<string, string>;
  status: number | undefined;
  statusAt: Place | undefined;
  statusBy: Path['statusBy'];
  errexit: boolean;
  pipefail: boolean;
  refusesPipefail: boolean;
  refused: Place | undefined;
  traps: ReadonlyMap<string, Trap>;
  functions: ReadonlyMap<string, Fn>;
  events: Cons<Event> | undefined;
  /** Events of commands in the background not yet waited for. */
  pending: Cons<Event> | undefined;
  lastBackground: number | undefined;
  background: boolean;
  done: 'exit' | 'errexit' | 'exec' | 'return' | 'break' | 'continue' | undefined;
  endText: string | undefined;
  unknown: string | undefined;
  worked: boolean;
  failed: boolean;
  /** Inside a condition, a `!`, or the left of && and ||: set -e spares it. */
  tested: number;
  trap: string | undefined;
  depth: number;
  loops: number;
  /** The output of each command substitution already run, by its node's key. */
  outputs: ReadonlyMap<string, string | undefined>;
  pipe: readonly number[];
}

/** How many paths each run follows, and how many statements it reads in all, before it gives up. */
const MAX_PATHS = 32;
const STEPS_PER_CHARACTER = 4;
const MIN_STEPS = 200_000;
/** How deep statements nest (the walk recurses), functions call, and scripts hold scripts. */
const MAX_NESTING = 300;
const MAX_CALLS = 40;
const MAX_ITERATIONS = 4;
const MAX_WORDS_IN_LOOP = 16;

interface Context {
  readonly hooks: Hooks;
  steps: number;
  readonly maxSteps: number;
  nesting: number;
  unknown: string | undefined;
}

/** The outcome of the script in SCOPE for both worlds. */
export function outcomeOf(scope: Scope, start: Start, hooks: Hooks, size: number): Outcome {
  const onSignal: { said: number; trap: string }[] = [];
  const signalTraps = new Set<string>();
  const unknown: { success?: string; failure?: string } = {};
  const run = (world: World): Path[] => {
    const context: Context = { hooks, steps: 0, maxSteps: Math.max(MIN_STEPS, size * STEPS_PER_CHARACTER), nesting: 0, unknown: undefined };
    const state = initial(world, start);
    const ended = finish(sequence(scope.root, [state], scope, context), context);
    for (const end of ended) {
      for (const [signal, trap] of end.traps) {
        if (signal === 'EXIT' || signal === 'ERR' || signalTraps.has(`${signal}\0${trap.text}`)) continue;
        signalTraps.add(`${signal}\0${trap.text}`);
        const parsed = hooks.parse(trap.text, trap.place);
        if (parsed !== undefined) for (const said of hooks.collect(parsed)) onSignal.push({ said, trap: signal });
      }
    }
    if (context.unknown !== undefined) unknown[world] = context.unknown;
    return ended.map(toPath);
  };
  const success = run('success');
  const failure = run('failure');
  return { success, failure, unknown, onSignal };
}

function initial(world: World, start: Start): State {
  return {
    world,
    vars: new Map(start.env),
    loopVariables: EMPTY,
    status: 0,
    statusAt: undefined,
    statusBy: 'none',
    errexit: start.errexit,
    pipefail: start.pipefail,
    refusesPipefail: start.refusesPipefail,
    refused: undefined,
    traps: EMPTY,
    functions: EMPTY,
    events: undefined,
    pending: undefined,
    lastBackground: undefined,
    background: false,
    done: undefined,
    endText: undefined,
    unknown: undefined,
    worked: false,
    failed: false,
    tested: 0,
    trap: undefined,
    depth: 0,
    loops: 0,
    outputs: EMPTY,
    pipe: [],
  };
}

/** The empty map every state starts from: maps of a state are never changed, only replaced (put, without). */
const EMPTY: ReadonlyMap<never, never> = new Map<never, never>();

/** A copy of a state; its maps and lists are shared, never changed: a write puts a new one in its place. */
const clone = (state: State): State => ({ ...state });

function put<K, V>(map: ReadonlyMap<K, V>, key: K, value: V): ReadonlyMap<K, V> {
  const next = new Map(map);
  next.set(key, value);
  return next;
}

function without<K, V>(map: ReadonlyMap<K, V>, key: K): ReadonlyMap<K, V> {
  if (!map.has(key)) return map;
  const next = new Map(map);
  next.delete(key);
  return next;
}

function toArray<T>(list: Cons<T> | undefined): T[] {
  const items: T[] = [];
  for (let at = list; at !== undefined; at = at.tail) items.push(at.head);
  return items.reverse();
}

function toPath(state: State): Path {
  const unwaited = new Set(toArray(state.pending));
  return {
    events: toArray(state.events).map((event) => (unwaited.has(event) ? { ...event, background: true } : event)),
    status: state.status,
    ...(state.statusAt === undefined ? {} : { statusAt: state.statusAt }),
    statusBy: state.statusBy,
    end: state.done === 'exit' || state.done === 'errexit' || state.done === 'exec' ? state.done : 'end',
    ...(state.endText === undefined ? {} : { endText: state.endText }),
    worked: state.worked,
    failed: state.failed,
    ...(state.unknown === undefined ? {} : { unknown: state.unknown }),
    ...(state.refused === undefined ? {} : { refused: state.refused }),
  };
}

const live = (state: State): boolean => state.done === undefined;

function giveUp(state: State, why: string): State {
  state.unknown ??= why;
  state.done = 'exit';
  state.status = undefined;
  return state;
}

/**
 * At most MAX_PATHS paths. Past the limit the run claims nothing, and stops: what the script says to sidecars is
 * then read from its text (shell.ts), each command as one that runs sometimes.
 */
function capped(states: State[], context: Context): State[] {
  if (states.length <= MAX_PATHS) return states;
  context.unknown ??= `more than ${MAX_PATHS} ways through the script`;
  return [giveUp(states[0] as State, context.unknown)];
}

const placeOf = (node: SyntaxNode, scope: Scope): Place => {
  const { row, column } = node.startPosition;
  return row === 0 ? { row: scope.offset.row, column: scope.offset.column + column } : { row: scope.offset.row + row, column };
};

const keyOf = (node: SyntaxNode, scope: Scope): string => `${scope.id}:${node.startIndex}`;

function push(state: State, event: Event): void {
  state.events = { head: event, tail: state.events };
  if (state.background) state.pending = { head: event, tail: state.pending };
}

/** The statements of a node in order, each on every live path; `cmd &` runs in the background. */
function sequence(node: SyntaxNode, states: State[], scope: Scope, context: Context): State[] {
  let current = states;
  for (const child of node.namedChildren) {
    if (child.type === 'comment') continue;
    const background = child.nextSibling?.type === '&';
    if (current.length === 1) {
      current = capped(statementOf(child, current[0] as State, background, scope, context), context);
      continue;
    }
    const next: State[] = [];
    for (const state of current) for (const after of statementOf(child, state, background, scope, context)) next.push(after);
    current = capped(next, context);
  }
  return current;
}

/** One statement of a sequence on one path: run in the background when BACKGROUND (`cmd &`). */
function statementOf(node: SyntaxNode, state: State, background: boolean, scope: Scope, context: Context): State[] {
  if (!live(state)) return [state];
  return background ? inBackground(node, state, scope, context) : run(node, state, scope, context);
}

function run(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  if (++context.steps > context.maxSteps) context.unknown ??= 'a script longer than the model follows';
  if (context.unknown !== undefined) return [giveUp(state, context.unknown)];
  if (context.nesting > MAX_NESTING) return [giveUp(state, 'statements nested too deeply to follow')];
  context.nesting++;
  try {
    return statement(node, state, scope, context);
  } finally {
    context.nesting--;
  }
}

type Step = (node: SyntaxNode, state: State, scope: Scope, context: Context) => State[];

/** The statements read by a function of their own. */
const STEPS: Readonly<Record<string, Step>> = {
  command: (...args) => command(...args),
  list: (...args) => list(...args),
  pipeline: (...args) => pipeline(...args),
  if_statement: (...args) => ifStatement(...args),
  case_statement: (...args) => caseStatement(...args),
  while_statement: (...args) => whileStatement(...args),
  for_statement: (...args) => forStatement(...args),
  c_style_for_statement: (...args) => forStatement(...args),
};

function statement(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  const step = STEPS[node.type];
  if (step !== undefined) return step(node, state, scope, context);
  switch (node.type) {
    case 'comment':
    case 'heredoc_body':
    case 'heredoc_start':
      return [state];
    case 'redirected_statement': {
      const body = node.childForFieldName('body');
      return body === null ? [state] : run(body, state, scope, context);
    }
    case 'negated_command': {
      state.tested++;
      const ran = sequence(node, [state], scope, context);
      return ran.map((after) => {
        after.tested--;
        if (after.status !== undefined) after.status = after.status === 0 ? 1 : 0;
        return after;
      });
    }
    case 'subshell':
      return subshell(node, state, scope, context, (child) => sequence(node, [child], scope, context)).flatMap((after) =>
        failed(after, scope, context),
      );
    case 'compound_statement':
    case 'do_group':
    case 'program':
      return sequence(node, [state], scope, context);
    case 'function_definition': {
      const name = node.childForFieldName('name')?.text;
      const body = node.childForFieldName('body');
      if (name !== undefined && body !== null) state.functions = put(state.functions, name, { body, scope });
      state.status = 0;
      return [state];
    }
    case 'variable_assignment':
    case 'variable_assignments':
    case 'declaration_command':
    case 'unset_command':
      return substitutions(node, state, scope, context).flatMap((after) => {
        assign(node, after, scope);
        if (node.type === 'declaration_command' || node.type === 'unset_command' || !node.hasSubstitution) after.status = 0;
        return failed(after, scope, context);
      });
    case 'test_command':
      return substitutions(node, state, scope, context).flatMap((after) =>
        decided(testExpression(node.namedChildren[0] ?? null, after, scope), after).flatMap((forked) => failed(forked, scope, context)),
      );
    default:
      // Arithmetic, and what the parser could not read: its commands run, its status is not known.
      return substitutions(node, state, scope, context).flatMap((after) => decided(undefined, after));
  }
}

/** A truth value as statuses: known, one path; not known, a path for each. */
function decided(truth: boolean | undefined, state: State): State[] {
  if (truth !== undefined) {
    state.status = truth ? 0 : 1;
    return [state];
  }
  const other = clone(state);
  state.status = 0;
  other.status = 1;
  return [state, other];
}

/** After a command: an ERR trap runs on a failure set -e would see, then set -e ends the shell. */
function failed(state: State, scope: Scope, context: Context): State[] {
  if (!live(state) || state.status === undefined || state.status === 0 || state.tested > 0) return [state];
  let states = [state];
  const err = state.trap === undefined ? state.traps.get('ERR') : undefined;
  if (err !== undefined) states = runTrap(err, 'ERR', state, context);
  void scope;
  return states.map((after) => {
    if (live(after) && after.errexit) {
      after.done = 'errexit';
      after.endText = 'set -e';
    }
    return after;
  });
}

function list(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  const [left, operator, right] = [node.child(0), node.child(1), node.child(2)];
  if (left === null || operator === null || right === null) return sequence(node, [state], scope, context);
  state.tested++;
  const afterLeft = run(left, state, scope, context);
  return afterLeft.flatMap((after) => {
    after.tested--;
    if (!live(after)) return [after];
    const go = (status: number | undefined): boolean | undefined =>
      status === undefined ? undefined : operator.type === '&&' ? status === 0 : status !== 0;
    const decision = go(after.status);
    if (decision === false) return [after];
    if (decision === true) return run(right, after, scope, context);
    return [after, ...run(right, clone(after), scope, context)];
  });
}

function pipeline(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  const elements = node.namedChildren.filter((child): child is SyntaxNode => child !== null && child.type !== 'comment');
  // `! a | b`: the parser puts the ! on the first command; the shell negates the whole pipeline.
  const negated = elements[0]?.type === 'negated_command';
  if (negated) state.tested++;
  state.pipe = [];
  let states = [state];
  elements.forEach((element, index) => {
    const body = negated && index === 0 ? (element.namedChildren[0] ?? element) : element;
    states = capped(
      states.flatMap((current) =>
        !live(current)
          ? [current]
          : subshell(body, current, scope, context, (child) => run(body, child, scope, context)).map((after) => {
              after.pipe = [...current.pipe, after.status ?? -1];
              return after;
            }),
      ),
      context,
    );
  });
  return states.flatMap((after) => {
    const statuses = after.pipe;
    const last = statuses.at(-1);
    let status: number | undefined = last === -1 ? undefined : last;
    if (after.pipefail) {
      const failing = [...statuses].reverse().find((one) => one !== 0);
      status = failing === undefined ? 0 : failing === -1 ? undefined : failing;
    }
    after.pipe = [];
    if (negated) {
      after.tested--;
      if (status !== undefined) status = status === 0 ? 1 : 0;
    }
    after.status = status;
    return negated ? [after] : failed(after, scope, context);
  });
}

/** A subshell: the parent's variables copied, its own traps, an exit that ends only it. */
function subshell(node: SyntaxNode, state: State, scope: Scope, context: Context, body: (child: State) => State[]): State[] {
  void node;
  void scope;
  const child = clone(state);
  child.traps = EMPTY;
  return finish(body(child), context).map((after) => {
    const parent = clone(state);
    parent.events = after.events;
    parent.pending = after.pending;
    parent.status = after.status;
    parent.statusAt = after.statusAt;
    parent.statusBy = after.statusBy;
    parent.worked = after.worked;
    parent.failed = after.failed;
    parent.unknown = after.unknown;
    return parent;
  });
}

function inBackground(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  const was = state.background;
  state.background = true;
  return subshell(node, state, scope, context, (child) => run(node, child, scope, context)).map((after) => {
    after.background = was;
    after.lastBackground = after.status;
    after.status = 0;
    return after;
  });
}

/** A shell's end: its EXIT trap runs (not after exec), and keeps the status unless it exits. */
function finish(states: State[], context: Context): State[] {
  if (states.every((state) => !state.traps.has('EXIT'))) return states;
  return states.flatMap((state) => {
    if (state.done === 'exec' || state.trap !== undefined) return [state];
    const exit = state.traps.get('EXIT');
    if (exit === undefined) return [state];
    if (state.done !== undefined) {
      const ended = { done: state.done, endText: state.endText };
      state.done = undefined;
      return runTrap(exit, 'EXIT', state, context).map((after) => {
        if (after.done === undefined || after.done === 'return') Object.assign(after, ended);
        return after;
      });
    }
    return runTrap(exit, 'EXIT', state, context);
  });
}

function runTrap(trap: Trap, name: string, state: State, context: Context): State[] {
  const scope = context.hooks.parse(trap.text, trap.place);
  if (scope === undefined) return [state];
  const status = state.status;
  const statusAt = state.statusAt;
  const statusBy = state.statusBy;
  state.trap = name;
  if (name === 'EXIT') state.traps = without(state.traps, 'EXIT');
  const tested = state.tested;
  state.tested = 0;
  return sequence(scope.root, [state], scope, context).map((after) => {
    after.trap = undefined;
    after.tested = tested;
    if (after.done !== 'exit') {
      after.status = status;
      after.statusAt = statusAt;
      after.statusBy = statusBy;
    }
    return after;
  });
}

function ifStatement(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  // Clauses in order: the if's own condition and body, then each elif, then an else.
  const clauses: { condition: SyntaxNode[]; body: SyntaxNode[] }[] = [{ condition: [], body: [] }];
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child === null || !child.isNamed || child.type === 'comment') continue;
    if (child.type === 'elif_clause' || child.type === 'else_clause') {
      const clause: { condition: SyntaxNode[]; body: SyntaxNode[] } = { condition: [], body: [] };
      let inCondition = child.type === 'elif_clause';
      for (let j = 0; j < child.childCount; j++) {
        const part = child.child(j);
        if (part === null) continue;
        if (part.type === 'then') inCondition = false;
        if (!part.isNamed || part.type === 'comment') continue;
        (inCondition ? clause.condition : clause.body).push(part);
      }
      clauses.push(clause);
    } else if (node.fieldNameForChild(i) === 'condition') clauses[0]?.condition.push(child);
    else clauses[0]?.body.push(child);
  }
  let pending = [state];
  const out: State[] = [];
  for (const clause of clauses) {
    if (pending.length === 0) break;
    if (clause.condition.length === 0) {
      out.push(...pending.flatMap((current) => statements(clause.body, current, scope, context)));
      pending = [];
      break;
    }
    const tested = pending.flatMap((current) => {
      current.tested++;
      return statements(clause.condition, current, scope, context).map((after) => {
        after.tested--;
        return after;
      });
    });
    pending = [];
    for (const after of tested) {
      if (!live(after)) out.push(after);
      else if (after.status === 0) out.push(...statements(clause.body, after, scope, context));
      else if (after.status === undefined) {
        out.push(...statements(clause.body, clone(after), scope, context));
        pending.push(after);
      } else pending.push(after);
    }
  }
  for (const left of pending) left.status = 0;
  return capped([...out, ...pending], context);
}

function statements(nodes: readonly SyntaxNode[], state: State, scope: Scope, context: Context): State[] {
  let states = [state];
  for (const node of nodes)
    states = capped(
      states.flatMap((current) => (live(current) ? run(node, current, scope, context) : [current])),
      context,
    );
  return states;
}

function caseStatement(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  const valueNode = node.childForFieldName('value');
  return substitutions(valueNode ?? node, state, scope, context).flatMap((ready) => {
    const value = valueNode === null ? undefined : expand(valueNode, ready);
    let pending = [ready];
    const out: State[] = [];
    for (const item of node.namedChildren) {
      if (item === null || item.type !== 'case_item' || pending.length === 0) continue;
      const patterns = item.childrenForFieldName('value').filter((pattern): pattern is SyntaxNode => pattern?.isNamed === true);
      const body = item.namedChildren.filter(
        (child): child is SyntaxNode => child !== null && child.type !== 'comment' && !patterns.some((pattern) => pattern.id === child.id),
      );
      const match = matches(value, patterns, ready);
      const next: State[] = [];
      for (const current of pending) {
        if (match === true) out.push(...statements(body, withStatus(current, 0), scope, context));
        else if (match === undefined) {
          out.push(...statements(body, withStatus(clone(current), 0), scope, context));
          next.push(current);
        } else next.push(current);
      }
      pending = next;
    }
    for (const left of pending) left.status = 0;
    return capped([...out, ...pending], context);
  });
}

const withStatus = (state: State, status: number): State => {
  state.status = status;
  return state;
};

/** Whether a case's word matches one of its patterns; undefined: not known. */
function matches(value: string | undefined, patterns: readonly SyntaxNode[], state: State): boolean | undefined {
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

function whileStatement(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  const until = node.child(0)?.type === 'until';
  const conditions = node.childrenForFieldName('condition').filter((child): child is SyntaxNode => child?.isNamed === true);
  const body = node.childForFieldName('body');
  let looping = [state];
  const out: State[] = [];
  const bodyStatus = new Map<State, number | undefined>();
  state.loops++;
  for (let iteration = 0; looping.length > 0; iteration++) {
    if (iteration >= MAX_ITERATIONS) {
      for (const left of looping) out.push(giveUp(left, 'a loop that may not end'));
      break;
    }
    const tested = looping.flatMap((current) => {
      current.tested++;
      return statements(conditions, current, scope, context).map((after) => {
        after.tested--;
        return after;
      });
    });
    looping = [];
    for (const after of tested) {
      if (!live(after)) {
        out.push(after);
        continue;
      }
      const stops = after.status === undefined ? undefined : until ? after.status === 0 : after.status !== 0;
      if (stops !== false) out.push(withStatus(stops === undefined ? clone(after) : after, bodyStatus.get(after) ?? 0));
      if (stops === true) continue;
      for (const ran of body === null ? [after] : run(body, after, scope, context)) {
        if (ran.done === 'break') {
          ran.done = undefined;
          out.push(ran);
        } else if (ran.done === 'continue' || live(ran)) {
          ran.done = undefined;
          bodyStatus.set(ran, ran.status);
          looping.push(ran);
        } else out.push(ran);
      }
    }
    looping = capped(looping, context);
  }
  for (const after of out) after.loops = Math.max(0, after.loops - 1);
  return capped(out, context);
}

function forStatement(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  const body = node.childForFieldName('body');
  const variable = node.childForFieldName('variable')?.text;
  const valueNodes = node.childrenForFieldName('value').filter((child): child is SyntaxNode => child?.isNamed === true);
  return substitutions(node, state, scope, context).flatMap((ready) => {
    // The operator's variable of quit URLs: one pass, the variable standing for each URL.
    const urls = valueNodes.find((value) => value.text.includes('QUIT_URLS'));
    let items: (string | undefined)[] | undefined;
    if (node.type === 'for_statement' && valueNodes.length > 0 && urls === undefined) {
      const expanded = valueNodes.map((value) => expand(value, ready));
      if (expanded.every((value) => value !== undefined)) {
        items = expanded.flatMap((value, index) =>
          valueNodes[index]?.type === 'string' || valueNodes[index]?.type === 'raw_string' ? [value] : value.split(/\s+/).filter(Boolean),
        );
      }
    }
    ready.loops++;
    let states: State[];
    if (items !== undefined && items.length <= MAX_WORDS_IN_LOOP) {
      states = [ready];
      for (const item of items) {
        states = capped(
          states.flatMap((current) => {
            if (!live(current)) return [current];
            if (variable !== undefined) current.vars = put(current.vars, variable, item);
            return body === null ? [current] : run(body, current, scope, context);
          }),
          context,
        ).map(endIteration);
      }
      states = states.map((current) => {
        if (current.done === 'break') current.done = undefined;
        return current;
      });
    } else {
      // Words not known: the loop runs no time or once, with the variable not known.
      const none = clone(ready);
      none.status = 0;
      if (variable !== undefined && urls !== undefined)
        ready.loopVariables = put(ready.loopVariables, variable, urls.text.replace(/^\W*|\W*$/g, ''));
      if (variable !== undefined) ready.vars = put(ready.vars, variable, undefined);
      const once = (body === null ? [ready] : run(body, ready, scope, context)).map(endIteration).map((current) => {
        if (current.done === 'break') current.done = undefined;
        return current;
      });
      states = urls === undefined ? [none, ...once] : once;
    }
    for (const current of states) current.loops = Math.max(0, current.loops - 1);
    return capped(states, context);
  });
}

const endIteration = (state: State): State => {
  if (state.done === 'continue') state.done = undefined;
  return state;
};

/** Runs the command substitutions in a node's words, in order, keeping each one's output when known. */
function substitutions(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
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
        return subshell(substitution, current, scope, context, (child) => sequence(substitution, [child], scope, context)).map((after) => {
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
function assign(node: SyntaxNode, state: State, scope: Scope): void {
  void scope;
  const pairs = node.type === 'variable_assignment' ? [node] : node.namedChildren.filter((child) => child?.type === 'variable_assignment');
  for (const pair of pairs) {
    const name = pair?.childForFieldName('name')?.text;
    const value = pair?.childForFieldName('value');
    if (name === undefined) continue;
    state.vars = put(state.vars, name, value === null || value === undefined ? '' : expand(value, state));
    state.loopVariables = without(state.loopVariables, name);
  }
  if (node.type === 'unset_command') for (const name of node.namedChildren) state.vars = put(state.vars, name.text, '');
}

/** A word as the shell expands it; undefined when any part of it is not known. */
function expand(node: SyntaxNode, state: State): string | undefined {
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
      // ${X:-word}, ${X-word}: the word when X is empty or unset.
      const rest = node.namedChildren.filter((child) => child !== null && child.id !== name.id);
      if (node.type === 'expansion' && rest.length > 0) {
        const operator = node.children.find((child) => child !== null && /^:?[-=]$/.test(child.type))?.type;
        if (operator === undefined || value === undefined) return undefined;
        if (value === '') return rest[0] === undefined || rest[0] === null ? '' : expand(rest[0], state);
      }
      return value;
    }
    case 'command_substitution':
      return state.outputs.get(String(node.id));
    default:
      return node.text.includes('$') || node.text.includes('`') ? undefined : node.text;
  }
}

const unescapeDouble = (text: string): string => text.replace(/\\([$`"\\\n])/g, (_, char: string) => (char === '\n' ? '' : char));

function variable(name: string, state: State): string | undefined {
  if (name === '?') return state.status === undefined ? undefined : String(state.status);
  if (name === '!') return state.lastBackground === undefined ? undefined : '%background';
  if (state.vars.has(name)) return state.vars.get(name);
  return undefined;
}

const integer = (text: string | undefined): number | undefined =>
  text !== undefined && /^\s*-?\d+\s*$/.test(text) ? Number(text) : undefined;

/** A `[ ]`, `[[ ]]` or `test` expression's truth; undefined: not known. */
function testExpression(node: SyntaxNode | null, state: State, scope: Scope): boolean | undefined {
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

function unary(operator: string | undefined, operand: string | undefined): boolean | undefined {
  if (operand === undefined) return undefined;
  if (operator === '-z') return operand === '';
  if (operator === '-n') return operand !== '';
  return undefined;
}

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
function testWords(words: readonly (string | undefined)[]): boolean | undefined {
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

function command(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  if (!node.hasSubstitution) return commandRun(node, state, scope, context);
  return substitutions(node, state, scope, context).flatMap((ready) => commandRun(node, ready, scope, context));
}

/** A command once its substitutions ran: its words expanded, then run. */
function commandRun(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  const name = node.childForFieldName('name');
  if (name === null) {
    // Assignments only.
    assign(node, state, scope);
    if (!node.hasSubstitution) state.status = 0;
    return failed(state, scope, context);
  }
  const nodes = [name];
  const words = [expand(name, state)];
  const literal = [words[0] ?? name.text];
  for (const child of node.children) {
    if (child.field !== 'argument') continue;
    const word = expand(child, state);
    nodes.push(child);
    words.push(word);
    literal.push(word ?? child.text);
  }
  const after = simple(literal, words, nodes, state, scope, context, placeOf(name, scope), keyOf(name, scope));
  return after.length === 1 ? failed(after[0] as State, scope, context) : after.flatMap((one) => failed(one, scope, context));
}

const WORK_STATUS = 1;

/** A simple command from its words (WORDS: undefined where not known; LITERAL: the text there instead). */
function simple(
  literal: readonly string[],
  words: readonly (string | undefined)[],
  nodes: readonly (SyntaxNode | undefined)[],
  state: State,
  scope: Scope,
  context: Context,
  place: Place,
  key: string,
): State[] {
  const inner = innerCommand(literal, (word) => word);
  const rest = inner.words;
  const at = literal.length - rest.length;
  const known = at === 0 ? words : words.slice(at);
  const program = basename(rest[0] ?? '');
  // The command as the script writes it (`exit $rc`, not the value it had), for the messages.
  const written = (): string => rest.map((word, index) => nodes[at + index]?.text ?? word).join(' ');
  const set = (status: number | undefined, by: Path['statusBy'] = 'command'): State[] => {
    state.status = status;
    state.statusAt = place;
    state.statusBy = by;
    return [state];
  };
  if (inner.replaces && rest.length === 0) return set(0);
  const replaced = (states: State[]): State[] => {
    if (!inner.replaces) return states;
    for (const after of states) {
      if (!live(after)) continue;
      after.done = 'exec';
      after.endText = `exec ${written()}`;
    }
    return states;
  };
  switch (program) {
    case 'exit':
    case 'return': {
      const code = known[1];
      const status = rest.length < 2 ? state.status : code === undefined ? undefined : integer(code);
      set(status === undefined ? undefined : ((status % 256) + 256) % 256, 'exit');
      if (program === 'return' && state.depth > 0) state.done = 'return';
      else {
        state.done = 'exit';
        state.endText = written();
      }
      return [state];
    }
    case 'break':
    case 'continue':
      if (state.loops > 0) state.done = program;
      return set(0);
    case 'set':
      for (const option of shellOptions(rest.slice(1))) {
        if (option.name === 'pipefail' && option.on && state.refusesPipefail) {
          // An error of a special builtin: the shell ends before any option of this set takes effect.
          set(2, 'exit');
          state.refused ??= place;
          state.done = 'exit';
          state.endText = written();
          return [state];
        }
      }
      for (const option of shellOptions(rest.slice(1))) {
        if (option.name === 'errexit') state.errexit = option.on;
        if (option.name === 'pipefail') state.pipefail = option.on;
      }
      return set(0);
    case 'trap':
      trap(rest.slice(1), known.slice(1), nodes[at + 1], state, scope);
      return set(0);
    case 'wait': {
      const status = rest.length > 1 ? state.lastBackground : 0;
      state.pending = undefined;
      return set(status);
    }
    case 'true':
    case ':':
      return set(0);
    case 'false':
      return set(1);
    case 'test':
    case '[':
      return decided(testWords(known.slice(1)), state).map((after) => {
        after.statusAt = place;
        after.statusBy = 'command';
        return after;
      });
    case 'source':
    case '.':
      state.unknown ??= `it runs ${rest[1] ?? 'a file'}, which the manifest does not show`;
      return set(undefined);
    case 'eval': {
      const text = known.slice(1);
      if (text.some((word) => word === undefined)) {
        state.unknown ??= 'eval of what is not known';
        return set(undefined);
      }
      const parsed = context.hooks.parse(text.join(' '), place);
      return parsed === undefined ? set(undefined) : sequence(parsed.root, [state], parsed, context);
    }
    case 'read':
      return decided(undefined, state);
  }
  if (program === 'command' || program === 'type' || program === 'which' || program === 'hash') return decided(undefined, state);
  const shell = shellScript(rest);
  if (shell !== undefined) {
    const text = known[shell.at];
    const scriptNode = nodes[at + shell.at];
    const parsed = text === undefined ? undefined : context.hooks.parse(text, scriptNode === undefined ? place : inside(scriptNode, scope));
    if (parsed !== undefined) {
      const inherit = { errexit: shell.errexit, pipefail: shell.pipefail, refusesPipefail: shell.refusesPipefail };
      return replaced(
        subshell(parsed.root, state, parsed, context, (child) => {
          child.errexit = inherit.errexit;
          child.pipefail = inherit.pipefail;
          child.refusesPipefail = inherit.refusesPipefail;
          child.functions = EMPTY;
          child.tested = 0;
          child.depth = 0;
          child.loops = 0;
          return sequence(parsed.root, [child], parsed, context);
        }),
      );
    }
  }
  const fn = state.functions.get(rest[0] ?? '');
  if (fn !== undefined && !inner.replaces) {
    if (state.depth >= MAX_CALLS) return [giveUp(state, 'functions that call each other too deeply')];
    state.depth++;
    const loops = state.loops;
    state.loops = 0;
    return run(fn.body, state, fn.scope, context).map((after) => {
      after.depth--;
      after.loops = loops;
      if (after.done === 'return') after.done = undefined;
      return after;
    });
  }
  const speaks = context.hooks.speaks(rest, { key, place }, state.loopVariables);
  if (speaks !== undefined) {
    const child = speaks.child;
    const ran = child === undefined || child.length === 0 ? [state] : simple(child, child, [], state, scope, context, place, `${key}>`);
    return replaced(
      ran.map((after) => {
        const status = after.status;
        push(after, {
          what: 'speak',
          place,
          said: speaks.said,
          ...(after.trap === undefined ? {} : { trap: after.trap }),
          ...(after.loops > 0 ? { looped: true } : {}),
        });
        after.status = child === undefined ? 0 : status;
        after.statusAt = place;
        after.statusBy = 'speak';
        return after;
      }),
    );
  }
  if (BOOKKEEPING.has(program) || FILTERS.has(program)) return replaced(set(0));
  // The job's work.
  push(state, { what: 'work', place, ...(state.trap === undefined ? {} : { trap: state.trap }) });
  state.worked = true;
  if (state.world === 'failure') state.failed = true;
  return replaced(set(state.world === 'success' ? 0 : WORK_STATUS));
}

/** `trap ACTION SIGNAL...`: kept, to run at the exit or on an error; `trap - SIGNAL` and `trap '' SIGNAL` clear it. */
function trap(
  words: readonly string[],
  known: readonly (string | undefined)[],
  actionNode: SyntaxNode | undefined,
  state: State,
  scope: Scope,
): void {
  const [action, ...signals] = words;
  if (action === undefined || (action.startsWith('-') && action !== '-')) return;
  const text = known[0] ?? action;
  const at = actionNode === undefined ? scope.offset : inside(actionNode, scope);
  for (const raw of signals) {
    const signal = raw.toUpperCase().replace(/^SIG/, '');
    const name = signal === '0' ? 'EXIT' : signal;
    state.traps = action === '' || action === '-' ? without(state.traps, name) : put(state.traps, name, { text, place: at });
  }
}

/** Where the text of a word starts: after its opening quote, when it has one. */
export function inside(node: SyntaxNode, scope: Scope): Place {
  const at = placeOf(node, scope);
  return node.type === 'string' || node.type === 'raw_string' ? { row: at.row, column: at.column + 1 } : at;
}
