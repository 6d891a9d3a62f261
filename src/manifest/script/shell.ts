// The shell scripts of a container's command (`sh -c SCRIPT`), read by a real parser of POSIX sh and bash
// (tree-sitter's bash grammar, which parses both). The script's outcome is computed by script/outcome.ts; what
// comes out here is what the rules need of it: every request that tells a sidecar to quit or waits for one,
// every wrapper it runs, when each runs (after the job succeeded, after it failed, in which trap), and the
// outcome itself, for the job succeeding and for it failing.

import { Language, Parser } from 'web-tree-sitter';
import { PROGRAM } from '../../bundle/self.ts';
import type { ParserMemory } from '../yaml/memory.ts';
import { BOOKKEEPING, basename, FILTERS, innerCommand, readWrapper, shellScript, WRAPPERS } from './commands.ts';
import { parseCommon } from './common.ts';
import { type ConstructId, constructsIn, type Dialect } from './dialect.ts';
import { emptyIn, outcomeOf } from './outcome.ts';
import { inside, type Outcome, type Path, type Scope } from './state.ts';
import { ownCall, pidVariablesOf, processFound, type Place, QUIT_URLS_VARIABLES, type Request, requestOf } from './requests.ts';
import { grammarFiles } from './shell-grammar.ts';
import { quitsItself } from './programs.ts';
import { plainTree, type Syntax, useCursorBinding } from './syntax.ts';
import { redirectArguments } from './words.ts';

export { WRAPPERS };

/** The variable of quit URLs a loop's word names (`"$CSQL_PROXY_QUIT_URLS"`), as the word's name; undefined: none. */
const quitUrls = (word: string): string | undefined =>
  [...QUIT_URLS_VARIABLES].some((name) => word.includes(name)) ? word.replace(/^\W*|\W*$/g, '') : undefined;

/** WebAssembly's Memory, which the project's type libraries leave out. */
declare const WebAssembly: { readonly Memory: new (descriptor: ParserMemory) => object };

let parser: Parser | undefined;
/** The load under way or done: callers that overlap share it, as the binding's loader can run only once. */
let loading: Promise<void> | undefined;

/** Loads the parser (WebAssembly) once; every other function here needs it loaded. */
export const loadShellParser = (): Promise<void> => loadShellParserWithin(undefined);

