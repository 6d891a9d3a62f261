// The shell model's state: what one path through a script holds (variables, options, traps, functions, the
// events so far), the Path and Outcome it ends as, the persistent maps a state shares with its copies, and the
// limits past which a run gives up. The words (words.ts), the builtins (builtins.ts) and the walk (outcome.ts)
// build on it.

import type { Dialect } from './dialect.ts';
import type { Place } from './requests.ts';
import type { Syntax as SyntaxNode } from './syntax.ts';

/** The run of the script with the job's every command succeeding, or with each failing. */
export type World = 'success' | 'failure';

/** A command on a path: the job's work, or a command that speaks to a sidecar. */
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
  /** The job's command: its program's name, without its folder. */
  readonly program?: string;
}

/** One way through the script to its end, in one world. */
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

/** The paths of both worlds: the job succeeding and the job failing. */
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
  /** The shell that runs the script, and the one `sh` starts in the image (for the scripts it runs in turn). */
  readonly dialect: Dialect;
  readonly sh: Dialect;
  /** `set -u` from the shell's command line. */
  readonly nounset?: boolean;
  /**
   * The container's environment: its variables, each with its value, or undefined where the pod sets it at run
   * time (valueFrom). `closed`: nothing else sets one (no envFrom), so a variable it does not name is unset.
   */
  readonly env: ReadonlyMap<string, string | undefined>;
  readonly closed?: boolean;
  /**
   * The job's programs (by name, without their folder) that fail, in both worlds alike, the others succeeding: one
   * combination of what the job's commands do, where the worlds make them all succeed or all fail.
   */
  readonly failing?: ReadonlySet<string>;
}

/** A parsed script, and where its text sits in the whole (for a script inside a string). */
export interface Scope {
  readonly root: SyntaxNode;
  readonly offset: Place;
  readonly id: number;
}

/** What the model asks of the reader of sidecars' requests: all it knows of sidecars comes through here. */
export interface Hooks {
  /** The tree of a script inside a string of the script (`sh -c '...'`, a trap's action); undefined: unparsable. */
  readonly parse: (text: string, at: Place) => Scope | undefined;
  /**
   * What a command says to a sidecar, from its words; `child`: the command a wrapper runs; `work`: a call of the
   * job's own through loopback (not a quit nor a wait), which is the job's work too.
   */
  readonly speaks: (
    words: readonly string[],
    at: { readonly key: string; readonly place: Place },
    loopVariables: ReadonlyMap<string, string>,
  ) => { readonly said: number; readonly child?: readonly string[]; readonly work?: boolean } | undefined;
  /** What commands in a tree never run by the model say (a trap on a signal). */
  readonly collect: (scope: Scope) => readonly number[];
  /**
   * The variable of a sidecar's quit URLs that a loop's word names (the kinds table says which), which the loop's
   * variable then stands for; undefined: none.
   */
  readonly quitUrls: (word: string) => string | undefined;
  /** Whether `pgrep`/`pidof` WORDS find a process (undefined: either way), from what the script and the pod show. */
  readonly lookup: (words: readonly string[]) => boolean | undefined;
}

/** A persistent list, newest first: copies of a state share it. */
interface Cons<T> {
  readonly head: T;
  readonly tail: Cons<T> | undefined;
}

/** A function the script defined: its body and the script it is in. */
interface Fn {
  readonly body: SyntaxNode;
  readonly scope: Scope;
}

/** A trap's action, and where its text starts. */
export interface Trap {
  readonly text: string;
  readonly place: Place;
}

