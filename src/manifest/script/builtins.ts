// The builtins and wrappers of the shell model: what a simple command does, by its program's name, once the
// wrappers in front of it (exec, env, timeout, nice...) are taken off. A table gives each builtin's step
// (exit, set, trap, wait, test, eval...); a command that is none of them is, in this order, a shell run on a
// script (`sh -c`), a function the script defined, one that speaks to a sidecar (the hooks say), bookkeeping,
// or the job's work.

import { BOOKKEEPING, basename, FILTERS, innerCommand, shellOptions, shellScript, stdinShell } from './commands.ts';
import { behaviourOf, commandConstruct, dialectOfProgram, lacksOption } from './dialect.ts';
import type { Place } from './requests.ts';
import {
  type Context,
  decided,
  EMPTY,
  giveUp,
  inside,
  live,
  MAX_CALLS,
  type Path,
  push,
  put,
  type Scope,
  type State,
  stopShell,
  without,
} from './state.ts';
import type { Syntax as SyntaxNode } from './syntax.ts';
import { integer, testWords } from './words.ts';

/** The status of the job's command that fails, in the failing world. */
const WORK_STATUS = 1;
/** A command the shell does not find. */
const NOT_FOUND = 127;

/** A simple command as its steps see it: the words from its program on, once the wrappers are taken off. */
interface Call {
  /** The words as written where not known. */
  readonly rest: readonly string[];
  /** The same words expanded; undefined where not known. */
  readonly known: readonly (string | undefined)[];
  /** The node of each word (none for the words a wrapper's hook gave). */
  readonly nodes: readonly (SyntaxNode | undefined)[];
  /** The program's name, without its folder. */
  readonly program: string;
  /** `exec` in front: the command replaces the shell. */
  readonly replaces: boolean;
  readonly state: State;
  readonly scope: Scope;
  readonly context: Context;
  readonly place: Place;
  readonly key: string;
}

/** A simple command from its words (WORDS: undefined where not known; LITERAL: the text there instead). */
export function simple(
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
  const call: Call = {
    rest,
    known: at === 0 ? words : words.slice(at),
    nodes: at === 0 ? nodes : nodes.slice(at),
    program: basename(rest[0] ?? ''),
    replaces: inner.replaces,
    state,
    scope,
    context,
    place,
    key,
  };
  if (call.replaces && rest.length === 0) return set(call, 0);
  // A builtin of bash's that this shell lacks: command not found.
  const lacking = state.dialect === 'bash' ? undefined : commandConstruct(call.program);
  const status = lacking === undefined ? 'ok' : behaviourOf(state.dialect, lacking);
  if (typeof status === 'number') return set(call, status);
  const alias = aliasOf(call);
  if (alias !== undefined) return alias;
  const builtin = BUILTINS.get(call.program);
  if (builtin !== undefined) return builtin(call);
  return shellRun(call) ?? functionCall(call) ?? speaking(call) ?? other(call);
}

/** The command as the script writes it (`exit $rc`, not the value it had), for the messages. */
const written = (call: Call): string => call.rest.map((word, index) => call.nodes[index]?.text ?? word).join(' ');

/** The command's status, set by it. */
function set(call: Call, status: number | undefined, by: Path['statusBy'] = 'command'): State[] {
  const { state } = call;
  state.status = status;
  state.statusAt = call.place;
  state.statusBy = by;
  return [state];
}

/** After a command run by `exec`: each live path ends there, the shell replaced. */
function replaced(call: Call, states: State[]): State[] {
  if (!call.replaces) return states;
  for (const after of states) {
    if (!live(after)) continue;
    after.done = 'exec';
    after.endText = `exec ${written(call)}`;
  }
  return states;
}

