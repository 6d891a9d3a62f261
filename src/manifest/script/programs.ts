// The one table of programs that run a command: the inits (tini, catatonit, dumb-init), the programs that run their
// arguments (timeout, env, nice, nohup, stdbuf, setsid) and the wrappers that stop sidecars after it (istio-job-run,
// linkerd-await, scuttle, kubexit). Each row holds the program's options as its own getopt string, read from its
// source and cited beside it, where its command starts after them, and which sidecars a wrapper stops; and the
// sidecars' own programs (`cloud-sql-proxy shutdown`, `pilot-agent request`), with what each subcommand sends. Every reader of such a program's words (a
// container's command, a command inside a script, the policy) asks this table.

import type { KindName } from '../../config/kinds.ts';

/** A program that runs a command given on its command line. */
export interface Program {
  /** What it is: an init (PID 1, forwards signals), a program that runs its arguments, or a wrapper that stops sidecars. */
  readonly role: 'init' | 'runs' | 'wrapper';
  /** Its short options as getopt reads them: a letter, and `:` after one that takes a value (a leading `+`: options end at the first operand). */
  readonly getopt: string;
  /** Its long options that take a value (`--rewrite 15:2` or `--rewrite=15:2`); any other `--name` is a switch. */
  readonly longValued?: readonly string[];
  /** Its options other than those named are ones that take a value (a clap parser, where switches are the few). */
  readonly othersTakeValue?: { readonly longSwitches: readonly string[] };
  /** Words after its options and before the command: a duration (timeout), NAME=VALUE assignments (env). */
  readonly operands?: 'duration' | 'assignments';
  /** The sidecars a wrapper stops when its command ends ('all': every one of the pod's), given one of WHEN among its words where named. */
  readonly stops?: {
    readonly kinds: readonly KindName[] | 'all';
    readonly when?: readonly string[];
    /** It stops them only through a tombstone that sidecars run under it too wait for (kubexit), not by a quit of its own. */
    readonly tombstone?: true;
  };
  /** What it does to the command when the pod stops it: forwards signals to it (an init), or nothing of its own. */
  readonly sends: 'forwards signals' | 'sends a signal when a time runs out' | 'nothing';
}

/** What a sidecar's own program sends when run with a subcommand: its kind's quit, the request its words name, a wait for ready. */
type Sends = 'quit' | 'request' | 'ready';

/**
 * The sidecars' own programs that speak to their sidecar, keyed by basename: each subcommand and what it sends (the
 * first of the program's words that names one is its subcommand, after any flags).
 */
const SIDECAR_COMMANDS: ReadonlyMap<string, { readonly kind: KindName; readonly subcommands: Readonly<Record<string, Sends>> }> = new Map([
  // GoogleCloudPlatform/cloud-sql-proxy cmd/root.go (and alloydb-auth-proxy's): `shutdown` posts to the admin
  // port's /quitquitquit.
  ['cloud-sql-proxy', { kind: 'cloud-sql-proxy', subcommands: { shutdown: 'quit' } }],
  ['alloydb-auth-proxy', { kind: 'alloydb-auth-proxy', subcommands: { shutdown: 'quit' } }],
  // istio/istio pilot/cmd/pilot-agent/app/request.go and wait.go: `request METHOD PATH` to the agent's admin port,
  // `wait` for its readiness.
  ['pilot-agent', { kind: 'istio', subcommands: { request: 'request', wait: 'ready' } }],
]);

/** The sidecars' own programs, each with its subcommands that may quit its sidecar: its quit, or a request its words name (not a wait for ready). */
export const SIDECAR_CALLS: ReadonlyMap<string, readonly string[]> = new Map(
  [...SIDECAR_COMMANDS].map(([program, row]) => [
    program,
    Object.entries(row.subcommands)
      .filter(([, sends]) => sends !== 'ready')
      .map(([subcommand]) => subcommand),
  ]),
);