/** One path through the script, as far as it ran; copied (clone) where the path forks. */
export interface State {
  world: World;
  /** The job's programs that fail whatever the world (Start's `failing`). */
  failing: ReadonlySet<string> | undefined;
  /** Each variable's value: undefined not known, null unset. One not here is unset where the environment is closed. */
  vars: ReadonlyMap<string, string | undefined | null>;
  closed: boolean;
  nounset: boolean;
  loopVariables: ReadonlyMap<string, string>;
  status: number | undefined;
  statusAt: Place | undefined;
  statusBy: Path['statusBy'];
  errexit: boolean;
  /** bash's `set -E`: the ERR trap runs inside functions too (without it, only outside any). */
  errtrace: boolean;
  pipefail: boolean;
  refusesPipefail: boolean;
  refused: Place | undefined;
  /** The shell that runs this path's script, and what `sh` is in the image. */
  dialect: Dialect;
  sh: Dialect;
  traps: ReadonlyMap<string, Trap>;
  /** The functions defined, by name; undefined: one `unset -f` removed (then a call is command not found). */
  functions: ReadonlyMap<string, Fn | undefined>;
  /** The aliases defined, by name, and whether bash expands them (`shopt -s expand_aliases`; the others always do). */
  aliases: ReadonlyMap<string, Trap>;
  expandAliases: boolean;
  /** The here-document the command being run reads as its input, and where its text starts. */
  stdin: Trap | undefined;
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
export const STEPS_PER_CHARACTER = 4;
export const MIN_STEPS = 200_000;
/** How deep statements nest (the walk recurses), functions call, and scripts hold scripts. */
export const MAX_NESTING = 300;
export const MAX_CALLS = 40;
/** How many times a while or until loop is followed before the path gives up; how many known words a for takes one by one. */
export const MAX_ITERATIONS = 4;
export const MAX_KNOWN_ITERATIONS = 128;
export const MAX_WORDS_IN_LOOP = 16;

/** The walk's steps that the words and the builtins run (a substitution, `eval`, `sh -c`, a function's body). */
export interface Walk {
  /** The statements of a node in order, on every live path. */
  readonly sequence: (node: SyntaxNode, states: State[], scope: Scope, context: Context) => State[];
  /** One statement on one path, counted against the limits. */
  readonly run: (node: SyntaxNode, state: State, scope: Scope, context: Context) => State[];
  /** A subshell of the path: BODY runs in a copy, and its end comes back to the parent. */
  readonly subshell: (node: SyntaxNode, state: State, scope: Scope, context: Context, body: (child: State) => State[]) => State[];
}

/** What one run (one world) shares across its paths: the hooks, the walk, the steps taken, why it gave up. */
export interface Context {
  readonly hooks: Hooks;
  readonly walk: Walk;
  steps: number;
  readonly maxSteps: number;
  nesting: number;
  unknown: string | undefined;
}

/** A path at the script's start, in WORLD, with the shell's options and environment of START. */
export function initial(world: World, start: Start): State {
  return {
    world,
    failing: start.failing,
    vars: new Map(start.env),
    closed: start.closed ?? false,
    nounset: start.nounset ?? false,
    loopVariables: EMPTY,
    status: 0,
    statusAt: undefined,
    statusBy: 'none',
    errexit: start.errexit,
    errtrace: false,
    pipefail: start.pipefail,
    refusesPipefail: start.dialect === 'dash',
    refused: undefined,
    dialect: start.dialect,
    sh: start.sh,
    traps: EMPTY,
    functions: EMPTY,
    aliases: EMPTY,
    expandAliases: false,
    stdin: undefined,
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
export const EMPTY: ReadonlyMap<never, never> = new Map<never, never>();

/** A copy of a state; its maps and lists are shared, never changed: a write puts a new one in its place. */
export const clone = (state: State): State => ({ ...state });

/** MAP with KEY set to VALUE, as a new map. */
export function put<K, V>(map: ReadonlyMap<K, V>, key: K, value: V): ReadonlyMap<K, V> {
  const next = new Map(map);
  next.set(key, value);
  return next;
}

/** MAP without KEY, as a new map (MAP itself when it has no KEY). */
export function without<K, V>(map: ReadonlyMap<K, V>, key: K): ReadonlyMap<K, V> {
  if (!map.has(key)) return map;
  const next = new Map(map);
  next.delete(key);
  return next;
}

/** A list's items, oldest first. */
function toArray<T>(list: Cons<T> | undefined): T[] {
  const items: T[] = [];
  for (let at = list; at !== undefined; at = at.tail) items.push(at.head);
  return items.reverse();
}

/** The Path a state ends as: its events (those never waited for marked background), status and end. */
export function toPath(state: State): Path {
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

/** Whether the path still runs: no exit, exec, return, break or continue ended it. */
export const live = (state: State): boolean => state.done === undefined;

/** Ends the path where the shell stops itself (an error of its own, WHY) with STATUS, as `exit` would. */
export function stopShell(state: State, status: number, place: Place, why: string): State[] {
  state.status = status;
  state.statusAt = place;
  state.statusBy = 'exit';
  state.done = 'exit';
  state.endText = why;
  return [state];
}

/** Ends the path as one that cannot be known (WHY), with no status claimed. */
export function giveUp(state: State, why: string): State {
  state.unknown ??= why;
  state.done = 'exit';
  state.status = undefined;
  return state;
}

/**
 * At most MAX_PATHS paths. Past the limit the run claims nothing, and stops: what the script says to sidecars is
 * then read from its text (shell.ts), each command as one that runs sometimes.
 */
export function capped(states: State[], context: Context): State[] {
  if (states.length <= MAX_PATHS) return states;
  context.unknown ??= `more than ${MAX_PATHS} ways through the script`;
  return [giveUp(states[0] as State, context.unknown)];
}

/** Where a node sits in the whole manifest's text (a script inside a string is offset by where it starts). */
export const placeOf = (node: SyntaxNode, scope: Scope): Place => {
  const { row, column } = node.startPosition;
  return row === 0 ? { row: scope.offset.row, column: scope.offset.column + column } : { row: scope.offset.row + row, column };
};

/** A node's key, unique across the scripts of one run. */
export const keyOf = (node: SyntaxNode, scope: Scope): string => `${scope.id}:${node.startIndex}`;

/** Records an event on the path, and as pending when the path runs in the background. */
export function push(state: State, event: Event): void {
  state.events = { head: event, tail: state.events };
  if (state.background) state.pending = { head: event, tail: state.pending };
}

/** A truth value as statuses: known, one path; not known, a path for each. */
export function decided(truth: boolean | undefined, state: State): State[] {
  if (truth !== undefined) {
    state.status = truth ? 0 : 1;
    return [state];
  }
  const other = clone(state);
  state.status = 0;
  other.status = 1;
  return [state, other];
}

/** The state with its status set to STATUS. */
export const withStatus = (state: State, status: number): State => {
  state.status = status;
  return state;
};

/** Where the text of a word starts: after its opening quote, when it has one. */
export function inside(node: SyntaxNode, scope: Scope): Place {
  const at = placeOf(node, scope);
  return node.type === 'string' || node.type === 'raw_string' ? { row: at.row, column: at.column + 1 } : at;
}