/** `exit [N]`, and `return [N]` (an exit outside a function): the status N, or the last one. */
function exitOrReturn(call: Call): State[] {
  const { state, rest, known } = call;
  const code = known[1];
  let status = rest.length < 2 ? state.status : code === undefined ? undefined : integer(code);
  // A word that is no number, or (in dash and ash) a negative one: "Illegal number", and the shell ends with 2.
  if (rest.length >= 2 && code !== undefined && (status === undefined || (status < 0 && !state.dialect.startsWith('bash')))) status = 2;
  if (call.program === 'return' && state.depth === 0) {
    // Outside a function: dash and ash exit; bash fails the command (as sh, it ends with 2).
    const outside = behaviourOf(state.dialect, 'return-outside-function');
    if (outside === 'fatal') return stopShell(state, 2, call.place, written(call));
    if (typeof outside === 'number') return set(call, outside);
  }
  // The status is the number modulo 256: `exit 256` is 0, `exit -1` in bash 255.
  set(call, status === undefined ? undefined : ((status % 256) + 256) % 256, 'exit');
  if (call.program === 'return' && state.depth > 0) state.done = 'return';
  else {
    state.done = 'exit';
    state.endText = written(call);
  }
  return [state];
}

/** `break` and `continue`: inside a loop, the loop's next step. */
function loopJump(call: Call): State[] {
  if (call.state.loops > 0) call.state.done = call.program as 'break' | 'continue';
  return set(call, 0);
}

/** `set`: errexit and pipefail on or off; pipefail in a shell that refuses it ends the shell with 2. */
function setOptions(call: Call): State[] {
  const { state, rest } = call;
  for (const option of shellOptions(rest.slice(1))) {
    if (lacksOption(state.dialect, option.name)) return stopShell(state, 2, call.place, written(call));
    if (option.name === 'pipefail' && option.on && state.refusesPipefail) {
      // An error of a special builtin: the shell ends before any option of this set takes effect.
      set(call, 2, 'exit');
      state.refused ??= call.place;
      state.done = 'exit';
      state.endText = written(call);
      return [state];
    }
  }
  for (const option of shellOptions(rest.slice(1))) {
    if (option.name === 'errexit') state.errexit = option.on;
    if (option.name === 'errtrace') state.errtrace = option.on;
    if (option.name === 'nounset') state.nounset = option.on;
    if (option.name === 'pipefail') state.pipefail = option.on;
  }
  // `set -E`: errtrace in bash (dash reads -E as its emacs mode, and ash takes it and does nothing).
  for (const word of rest.slice(1)) {
    const letters = /^([-+])[a-zA-Z]*E/.exec(word);
    if (letters !== null && state.dialect.startsWith('bash')) state.errtrace = letters[1] === '-';
  }
  return set(call, 0);
}

/** `wait`: every background command waited for; with an argument, the status of the last one. */
function wait(call: Call): State[] {
  const status = call.rest.length > 1 ? call.state.lastBackground : 0;
  call.state.pending = undefined;
  return set(call, status);
}

/** `test ...` and `[ ... ]`: their truth from the words, both ways when not known. */
function testCommand(call: Call): State[] {
  return decided(testWords(call.known.slice(1)), call.state).map((after) => {
    after.statusAt = call.place;
    after.statusBy = 'command';
    return after;
  });
}

/**
 * `source FILE` and `. FILE`: a file the manifest does not show (a rendered secret, an env.sh) sets variables, so
 * every variable is not known after it (those set before it too, and any the environment did not name), and the
 * rest of the script is read on; it succeeds, as a file of assignments does.
 */
function sourced(call: Call): State[] {
  const { state } = call;
  // /dev/null is empty: sourcing it runs nothing.
  if (call.known[1] !== '/dev/null') {
    state.vars = new Map([...state.vars.keys()].map((name) => [name, undefined]));
    state.closed = false;
  }
  return set(call, 0);
}

/** `eval WORDS`: the words, when known, run as a script here. */
function evaluated(call: Call): State[] {
  const { state, context } = call;
  const text = call.known.slice(1);
  if (text.some((word) => word === undefined)) {
    state.unknown ??= 'eval of what is not known';
    return set(call, undefined);
  }
  const parsed = context.hooks.parse(text.join(' '), call.place);
  return parsed === undefined ? set(call, undefined) : context.walk.sequence(parsed.root, [state], parsed, context);
}

/**
 * A command whose first word is an alias, where the shell expands aliases (dash, ash and bash as sh always; bash
 * after `shopt -s expand_aliases`): the alias's text with the other words, run as a script here.
 */
