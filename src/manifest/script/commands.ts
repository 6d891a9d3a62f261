// What a command's words are, before what it does: the programs that run their arguments as a command
// (`timeout 60 sh -c ...`, `env A=1 job`, `tini -- job`), the shells whose `-c SCRIPT` is a script read in
// turn, the options a shell or `set` switches, the programs that are bookkeeping, not the job, and the one reader of
// a wrapper's own options.

import { PROGRAM } from '../../bundle/self.ts';
import type { Options } from '../../config/options.ts';
import { parseInvocation } from '../../config/parse.ts';
import { commandStart, PROGRAMS } from './programs.ts';

/** Programs that only prepare, report or wait: not the job's work, whose failure is what the rules follow. */
export const BOOKKEEPING = new Set([
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
  'type',
  'hash',
  'umask',
  'ulimit',
  'wait',
  'date',
  'return',
  'break',
  'continue',
  'let',
  'which',
  'read',
  'alias',
  'pgrep',
  'pidof',
]);

/** Programs that pass on what flows through a pipe, and succeed: `job | tee log`. */
export const FILTERS = new Set(['tee', 'cat', 'sed', 'awk', 'head', 'tail', 'tr', 'cut', 'sort', 'uniq', 'wc', 'logger', 'ts']);

/** The wrappers that run a command and stop sidecars after it. */
export const WRAPPERS: readonly string[] = [PROGRAM, ...[...PROGRAMS].filter(([, row]) => row.role === 'wrapper').map(([name]) => name)];

/** A wrapper's command line as the wrapper reads it. */
export interface WrapperReading {
  /** Where the command it runs starts in its arguments, when it runs one. */
  readonly child?: number;
  /** istio-job-run's options, as its own parser reads them (with the container's environment, where known). */
  readonly options?: Options;
}

/**
 * The one reader of a wrapper's arguments (the words after its name): istio-job-run through its own parser
 * (src/config/parse.ts), so a switch, a value option, `--` and a bad option are read as the wrapper reads them;
 * linkerd-await by its switches; scuttle and kubexit take no options and run their first argument.
 */
export function readWrapper(program: string, args: readonly string[], env: Readonly<Record<string, string>> = {}): WrapperReading {
  if (program === PROGRAM) {
    const invocation = parseInvocation(args, env);
    if (invocation.kind !== 'run' && invocation.kind !== 'usage-error') return {};
    const command = invocation.command ?? [];
    return { options: invocation.options, ...(command.length === 0 ? {} : { child: args.length - command.length }) };
  }
  const child = commandStart(program, args);
  return child === undefined || child >= args.length ? {} : { child };
}

/** The shells whose `-c SCRIPT` is read. */
const SHELLS = new Set(['sh', 'bash', 'ash', 'dash', 'ksh', 'mksh', 'zsh']);

export const basename = (word: string): string => word.slice(word.lastIndexOf('/') + 1);

type Word = (index: number) => string;

/** A program's options, after it at AT: the index of the first word that is not one (VALUED: options that take a value). */
const options =
  (valued: RegExp) =>
  (at: number, word: Word): number => {
    let next = at + 1;
    while (word(next).startsWith('-') && word(next) !== '-') {
      const option = word(next++);
      if (option === '--') break;
      if (valued.test(option)) next++;
    }
    return next;
  };

/**
 * The programs that run their arguments as a command, each with where that command starts (the program at AT), or
 * undefined where this use runs none (`command -v`): `exec`, `env A=1`, `nice -n 5`, `nohup`, `stdbuf -oL`,
 * `setsid`, `timeout -s KILL 60`, `time`, `command`, an init's `--`, `busybox APPLET`, `gosu USER`.
 */
const RUNS_ARGUMENTS: ReadonlyMap<string, (at: number, word: Word, count: number) => number | undefined> = new Map<
  string,
  (at: number, word: Word, count: number) => number | undefined
>([
  ['exec', options(/^-a$/)],
  ['time', options(/^$/)],
  ['command', (at: number, word: Word): number | undefined => (word(at + 1).startsWith('-') ? undefined : at + 1)],
  ['gosu', (at: number): number => at + 2],
  ['su-exec', (at: number): number => at + 2],
  ['busybox', (at: number, word: Word): number | undefined => (/^[a-z]/.test(word(at + 1)) ? at + 1 : undefined)],
  // The table's inits and programs that run their arguments, read by their own options.
  ...[...PROGRAMS]
    .filter(([, row]) => row.role !== 'wrapper')
    .map(([name]) => {
      const start = (at: number, word: Word, count: number): number =>
        at +
        1 +
        (commandStart(
          name,
          Array.from({ length: Math.max(0, count - at - 1) }, (_, i) => word(at + 1 + i)),
        ) ?? 0);
      return [name, start] as const;
    }),
]);

