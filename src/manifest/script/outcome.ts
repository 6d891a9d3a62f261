// The outcome of a shell script, computed by running its parsed tree in the abstract, once for the job
// succeeding and once for it failing: which commands run in what order and the status the shell ends with, by
// the shell's own rules (lists, `!`, if, case, loops, functions, subshells and `$(...)`, pipelines and
// pipefail, set -e and its exceptions, exit, traps, exec, `&` and wait). The job is every command that is
// neither bookkeeping nor one that speaks to a sidecar; in the failing run each of them fails (given a combination,
// Start's `failing`, those it names fail in both runs and the others succeed). A test the
// script cannot decide (a file, a variable from outside) is followed both ways, each a path of its own. What
// cannot be known (a sourced file, eval of what is not known, a loop with no end in sight) marks the path
// unknown, and nothing is claimed from it.

import { arithmetic } from './arithmetic.ts';
import { simple } from './builtins.ts';
import {
  behaviourOf,
  CONSTRUCTS,
  commandConstruct,
  type Dialect,
  DIALECT_NAMES,
  expansionConstruct,
  nodeConstruct,
  syntaxStop,
  UNSET_STATUS,
} from './dialect.ts';
import {
  capped,
  type Context,
  clone,
  decided,
  EMPTY,
  giveUp,
  type Hooks,
  initial,
  keyOf,
  live,
  MAX_ITERATIONS,
  MAX_KNOWN_ITERATIONS,
  MAX_NESTING,
  MAX_WORDS_IN_LOOP,
  MIN_STEPS,
  type Outcome,
  type Path,
  placeOf,
  put,
  stopShell,
  type Scope,
  type Start,
  type State,
  STEPS_PER_CHARACTER,
  toPath,
  type Trap,
  type Walk,
  without,
  withStatus,
  type World,
} from './state.ts';
import type { Syntax as SyntaxNode } from './syntax.ts';
import { assign, expand, matches, redirectArguments, substitutions, testExpression, unboundIn, variable } from './words.ts';