function aliasOf(call: Call): State[] | undefined {
  const { state, context } = call;
  const name = call.rest[0] ?? '';
  const alias = state.aliases.size === 0 ? undefined : state.aliases.get(name);
  if (alias === undefined || (state.dialect === 'bash' && !state.expandAliases)) return undefined;
  // An alias whose text starts with its own name runs the command of that name.
  if (alias.text.split(/\s/)[0] === name) return undefined;
  const parsed = context.hooks.parse(
    [alias.text, ...call.rest.slice(1).map((word, index) => call.nodes[index + 1]?.text ?? word)].join(' '),
    call.place,
  );
  return parsed === undefined ? undefined : context.walk.sequence(parsed.root, [state], parsed, context);
}

/** `alias NAME=TEXT...`: kept for the commands after it; `unalias NAME` forgets one. */
function aliasCommand(call: Call): State[] {
  const { state } = call;
  for (const word of call.known.slice(1)) {
    const match = word === undefined ? null : /^([^=\s]+)=([\s\S]*)$/.exec(word);
    if (match === null) continue;
    if (call.program === 'alias') state.aliases = put(state.aliases, match[1] as string, { text: match[2] as string, place: call.place });
  }
  if (call.program === 'unalias') for (const word of call.rest.slice(1)) state.aliases = without(state.aliases, word);
  return set(call, 0);
}

/** `shopt -s expand_aliases` and `-u`: bash's switch of aliases in scripts; other options change nothing here. */
function shopt(call: Call): State[] {
  const on = call.rest[1] === '-s' ? true : call.rest[1] === '-u' ? false : undefined;
  if (on !== undefined && call.rest.includes('expand_aliases')) call.state.expandAliases = on;
  return set(call, 0);
}

/** A command whose status the model cannot know (`read`, `command -v`...): a path for each. */
const eitherWay = (call: Call): State[] => decided(undefined, call.state);

/** `pgrep NAME`, `pidof NAME`: found, not found, or either way, as the hooks say (requests.ts, processFound). */
function processLookup(call: Call): State[] {
  const found = call.context.hooks.lookup(call.known.map((word, at) => word ?? call.rest[at] ?? ''));
  return found === undefined ? eitherWay(call) : set(call, found ? 0 : 1);
}

/** Each builtin's step, by the program's name. */
const BUILTINS: ReadonlyMap<string, (call: Call) => State[]> = new Map([
  ['exit', exitOrReturn],
  ['return', exitOrReturn],
  ['break', loopJump],
  ['continue', loopJump],
  ['set', setOptions],
  [
    'trap',
    (call: Call) => {
      trap(call.rest.slice(1), call.known.slice(1), call.nodes[1], call.state, call.scope);
      return set(call, 0);
    },
  ],
  ['wait', wait],
  ['true', (call: Call) => set(call, 0)],
  [':', (call: Call) => set(call, 0)],
  // `exec` with no command (`exec >log 2>&1`, `exec 3>&1`): only its redirections, for the rest of the shell.
  ['exec', (call: Call) => set(call, 0)],
  ['false', (call: Call) => set(call, 1)],
  ['test', testCommand],
  ['[', testCommand],
  ['source', sourced],
  ['.', sourced],
  ['eval', evaluated],
  ['alias', aliasCommand],
  ['unalias', aliasCommand],
  ['shopt', shopt],
  ['read', eitherWay],
  ['command', eitherWay],
  ['type', eitherWay],
  ['which', eitherWay],
  ['hash', eitherWay],
  ['pgrep', processLookup],
  ['pidof', processLookup],
]);