/** What PROGRAM with ARGS sends to its sidecar, where it is a sidecar's own program run with one of its subcommands. */
export function sidecarCommand(program: string, args: readonly string[]): { kind: KindName; sends: Sends; at: number } | undefined {
  const row = SIDECAR_COMMANDS.get(program);
  if (row === undefined) return undefined;
  const at = args.findIndex((arg) => Object.hasOwn(row.subcommands, arg));
  return at < 0 ? undefined : { kind: row.kind, sends: row.subcommands[args[at] as string] as Sends, at };
}

/** The table, keyed by the program's basename. */
export const PROGRAMS: ReadonlyMap<string, Program> = new Map<string, Program>([
  // krallin/tini src/tini.c, OPT_STRING (with a subreaper); tini-static is the same program linked statically.
  ['tini', { role: 'init', getopt: 'p:hvwgle:s', sends: 'forwards signals' }],
  ['tini-static', { role: 'init', getopt: 'p:hvwgle:s', sends: 'forwards signals' }],
  // Yelp/dumb-init dumb-init.c, parse_command_line: getopt_long's string and long_options (--rewrite takes a value).
  ['dumb-init', { role: 'init', getopt: '+hvVcr:', longValued: ['--rewrite'], sends: 'forwards signals' }],
  // openSUSE/catatonit catatonit.c, its usage `catatonit [-ghLPV] [--] <progname>`: switches only.
  ['catatonit', { role: 'init', getopt: 'ghLPV', sends: 'forwards signals' }],
  // coreutils src/timeout.c, getopt_long's "+k:s:fpv"; then a DURATION, then the command.
  [
    'timeout',
    {
      role: 'runs',
      getopt: '+k:s:fpv',
      longValued: ['--kill-after', '--signal'],
      operands: 'duration',
      sends: 'sends a signal when a time runs out',
    },
  ],
  // coreutils src/env.c, shortopts "+a:C:iS:u:v0" (and `-` alone for -i); then NAME=VALUE words, then the command.
  [
    'env',
    {
      role: 'runs',
      getopt: '+a:C:iS:u:v0',
      longValued: ['--argv0', '--chdir', '--split-string', '--unset'],
      operands: 'assignments',
      sends: 'nothing',
    },
  ],
  // coreutils src/nice.c, getopt_long's "+n:" (--adjustment).
  ['nice', { role: 'runs', getopt: '+n:', longValued: ['--adjustment'], sends: 'nothing' }],
  // coreutils src/nohup.c: no options of its own but --help and --version.
  ['nohup', { role: 'runs', getopt: '+', sends: 'nothing' }],
  // coreutils src/stdbuf.c, getopt_long's "+i:o:e:" (--input, --output, --error).
  ['stdbuf', { role: 'runs', getopt: '+i:o:e:', longValued: ['--input', '--output', '--error'], sends: 'nothing' }],
  // util-linux sys-utils/setsid.c, getopt_long's "+Vhcfw".
  ['setsid', { role: 'runs', getopt: '+Vhcfw', sends: 'nothing' }],
  // linkerd/linkerd-await src/main.rs, `Args` (clap): -S/--shutdown, -v/--verbose, -h/--help, -V/--version are
  // switches; its other options take a value.
  [
    'linkerd-await',
    {
      role: 'wrapper',
      getopt: '+SvhV',
      othersTakeValue: { longSwitches: ['--shutdown', '--verbose', '--help', '--version'] },
      stops: { kinds: ['linkerd'], when: ['-S', '--shutdown'] },
      sends: 'nothing',
    },
  ],
  // scuttle (redboxllc/scuttle main.go) and kubexit (karlkfi/kubexit cmd/kubexit/main.go) read no options: they
  // run their first argument, whatever it is (an empty getopt string: no option parsing at all).
  ['scuttle', { role: 'wrapper', getopt: '', stops: { kinds: 'all' }, sends: 'nothing' }],
  ['kubexit', { role: 'wrapper', getopt: '', stops: { kinds: 'all', tombstone: true }, sends: 'nothing' }],
]);