/** The same, its memory bounded (memory.ts): V8 maps a memory's whole maximum at once. The first call's bound holds. */
export function loadShellParserWithin(memory: ParserMemory | undefined): Promise<void> {
  loading ??= load(memory).catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

async function load(memory: ParserMemory | undefined): Promise<void> {
  const files = grammarFiles();
  // The binding's loader fills this object in with its exports: plainTree walks trees with its cursor functions.
  const binding = { wasmBinary: files.runtime, ...(memory === undefined ? {} : { wasmMemory: new WebAssembly.Memory(memory) }) };
  await Parser.init(binding);
  useCursorBinding(binding);
  const bash = await Language.load(files.bash);
  parser = new Parser();
  parser.setLanguage(bash);
}

/** When a command runs, as the script's outcome says. */
export interface Runs {
  /** It runs when the job succeeds. */
  readonly onSuccess: boolean;
  /** It runs when the job fails. */
  readonly onFailure: boolean;
  /** It runs on some ways through the script and not others, or the outcome is not wholly known. */
  readonly conditional: boolean;
  /** A command of the job ran before it. */
  readonly afterWork: boolean;
  /** It runs inside a loop (while, until, for): it is retried. */
  readonly repeated: boolean;
  /** It runs, and not only in the background without a wait: the shell does not end before it is sent. */
  readonly effective: boolean;
  /** The trap it runs in: EXIT, ERR, or a signal's. */
  readonly trap?: string;
  /** Why it does not run after a failure, when it does not: `&&`, `set -e`, an exit. */
  readonly skippedBy?: string;
}

interface Wrapper {
  readonly id: number;
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
  readonly requests: readonly (Request & { readonly id: number; readonly runs: Runs })[];
  readonly wrappers: readonly Wrapper[];
  /** A command of the job runs in it. */
  readonly works: boolean;
  /**
   * It only waits for something outside it (`kubectl wait`, a loop over `kubectl get pod`, `pgrep` or a file) and
   * speaks to sidecars: in a pod with another container, a watcher of that container, whose status is not the job's.
   */
  readonly watches: boolean;
  /**
   * A `pgrep`/`pidof` of a process of another container found nothing only because the pod does not share its
   * process namespace (ShellOptions.sharesProcesses false).
   */
  readonly blind: boolean;
  /** What the script does when the job succeeds and when it fails (events name requests and wrappers by id). */
  readonly outcome: Outcome;
  /**
   * The constructs of bash's that the shell running the script reads otherwise (dialect.ts), where each is, and
   * whether they change what the script says to sidecars or the status it ends with, against bash running it.
   */
  readonly constructs?: { readonly found: readonly { readonly id: ConstructId; readonly place: Place }[]; readonly changes: boolean };
}

/** What the shell was started with: `-e` and `-o pipefail` on its command line, and which shell it is. */
export interface ShellOptions {
  readonly errexit: boolean;
  readonly pipefail?: boolean;
  /** The shell that runs the script (bash unless told); `sh`: what sh is in the image (dash unless told). */
  readonly dialect?: Dialect;
  readonly sh?: Dialect;
  readonly nounset?: boolean;
  /** Whether the pod shares its process namespace, where the manifest shows the pod (undefined: not known). */
  readonly sharesProcesses?: boolean;
  /** The job's programs that fail in both worlds, the others succeeding (state.ts, Start's `failing`). */
  readonly failing?: ReadonlySet<string>;
}

/** A word as the shell would see it, without running anything: quotes removed, expansions kept as written. */
function wordValue(node: Syntax): string {
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

const RESERVED = new Set(['do', 'done', 'then', 'fi', 'elif', 'else', 'esac', 'in', '}']);
/** How deep scripts inside strings of scripts are read (`sh -c "bash -c '...'"`). */
const MAX_SCRIPT_DEPTH = 8;

/** Scripts already read, by their text, options and environment: rendered charts repeat one script in many Jobs. */
const read = new Map<string, ScriptFacts>();
const MAX_READ = 512;

/** What a script does, read with the options its shell was started with and the container's environment. */
export function readScript(
  script: string,
  options: ShellOptions,
  env: ReadonlyMap<string, string | undefined> = new Map(),
  closed = false,
): ScriptFacts {
  const key = `${options.errexit}${options.pipefail ?? false}${options.nounset ?? false}${options.dialect ?? ''}${options.sh ?? ''}${options.sharesProcesses ?? ''}${closed}\0${[...(options.failing ?? ['\0'])].join(',')}\0${[...env].join('\0')}\0${script}`;
  const known = read.get(key);
  if (known !== undefined) return known;
  const facts = readUncached(script, options, env, closed);
  if (read.size >= MAX_READ) read.clear();
  read.set(key, facts);
  return facts;
}

function readUncached(script: string, options: ShellOptions, env: ReadonlyMap<string, string | undefined>, closed: boolean): ScriptFacts {
  if (parser === undefined) throw new Error('the shell parser is not loaded (loadShellParser)');
  const shellParser = parser;
  const scopes = new Map<string, Scope | undefined>();
  const parse = (text: string, offset: Place): Scope | undefined => {
    const key = `${offset.row}:${offset.column}:${text}`;
    if (scopes.has(key)) return scopes.get(key);
    const tree = scopes.size < 10_000 ? parseScript(shellParser, text) : null;
    const scope = tree === null || findSyntaxError(tree) !== undefined ? undefined : { root: tree, offset, id: scopes.size + 1 };
    scopes.set(key, scope);
    return scope;
  };
  const tree = parseScript(shellParser, script);
  if (tree === null)
    return {
      requests: [],
      wrappers: [],
      works: false,
      watches: false,
      blind: false,
      syntaxError: { place: ORIGIN, near: '' },
      outcome: NO_OUTCOME,
    };
  const root: Scope = { root: tree, offset: ORIGIN, id: 0 };
  const syntaxError = findSyntaxError(tree);
  const said = new Map<string, Said>();
  const byId: Said[] = [];
  const pidVariables = pidVariablesOf(script);
  const speaks = (words: readonly string[], at: { key: string; place: Place }, loopVariables: ReadonlyMap<string, string>) => {
    const known = said.get(at.key);
    if (known !== undefined) return known.speaks;
    const found = recognise(words, at.place, loopVariables, pidVariables, byId.length);
    if (found !== undefined) {
      said.set(at.key, found);
      byId.push(found);
    }
    return found?.speaks;
  };
  const collect = (scope: Scope): number[] => collectStatic(scope, parse, speaks);
  let blind = false;
  const lookup = (words: readonly string[]): boolean | undefined => {
    const found = processFound(words, script, options.sharesProcesses);
    if (found === false && options.sharesProcesses === false && processFound(words, script, undefined) === undefined) blind = true;
    return found;
  };
  const outcome =
    syntaxError === undefined
      ? outcomeOf(root, { ...startOf(options), env, closed }, { parse, speaks, collect, quitUrls, lookup }, script.length)
      : NO_OUTCOME;
  // What the outcome could not follow to its end is read as it stands, each command as running sometimes; where it
  // followed every way, a command no way reaches (after an if whose every branch exits) is read too, as never run.
  collect(root);
  const runs = runsOf(outcome, byId.length);
  const requests: (Request & { readonly id: number; readonly runs: Runs })[] = [];
  const wrappers: Wrapper[] = [];
  for (const found of byId) {
    const run = runs[found.speaks.said] ?? SOMETIMES;
    if (found.request !== undefined) requests.push({ ...found.request, id: found.speaks.said, runs: run });
    if (found.wrapper !== undefined) wrappers.push({ ...found.wrapper, id: found.speaks.said, runs: run });
  }
  const works = [...outcome.success, ...outcome.failure].some((path) => path.worked);
  const watches = syntaxError === undefined && byId.length > 0 && watchesOnly(root, parse, pidVariables);
  const dialect = options.dialect ?? 'bash';
  const found = syntaxError === undefined ? constructsIn(tree, dialect) : [];
  let constructs: ScriptFacts['constructs'];
  if (found.length > 0) {
    // The same script run by bash, as its author ran it: the difference is what the shell's own rules change.
    const asBash = outcomeOf(
      root,
      { ...startOf(options), dialect: 'bash', sh: 'bash', env, closed },
      { parse, speaks, collect, quitUrls, lookup },
      script.length,
    );
    constructs = {
      found: found.map(({ id, node }) => ({ id, place: node.startPosition })),
      changes: summary(asBash) !== summary(outcome),
    };
  }
  return {
    ...(syntaxError === undefined ? {} : { syntaxError }),
    requests,
    wrappers,
    works,
    watches,
    blind,
    outcome,
    ...(constructs === undefined ? {} : { constructs }),
  };
}

/** The shell's options at its start, from those it was started with. */
const startOf = (options: ShellOptions) =>
  ({
    errexit: options.errexit,
    pipefail: options.pipefail ?? false,
    nounset: options.nounset ?? false,
    dialect: options.dialect ?? 'bash',
    sh: options.sh ?? 'dash',
    ...(options.failing === undefined ? {} : { failing: options.failing }),
  }) as const;

/** What an outcome says to sidecars and the statuses it ends with, path by path, as one text to compare. */
function summary(outcome: Outcome): string {
  const paths = (list: readonly Path[]): string =>
    [
      ...new Set(
        list.map((path) => `${path.events.map((event) => (event.what === 'work' ? 'w' : `s${event.said}`)).join(',')}:${path.status}`),
      ),
    ]
      .sort()
      .join(' ');
  return `${paths(outcome.success)} | ${paths(outcome.failure)}`;
}

const ORIGIN: Place = { row: 0, column: 0 };
const NO_OUTCOME: Outcome = {
  success: [],
  failure: [],
  unknown: { success: 'the script is not read', failure: 'the script is not read' },
  onSignal: [],
};
const SOMETIMES: Runs = { onSuccess: true, onFailure: true, conditional: true, afterWork: false, repeated: false, effective: true };

/** The comments of scripts already read, by their text: rendered charts repeat one script in many Jobs. */
const commented = new Map<string, readonly { readonly text: string; readonly place: Place }[]>();

/**
 * The comments of a script, as the shell reads them (the parser's comment nodes: never a `#` inside a quoted
 * string, a word or a here-document), each with its place in the script.
 */
export function scriptComments(script: string): readonly { readonly text: string; readonly place: Place }[] {
  const known = commented.get(script);
  if (known !== undefined) return known;
  if (parser === undefined) throw new Error('the shell parser is not loaded (loadShellParser)');
  const tree = parseScript(parser, script);
  const comments = (tree?.descendantsOfType('comment') ?? []).map((node) => ({ text: node.text, place: node.startPosition }));
  if (commented.size >= MAX_READ) commented.clear();
  commented.set(script, comments);
  return comments;
}

/** SCRIPT's tree, as every reader here parses it (null: not parsed); the parser must be loaded. */
export function parseShell(script: string): Syntax | null {
  if (parser === undefined) throw new Error('the shell parser is not loaded (loadShellParser)');
  return parseScript(parser, script);
}

/** A script parsed; a heredoc left open runs to the end of the script, as bash and dash run it. */
function parseScript(shellParser: Parser, script: string): Syntax | null {
  // A line continuation at the very end joins nothing: the shell takes it as the end.
  const text = script.replace(/\\(\r?\n)?\s*$/, '');
  const root = plain(shellParser, text);
  if (root === null || !root.hasError) return root;
  const open = root.descendantsOfType('heredoc_start').at(-1);
  const delimiter = open?.text.replace(/['"\\]/g, '');
  if (open === undefined || delimiter === undefined || new RegExp(`^\\t*${delimiter}$`, 'm').test(text.slice(open.endIndex))) return root;
  return plain(shellParser, `${text}\n${delimiter}\n`);
}

/** TEXT parsed, as plain nodes (the parser's tree freed); the shapes most scripts have without the parser. */
function plain(shellParser: Parser, text: string): Syntax | null {
  const common = parseCommon(text);
  if (common !== undefined) return common;
  const tree = shellParser.parse(text);
  if (tree === null) return null;
  try {
    return plainTree(tree, text);
  } finally {
    tree.delete();
  }
}

interface Said {
  readonly speaks: { readonly said: number; readonly child?: readonly string[]; readonly work?: boolean };
  readonly request?: Request;
  readonly wrapper?: Omit<Wrapper, 'id' | 'runs'>;
}

/** A request or a wrapper, from a command's words (prefixes taken off). */
function recognise(
  words: readonly string[],
  place: Place,
  loopVariables: ReadonlyMap<string, string>,
  pidVariables: ReadonlyMap<string, string>,
  id: number,
): Said | undefined {
  const program = basename(words[0] ?? '');
  if ((WRAPPERS as readonly string[]).includes(program)) {
    const at = readWrapper(program, words.slice(1)).child;
    const child = at === undefined ? undefined : words.slice(at + 1);
    const quits = program === PROGRAM || quitsItself(program, words.slice(1));
    return {
      speaks: { said: id, ...(child === undefined ? {} : { child }) },
      wrapper: { program, quits, ...(child?.[0] === undefined ? {} : { child: child[0] }), place },
    };
  }
  const request = requestOf(words, place, loopVariables, pidVariables);
  return request === undefined ? undefined : { speaks: { said: id, ...(ownCall(request) ? { work: true } : {}) }, request };
}

/** A simple command found by the walk (its words, prefixes taken off), a loop, or a script inside that cannot be read. */
type Found =
  | { readonly kind: 'command'; readonly words: readonly string[]; readonly name: Syntax; readonly first: Syntax; readonly scope: Scope }
  | { readonly kind: 'loop' }
  | { readonly kind: 'unread' };

/** Each simple command of a tree and of the scripts inside it (`sh -c '...'`), read as written, without running anything. */
function* staticCommands(scope: Scope, parse: (text: string, at: Place) => Scope | undefined, depth = 0): Generator<Found> {
  const stack: Syntax[] = [scope.root];
  // The arguments of a redirected command written after a redirection's target, by the command.
  const redirected = new Map<Syntax, Syntax[]>();
  while (stack.length > 0) {
    const node = stack.pop() as Syntax;
    for (let i = node.namedChildCount - 1; i >= 0; i--) {
      const child = node.namedChild(i);
      if (child !== null) stack.push(child);
    }
    if (node.type === 'while_statement') yield { kind: 'loop' };
    const body = node.type === 'redirected_statement' ? node.childForFieldName('body') : null;
    if (body?.type === 'command') redirected.set(body, redirectArguments(node));
    if (node.type !== 'command') continue;
    const name = node.childForFieldName('name');
    if (name === null) continue;
    const nodes = [
      name,
      ...node.childrenForFieldName('argument').filter((arg): arg is Syntax => arg !== null),
      ...(redirected.get(node) ?? []),
    ];
    const inner = innerCommand(nodes, wordValue);
    const words = inner.words.map(wordValue);
    const shell = shellScript(words);
    const scriptNode = shell === undefined ? undefined : inner.words[shell.at];
    if (scriptNode !== undefined && depth < MAX_SCRIPT_DEPTH) {
      const nested = parse(wordValue(scriptNode), inside(scriptNode, scope));
      if (nested === undefined) yield { kind: 'unread' };
      else yield* staticCommands(nested, parse, depth + 1);
      continue;
    }
    yield { kind: 'command', words, name, first: inner.words[0] ?? name, scope };
  }
}

/** What every command of a tree says, read as written (a trap's action, a script not followed to its end). */
function collectStatic(
  scope: Scope,
  parse: (text: string, at: Place) => Scope | undefined,
  speaks: (
    words: readonly string[],
    at: { key: string; place: Place },
    loopVariables: ReadonlyMap<string, string>,
  ) => { said: number } | undefined,
): number[] {
  const found: number[] = [];
  for (const command of staticCommands(scope, parse)) {
    if (command.kind !== 'command') continue;
    const { row, column } = command.first.startPosition;
    const { offset, id } = command.scope;
    const place = row === 0 ? { row: offset.row, column: offset.column + column } : { row: offset.row + row, column };
    const said = speaks(command.words, { key: `${id}:${command.name.startIndex}`, place }, new Map());
    if (said !== undefined) found.push(said.said);
  }
  return found;
}

/** Programs that wait for another container's end: `kubectl wait`, `kubectl get pod` in a loop, `pgrep`, `inotifywait`. */
const WAITS = new Set(['pgrep', 'pidof', 'inotifywait']);
/** What a watcher's polling passes its output through. */
const POLL_FILTERS = new Set(['grep', 'egrep', 'fgrep', 'jq']);

/**
 * Whether every command of the script (and of the scripts inside it) waits, polls, keeps the books or speaks to a
 * sidecar, and something waits: a wait of WAITS or kubectl's, or a while or until loop.
 */
function watchesOnly(
  scope: Scope,
  parse: (text: string, at: Place) => Scope | undefined,
  pidVariables: ReadonlyMap<string, string>,
): boolean {
  let waited = false;
  for (const command of staticCommands(scope, parse)) {
    if (command.kind === 'unread') return false;
    if (command.kind === 'loop') {
      waited = true;
      continue;
    }
    const { words } = command;
    const program = basename(words[0] ?? '');
    const kubectl = (program === 'kubectl' || program === 'oc') && (words[1] === 'wait' || words[1] === 'get');
    if (kubectl || WAITS.has(program)) waited = true;
    else if (!BOOKKEEPING.has(program) && !FILTERS.has(program) && !POLL_FILTERS.has(program)) {
      if (requestOf(words, ORIGIN, new Map(), pidVariables) === undefined && !(WRAPPERS as readonly string[]).includes(program))
        return false;
    }
  }
  return waited;
}

/** When each request and wrapper runs, by id, from the paths of the outcome. */
function runsOf(outcome: Outcome, count: number): Runs[] {
  const seen = Array.from({ length: count }, () => ({
    success: 0,
    failure: 0,
    afterWork: false,
    repeated: false,
    effective: false,
    trap: undefined as string | undefined,
  }));
  const failures = outcome.failure.filter((path) => path.failed);
  // The path each id was last counted on, so that an id said twice on one path counts once.
  const countedOn = new Array<Path | undefined>(count);
  const read = (world: 'success' | 'failure', paths: readonly Path[]): void => {
    for (const path of paths) {
      let worked = false;
      for (const event of path.events) {
        if (event.what === 'work') worked = true;
        if (event.said === undefined) continue;
        const entry = seen[event.said];
        if (entry === undefined) continue;
        if (countedOn[event.said] !== path) entry[world]++;
        countedOn[event.said] = path;
        entry.repeated ||= event.looped === true;
        entry.afterWork ||= worked;
        entry.effective ||= event.background !== true;
        if (event.trap !== undefined) entry.trap = event.trap;
      }
    }
  };
  read('success', outcome.success);
  read('failure', failures);
  const signals = new Map(outcome.onSignal.map(({ said, trap }) => [said, trap]));
  const unknown = outcome.unknown.success !== undefined || outcome.unknown.failure !== undefined;
  const skippedBy = (): string => {
    const ended = failures.find((path) => path.end === 'errexit' || path.end === 'exit');
    return ended === undefined ? '&&' : ended.end === 'errexit' ? 'set -e' : `"${ended.endText ?? 'exit'}"`;
  };
  return seen.map((entry, said) => {
    const trap = entry.trap ?? signals.get(said);
    const ran = entry.success + entry.failure > 0;
    const conditional =
      unknown ||
      !ran ||
      (entry.success > 0 && entry.success < outcome.success.length) ||
      (entry.failure > 0 && entry.failure < failures.length);
    return {
      onSuccess: entry.success > 0 || (unknown && !ran),
      onFailure: entry.failure > 0 || (unknown && !ran),
      conditional,
      afterWork: entry.afterWork,
      repeated: entry.repeated,
      effective: entry.effective || (unknown && !ran),
      ...(trap === undefined ? {} : { trap }),
      ...(entry.success > 0 && entry.failure === 0 && failures.length > 0 ? { skippedBy: skippedBy() } : {}),
    };
  });
}

/** The first place the shell would reject: what the parser could not read, or a reserved word used as a command. */
function findSyntaxError(root: Syntax): ScriptFacts['syntaxError'] {
  const stack: Syntax[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as Syntax;
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
      if (child !== null && !(node.type === 'for_statement' && emptyIn(child))) stack.push(child);
    }
  }
  return undefined;
}