/** Whether PROGRAM runs words of its own as a command or a script: a shell, or a program of RUNS_ARGUMENTS. */
export const runsWords = (program: string): boolean => SHELLS.has(program) || RUNS_ARGUMENTS.has(program);

/**
 * The command that the programs in front of it run (RUNS_ARGUMENTS). `replaces`: an `exec` in front, which puts
 * the command in the shell's place.
 */
export function innerCommand<T>(words: readonly T[], text: (word: T) => string | undefined): { words: readonly T[]; replaces: boolean } {
  // Most commands have none in front: they pass straight through (every command of every path comes here).
  if (words.length < 2 || !RUNS_ARGUMENTS.has(basename(text(words[0] as T) ?? ''))) return { words, replaces: false };
  let at = 0;
  let replaces = false;
  const word = (index: number): string => (index < words.length ? (text(words[index] as T) ?? '') : '');
  for (let guard = 0; guard < 16 && at < words.length - 1; guard++) {
    const program = basename(word(at));
    const next = RUNS_ARGUMENTS.get(program)?.(at, word, words.length);
    if (next === undefined) break;
    if (program === 'exec') replaces = true;
    at = next;
  }
  return { words: at === 0 ? words : words.slice(at), replaces };
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
      else if (letter === 'u') found.push({ name: 'nounset', on });
      else if (letter === 'o') found.push({ name: words[++i] ?? '', on });
    }
  }
  return found;
}

/**
 * A shell run with `-c`: the index of its script among the words, and whether -e, -u and pipefail are on.
 */
export function shellScript(words: readonly string[]): { at: number; errexit: boolean; pipefail: boolean; nounset: boolean } | undefined {
  let start = 0;
  if (basename(words[0] ?? '') === 'busybox') start = 1;
  if (!SHELLS.has(basename(words[start] ?? ''))) return undefined;
  let scriptAt: number | undefined;
  let end = start + 1;
  for (; end < words.length; end++) {
    const word = words[end] as string;
    if (!/^[-+][a-zA-Z]+$/.test(word)) break;
    if (word.startsWith('-') && word.includes('c')) {
      scriptAt = end + 1 + (word.endsWith('o') ? 1 : 0);
      break;
    }
    // -o NAME, -eo NAME: the next word is the option's name.
    if (word.endsWith('o')) end++;
  }
  // `sh -c -- SCRIPT`: the `--` ends the options, and the script is the word after it.
  if (scriptAt !== undefined && words[scriptAt] === '--') scriptAt++;
  if (scriptAt === undefined || scriptAt >= words.length) return undefined;
  const optionWords = words.slice(start + 1, scriptAt).map((word) => (/^[-+]/.test(word) ? word.replace(/c/g, '') : word));
  const options = shellOptions(optionWords.filter((word) => word !== '-' && word !== '+'));
  const on = (name: string): boolean => options.filter((option) => option.name === name).at(-1)?.on ?? false;
  return { at: scriptAt, errexit: on('errexit'), pipefail: on('pipefail'), nounset: on('nounset') };
}

/** A shell that reads its script from its input (`sh -s`, `bash -e`, `busybox sh`): whether -e, -u and pipefail are on; undefined: not one. */
export function stdinShell(words: readonly string[]): { errexit: boolean; pipefail: boolean; nounset: boolean } | undefined {
  const start = basename(words[0] ?? '') === 'busybox' ? 1 : 0;
  if (!SHELLS.has(basename(words[start] ?? ''))) return undefined;
  const rest = words.slice(start + 1);
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i] as string;
    if (!/^[-+][a-zA-Z]*$/.test(word) || word.includes('c')) return undefined;
    if (word.endsWith('o')) i++;
  }
  const options = shellOptions(rest.map((word) => word.replace(/s/g, '')).filter((word) => !/^[-+]$/.test(word)));
  const on = (name: string): boolean => options.filter((option) => option.name === name).at(-1)?.on ?? false;
  return { errexit: on('errexit'), pipefail: on('pipefail'), nounset: on('nounset') };
}