/** The sidecars wrapper NAME stops with these ARGS (its words after its name): none where it is no such wrapper. */
export function wrapperStops(name: string, args: readonly string[]): readonly KindName[] | 'all' {
  const stops = PROGRAMS.get(name)?.stops;
  if (stops === undefined || (stops.when !== undefined && !args.some((arg) => stops.when?.includes(arg)))) return [];
  return stops.kinds;
}

/** Whether wrapper NAME with these ARGS tells sidecars to quit itself when its command ends (not kubexit's tombstone). */
export function quitsItself(name: string, args: readonly string[]): boolean {
  const stops = wrapperStops(name, args);
  return PROGRAMS.get(name)?.stops?.tombstone !== true && (stops === 'all' || stops.length > 0);
}

/** The one sidecar a wrapper is made for, where it stops one kind only (linkerd-await: Linkerd's proxy). */
export function wrapperKind(name: string): KindName | undefined {
  const kinds = PROGRAMS.get(name)?.stops?.kinds;
  return kinds !== undefined && kinds !== 'all' && kinds.length === 1 ? kinds[0] : undefined;
}

/** The switch that makes wrapper NAME stop its sidecars, in its long form (linkerd-await's --shutdown); undefined: none needed. */
export function stopSwitch(name: string): string | undefined {
  const when = PROGRAMS.get(name)?.stops?.when;
  return when?.find((flag) => flag.startsWith('--')) ?? when?.[0];
}

/** The inits: PID 1 programs that run one command after their options (and `--`). */
export const INITS: ReadonlySet<string> = new Set([...PROGRAMS].filter(([, program]) => program.role === 'init').map(([name]) => name));

/** The wrappers that stop sidecars only through a tombstone the sidecars run under them too (kubexit). */
export const TOMBSTONE_WRAPPERS: readonly string[] = [...PROGRAMS]
  .filter(([, program]) => program.stops?.tombstone === true)
  .map(([name]) => name);

/** The programs a sidecar's own program may run under in its container: the inits, and kubexit (its tombstone's reader). */
export const SIDECAR_FRONTS: ReadonlySet<string> = new Set([...INITS, ...TOMBSTONE_WRAPPERS]);

/**
 * Where the command of PROGRAM starts in ARGS (the words after its name), read as its getopt reads them: a switch,
 * an option and its value (joined, `-e143`, or the next word), long options (`--rewrite=15:2`, `--rewrite 15:2`),
 * `--`; then its operands (a duration, NAME=VALUE words). At or past ARGS' length: no command is left; undefined: not
 * a program of the table. Like getopt with `+` (or POSIXLY_CORRECT), options end at the first operand.
 */
export function commandStart(name: string, args: readonly string[]): number | undefined {
  const program = PROGRAMS.get(name);
  if (program === undefined) return undefined;
  const letters = program.getopt.replace(/^\+/, '');
  let at = 0;
  while (program.getopt !== '' && at < args.length) {
    const word = args[at] as string;
    if (word === '--') {
      at++;
      break;
    }
    if (word === '-' && program.operands === 'assignments') {
      at++;
      continue;
    }
    if (!word.startsWith('-') || word === '-') break;
    at++;
    if (word.startsWith('--')) {
      if (!word.includes('=') && takesValue(program, word)) at++;
      continue;
    }
    for (let i = 1; i < word.length; i++) {
      const letter = letters.indexOf(word[i] as string);
      const valued = letter < 0 ? program.othersTakeValue !== undefined : letters[letter + 1] === ':';
      if (!valued) continue;
      // An option that takes a value: the rest of the word, or the next word.
      if (i === word.length - 1) at++;
      break;
    }
  }
  if (program.operands === 'duration') at++;
  if (program.operands === 'assignments') while (at < args.length && /^\w+=/.test(args[at] as string)) at++;
  return at;
}

/** Whether a long option (`--name`, no `=`) takes the next word as its value. */
const takesValue = (program: Program, option: string): boolean =>
  program.othersTakeValue === undefined
    ? (program.longValued ?? []).includes(option)
    : !program.othersTakeValue.longSwitches.includes(option);