/** `sh -c SCRIPT` and the like: the script, when known and parsed, run in a subshell with the shell's options. */
function shellRun(call: Call): State[] | undefined {
  const { state, context } = call;
  const shell: { readonly at?: number; readonly errexit: boolean; readonly pipefail: boolean; readonly nounset: boolean } | undefined =
    shellScript(call.rest) ?? (state.stdin === undefined ? undefined : stdinShell(call.rest));
  if (shell === undefined) return undefined;
  // `sh -c SCRIPT`, or a shell whose input is a here-document (`sh -s <<'EOF'`).
  const at = shell.at;
  const scriptNode = at === undefined ? undefined : call.nodes[at];
  const text = at === undefined ? state.stdin?.text : call.known[at];
  const where =
    at === undefined ? (state.stdin?.place ?? call.place) : scriptNode === undefined ? call.place : inside(scriptNode, call.scope);
  const parsed = text === undefined ? undefined : context.hooks.parse(text, where);
  if (parsed === undefined) return undefined;
  const viaBusybox = call.program === 'busybox';
  const dialect = dialectOfProgram(basename(call.rest[viaBusybox ? 1 : 0] ?? ''), state.sh, viaBusybox) ?? 'bash';
  const inherit = { errexit: shell.errexit, pipefail: shell.pipefail, nounset: shell.nounset };
  return replaced(
    call,
    context.walk.subshell(parsed.root, state, parsed, context, (child) => {
      child.errexit = inherit.errexit;
      child.pipefail = inherit.pipefail;
      child.dialect = dialect;
      child.nounset = inherit.nounset;
      child.refusesPipefail = dialect === 'dash';
      child.functions = EMPTY;
      child.aliases = EMPTY;
      child.stdin = undefined;
      child.tested = 0;
      child.depth = 0;
      child.loops = 0;
      return context.walk.sequence(parsed.root, [child], parsed, context);
    }),
  );
}

/** A call of a function the script defined (not after exec): its body runs, and a `return` ends only it. */
function functionCall(call: Call): State[] | undefined {
  const { state, context } = call;
  const fn = state.functions.get(call.rest[0] ?? '');
  if (fn === undefined && state.functions.has(call.rest[0] ?? '') && !call.replaces) return set(call, NOT_FOUND);
  if (fn === undefined || call.replaces) return undefined;
  if (state.depth >= MAX_CALLS) return [giveUp(state, 'functions that call each other too deeply')];
  state.depth++;
  const loops = state.loops;
  state.loops = 0;
  return context.walk.run(fn.body, state, fn.scope, context).map((after) => {
    after.depth--;
    after.loops = loops;
    if (after.done === 'return') after.done = undefined;
    return after;
  });
}

/** A command that speaks to a sidecar (the hooks say), after the command it wraps when it is a wrapper. */
function speaking(call: Call): State[] | undefined {
  const { state, scope, context, place, key } = call;
  const speaks = context.hooks.speaks(codeFromInput(call), { key, place }, state.loopVariables);
  if (speaks === undefined) return undefined;
  const child = speaks.child;
  const ran = child === undefined || child.length === 0 ? [state] : simple(child, child, [], state, scope, context, place, `${key}>`);
  return replaced(
    call,
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
      if (speaks.work === true) {
        work(after, place, WORK_STATUS, call.program);
        after.statusBy = 'command';
      }
      return after;
    }),
  );
}

/** A program that reads its code from a here-document (`python3 - <<'EOF'`): its words with that code as `-c` (node: `-e`). */
function codeFromInput(call: Call): readonly string[] {
  const { rest, state, program } = call;
  if (state.stdin === undefined || !/^(python[\d.]*|node|nodejs)$/.test(program) || rest.slice(1).some((word) => !word.startsWith('-')))
    return rest;
  return [...rest.filter((word) => word !== '-'), program.startsWith('node') ? '-e' : '-c', state.stdin.text];
}

/** Any other command: bookkeeping and filters succeed; the rest is the job's work, which fails in the failing world. */
function other(call: Call): State[] {
  const { state } = call;
  if (BOOKKEEPING.has(call.program) || FILTERS.has(call.program)) return replaced(call, set(call, 0));
  work(state, call.place, WORK_STATUS, call.program);
  return replaced(call, set(call, state.status));
}

/**
 * A command of the job's work at PLACE on the path: it fails with STATUS where the start says PROGRAM fails (by
 * default, in the failing world), else it succeeds.
 */
function work(state: State, place: Place, status: number, program: string): void {
  push(state, { what: 'work', place, program, ...(state.trap === undefined ? {} : { trap: state.trap }) });
  state.worked = true;
  const fails = state.failing === undefined ? state.world === 'failure' : state.failing.has(program);
  if (fails) state.failed = true;
  state.status = fails ? status : 0;
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