/** The outcome of the script in SCOPE for both worlds. */
export function outcomeOf(scope: Scope, start: Start, hooks: Hooks, size: number): Outcome {
  const onSignal: { said: number; trap: string }[] = [];
  const signalTraps = new Set<string>();
  const unknown: { success?: string; failure?: string } = {};
  const run = (world: World): Path[] => {
    const context: Context = {
      hooks,
      walk: WALK,
      steps: 0,
      maxSteps: Math.max(MIN_STEPS, size * STEPS_PER_CHARACTER),
      nesting: 0,
      unknown: undefined,
    };
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

/** The statements of a node in order, each on every live path; `cmd &` runs in the background. */
function sequence(node: SyntaxNode, states: State[], scope: Scope, context: Context): State[] {
  let current = states;
  const stop = node.type === 'program' && states[0] !== undefined ? stopOf(node, states[0].dialect) : undefined;
  let index = -1;
  for (const child of node.namedChildren) {
    index++;
    if (stop !== undefined && index === stop.at) {
      const where = placeOf(stop.found.node, scope);
      const why = `a syntax error of ${DIALECT_NAMES[states[0]?.dialect ?? 'dash']} (${CONSTRUCTS[stop.found.id].written})`;
      return current.flatMap((state) => (live(state) ? stopShell(state, 2, where, why) : [state]));
    }
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

/** Where each script's shell stops it for a syntax it lacks, by script and shell (null: nowhere). */
const stops = new WeakMap<SyntaxNode, Map<Dialect, ReturnType<typeof syntaxStop> | null>>();

function stopOf(root: SyntaxNode, dialect: Dialect): ReturnType<typeof syntaxStop> {
  if (dialect === 'bash') return undefined;
  let byDialect = stops.get(root);
  if (byDialect === undefined) stops.set(root, (byDialect = new Map()));
  let stop = byDialect.get(dialect);
  if (stop === undefined) byDialect.set(dialect, (stop = syntaxStop(root, dialect) ?? null));
  return stop ?? undefined;
}

/** One statement of a sequence on one path: run in the background when BACKGROUND (`cmd &`). */
function statementOf(node: SyntaxNode, state: State, background: boolean, scope: Scope, context: Context): State[] {
  if (!live(state)) return [state];
  return background ? inBackground(node, state, scope, context) : run(node, state, scope, context);
}

/** One statement on one path, counted against the limits of steps and nesting. */
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

/** How the walk reads one kind of statement. */
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

/** One statement on one path, by its kind. */
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
      if (body === null) return [state];
      // `cmd &> file` where the shell has no &>: `cmd &`, then `> file`.
      const both = state.dialect !== 'bash' && node.children.some((child) => nodeConstruct(child) === 'redirect-both');
      if (both && behaviourOf(state.dialect, 'redirect-both') === 'background') return inBackground(body, state, scope, context);
      const input = hereDocument(node, scope, state);
      // `cmd >log a b`: the words after a redirection's target are the command's arguments.
      const extra = body.type === 'command' ? redirectArguments(node) : [];
      const go = (current: State): State[] =>
        extra.length === 0 ? run(body, current, scope, context) : command(body, current, scope, context, extra);
      if (input === undefined) return go(state);
      state.stdin = input;
      return go(state).map((after) => {
        after.stdin = undefined;
        return after;
      });
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
      if (node.child(0)?.type === '((' && state.dialect.startsWith('bash')) return arithmeticCommand(node, state, scope, context);
      return sequence(node, [state], scope, context);
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
    case 'declaration_command': {
      const keyword = node.child(0)?.type ?? '';
      const id =
        keyword === 'local' && state.depth === 0
          ? 'local-outside-function'
          : state.dialect === 'bash'
            ? undefined
            : commandConstruct(keyword);
      const behaviour = id === undefined ? 'ok' : behaviourOf(state.dialect, id);
      if (behaviour === 'fatal') return stopShell(state, 2, placeOf(node, scope), `${keyword} outside a function`);
      if (typeof behaviour === 'number') return failed(withStatus(state, behaviour), scope, context);
      return assignment(node, state, scope, context);
    }
    case 'variable_assignment':
    case 'variable_assignments':
    case 'unset_command':
      return assignment(node, state, scope, context);
    case 'test_command': {
      const id = state.dialect === 'bash' ? undefined : nodeConstruct(node);
      const behaviour = id === undefined ? 'ok' : behaviourOf(state.dialect, id);
      return substitutions(node, state, scope, context).flatMap(
        (after) =>
          fatalExpansion(node, after, scope) ??
          (typeof behaviour === 'number'
            ? failed(withStatus(after, behaviour), scope, context)
            : decided(testExpression(node.namedChildren[0] ?? null, after, scope), after).flatMap((forked) =>
                failed(forked, scope, context),
              )),
      );
    }
    default:
      // Arithmetic, and what the parser could not read: its commands run, its status is not known.
      return substitutions(node, state, scope, context).flatMap((after) => decided(undefined, after));
  }
}

/** bash's `(( EXPR ))`: where its variables are known, its status and what it assigns; else its parts run, its status not known. */
function arithmeticCommand(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  const result = node.hasSubstitution ? undefined : arithmetic(node.text.slice(2, -2), (name) => variable(name, state));
  if (result === undefined) return sequence(node, [state], scope, context);
  for (const [name, value] of result.assigned) state.vars = put(state.vars, name, String(value));
  state.status = result.value === 0 ? 1 : 0;
  state.statusBy = 'command';
  return failed(state, scope, context);
}

/**
 * A statement's here-document as the command reads it: its text as written under a quoted delimiter (`<<'EOF'`);
 * under an unquoted one, as the shell expands it on STATE's path (`\\$`, `` \\` `` and `\\\\` lose their backslash, `$?` and
 * `$NAME` take their values here); undefined where that expansion is not known (a variable not known, `$(...)`).
 */
function hereDocument(node: SyntaxNode, scope: Scope, state: State): Trap | undefined {
  const redirect = node.children.find((child) => child.type === 'heredoc_redirect');
  const body = redirect?.children.find((child) => child.type === 'heredoc_body');
  if (redirect === undefined || body === undefined) return undefined;
  const quoted = /['"\\]/.test(redirect.children.find((child) => child.type === 'heredoc_start')?.text ?? '');
  const text = quoted ? body.text : expandedHereDocument(body.text, state);
  return text === undefined ? undefined : { text, place: placeOf(body, scope) };
}

/** The text of a here-document under an unquoted delimiter as the shell expands it on STATE's path, or undefined. */
function expandedHereDocument(text: string, state: State): string | undefined {
  let out = '';
  for (let at = 0; at < text.length; at++) {
    const char = text[at] as string;
    const next = text[at + 1] ?? '';
    if (char === '\\' && '$`\\\n'.includes(next) && next !== '') {
      if (next !== '\n') out += next;
      at++;
    } else if (char === '`') return undefined;
    else if (char === '$') {
      const name = /^(\?|[A-Za-z_]\w*|\{[A-Za-z_]\w*\})/.exec(text.slice(at + 1))?.[0];
      if (name === undefined) return undefined;
      if (name === '?') {
        if (state.status === undefined) return undefined;
        out += String(state.status);
      } else {
        const bare = name.replace(/[{}]/g, '');
        const value = state.vars.has(bare) ? state.vars.get(bare) : state.closed ? null : undefined;
        if (value === undefined) return undefined;
        out += value ?? '';
      }
      at += name.length;
    } else out += char;
  }
  return out;
}

/** `x=1`, `export x=1`, `unset x`: the substitutions, then the values kept. */
function assignment(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  return substitutions(node, state, scope, context).flatMap((after) => {
    const fatal = fatalExpansion(node, after, scope);
    if (fatal !== undefined) return fatal;
    assign(node, after, scope);
    if (node.type === 'declaration_command' || node.type === 'unset_command' || !node.hasSubstitution) after.status = 0;
    return failed(after, scope, context);
  });
}

/** After a command: an ERR trap runs on a failure set -e would see, then set -e ends the shell. */
function failed(state: State, scope: Scope, context: Context): State[] {
  if (!live(state) || state.status === undefined || state.status === 0 || state.tested > 0) return [state];
  let states = [state];
  // bash runs an ERR trap inside a function only under set -E (errtrace).
  const err = state.trap === undefined && (state.depth === 0 || state.errtrace) ? state.traps.get('ERR') : undefined;
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

/** `a && b`, `a || b`: the right side runs by the left's status, which set -e spares. */
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

/** `a | b`: each part in a subshell; the status the last one's, or with pipefail the last that failed. */
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

/** `cmd &`: run in a subshell whose events are pending until a `wait`; the status 0, `$!` its status. */
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

/** A trap's action run on the path, keeping the status it found unless the action exits. */
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

/** `if`/`elif`/`else`: each condition, spared by set -e, picks its body; one not known follows both ways. */
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

/** Nodes run in order on one path and those it forks into. */
function statements(nodes: readonly SyntaxNode[], state: State, scope: Scope, context: Context): State[] {
  let states = [state];
  for (const node of nodes)
    states = capped(
      states.flatMap((current) => (live(current) ? run(node, current, scope, context) : [current])),
      context,
    );
  return states;
}

/** `case WORD in PATTERN) ...;;`: the first clause that matches; one not known follows both ways. */
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

/**
 * `while` and `until`: the body run while the condition says so, then given up: after MAX_ITERATIONS times, or,
 * while the loop is one path that nothing has left (a counter it keeps, `n=$((n+1))`), after MAX_KNOWN_ITERATIONS.
 */
function whileStatement(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  const until = node.child(0)?.type === 'until';
  const conditions = node.childrenForFieldName('condition').filter((child): child is SyntaxNode => child?.isNamed === true);
  const body = node.childForFieldName('body');
  let looping = [state];
  const out: State[] = [];
  const bodyStatus = new Map<State, number | undefined>();
  state.loops++;
  let progressing = true;
  let lastKey: string | undefined;
  for (let iteration = 0; looping.length > 0; iteration++) {
    // One path that changes its variables each time round (a counter) may be followed further: it may come to its end.
    const key = looping.length === 1 ? [...(looping[0] as State).vars].join('\0') : undefined;
    if (key === undefined || key === lastKey || out.length > 0) progressing = false;
    lastKey = key;
    if (iteration >= (progressing ? MAX_KNOWN_ITERATIONS : MAX_ITERATIONS)) {
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

/** `for X in WORDS`: once per word when known; else no time or once, with X not known (or a variable of quit URLs once). */
function forStatement(node: SyntaxNode, state: State, scope: Scope, context: Context): State[] {
  const body = node.childForFieldName('body');
  const variable = node.childForFieldName('variable')?.text;
  const valueNodes = node.childrenForFieldName('value').filter((child): child is SyntaxNode => child?.isNamed === true);
  return substitutions(node, state, scope, context).flatMap((ready) => {
    // A variable of a sidecar's quit URLs: one pass, the loop's variable standing for each URL.
    const urls = valueNodes.map((value) => context.hooks.quitUrls(value.text)).find((name) => name !== undefined);
    let items: (string | undefined)[] | undefined = node.children.some(emptyIn) ? [] : undefined;
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
      if (variable !== undefined && urls !== undefined) ready.loopVariables = put(ready.loopVariables, variable, urls);
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

/** `for x in ; do`'s `in`, which the parser marks as an error: the shells take it as a loop over no words. */
export const emptyIn = (node: SyntaxNode): boolean => node.type === 'ERROR' && node.text === 'in';

/** A path at the end of one iteration: a `continue` is spent. */
const endIteration = (state: State): State => {
  if (state.done === 'continue') state.done = undefined;
  return state;
};

/** A simple command: its substitutions run first, then it (EXTRA: its arguments after a redirection's target). */
function command(node: SyntaxNode, state: State, scope: Scope, context: Context, extra: readonly SyntaxNode[] = []): State[] {
  if (!node.hasSubstitution) return fatalExpansion(node, state, scope) ?? commandRun(node, state, scope, context, extra);
  return substitutions(node, state, scope, context).flatMap(
    (ready) => fatalExpansion(node, ready, scope) ?? commandRun(node, ready, scope, context, extra),
  );
}

/**
 * A word the shell cannot expand, which ends it there: an unset variable under `set -u`, or a `${...}` of bash's
 * in another shell (dash's "Bad substitution", with 2).
 */
function fatalExpansion(node: SyntaxNode, state: State, scope: Scope): State[] | undefined {
  if (state.nounset) {
    const name = unboundIn(node, state);
    if (name !== undefined) return stopShell(state, UNSET_STATUS[state.dialect], placeOf(node, scope), `${name} unset under set -u`);
  }
  if (state.dialect === 'bash' || !node.text.includes('${')) return undefined;
  for (const expansion of node.descendantsOfType('expansion')) {
    const id = expansionConstruct(expansion.text);
    if (id !== undefined && behaviourOf(state.dialect, id) === 'fatal') {
      return stopShell(
        state,
        2,
        placeOf(expansion, scope),
        `a bad substitution in ${DIALECT_NAMES[state.dialect]} (${CONSTRUCTS[id].written})`,
      );
    }
  }
  return undefined;
}

/** A command once its substitutions ran: its words expanded, then run. */
function commandRun(node: SyntaxNode, state: State, scope: Scope, context: Context, extra: readonly SyntaxNode[]): State[] {
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
  for (const child of [...node.children.filter((one) => one.field === 'argument'), ...extra]) {
    const word = expand(child, state);
    // An unquoted expansion that comes to nothing is no word at all.
    if (word === '' && child.type !== 'string' && child.type !== 'raw_string' && child.text.includes('$')) continue;
    nodes.push(child);
    words.push(word);
    literal.push(word ?? child.text);
  }
  const after = simple(literal, words, nodes, state, scope, context, placeOf(name, scope), keyOf(name, scope));
  return after.length === 1 ? failed(after[0] as State, scope, context) : after.flatMap((one) => failed(one, scope, context));
}

/** The walk's steps that the words and the builtins run through the context. */
const WALK: Walk = { sequence, run, subshell };
