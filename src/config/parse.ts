// The command line and the environment into an Invocation: flags beat variables, variables beat scuttle's
// variables, those beat the defaults (options.ts), each option resolved once, here. Bad values become
// error messages that name the flag or variable; what did parse is kept, so a usage error can still tell the
// sidecars to quit.

import yargsParser from 'yargs-parser';
import { errorMessage } from '../errors.ts';
import { DEFAULTS, type Options, SPECS, type Spec } from './options.ts';
import { quote } from '../quote.ts';
import { describeScuttle, readScuttle } from './scuttle.ts';
import { PartialError } from './values.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** `scuttle`: the one info line saying which of scuttle's variables are in effect and what they stand for. */
export type Invocation =
  | {
      readonly kind: 'run';
      readonly options: Options;
      readonly command: readonly string[];
      readonly scuttle?: string;
      readonly envoyAdmin: boolean;
    }
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  /** --install DIR: put a working copy of the portable bundle into DIR (an emptyDir shared with the job). */
  | { readonly kind: 'install'; readonly dir: string }
  /** What did parse is kept, defaults elsewhere, so the sidecar can still be told to quit. */
  | {
      readonly kind: 'usage-error';
      readonly options: Options;
      readonly errors: readonly string[];
      /** The command, where one was given: --check reads what a wrapper with a bad option would have run. */
      readonly command?: readonly string[];
      readonly scuttle?: string;
      readonly envoyAdmin: boolean;
    };

const BY_FLAG = new Map(SPECS.map(([key, spec]) => [spec.flag, key]));
const SHORT_FLAGS: Record<string, string> = { h: 'help' };
const INSTALL_USAGE = '--install: needs a directory (--install DIR)';

/** Splits argv into the wrapper's options and the command, and merges flags, environment and defaults. */
export function parseInvocation(argv: readonly string[], env: Env): Invocation {
  const switches = [...SPECS.filter(([, spec]) => spec.kind === 'switch').map(([, spec]) => spec.flag), 'help', 'version', 'h'];
  const valued = [...SPECS.filter(([, spec]) => spec.kind !== 'switch').map(([, spec]) => spec.flag), 'install'];
  const parsed = yargsParser.detailed([...argv], {
    string: valued,
    boolean: switches,
    // A switch never takes the next argument (`--no-wait true` runs the command `true`); a value option always
    // does, as getopt would, even when it starts with a dash (`--ready-timeout -1s` is a bad duration).
    narg: Object.fromEntries([...switches.map((flag) => [flag, 0]), ...valued.map((flag) => [flag, 1])]),
    configuration: {
      'halt-at-non-option': true,
      'populate--': true,
      'nargs-eats-options': true,
      'camel-case-expansion': false,
      'dot-notation': false,
      'parse-numbers': false,
      'parse-positional-numbers': false,
      'boolean-negation': true,
      'duplicate-arguments-array': true,
      'flatten-duplicate-arrays': true,
      'greedy-arrays': false,
      'short-option-groups': true,
      'unknown-options-as-args': false,
      'strip-aliased': false,
      'strip-dashed': false,
      'set-placeholder-key': false,
    },
  });

  const errors: string[] = [];
  const flags: Record<string, unknown> = {};
  for (const [rawKey, value] of Object.entries(parsed.argv)) {
    if (rawKey === '_' || rawKey === '--') continue;
    const key = SHORT_FLAGS[rawKey] ?? rawKey;
    const negated = /^no-(.+)$/.exec(key)?.[1];
    if (key === 'help' || key === 'version' || key === 'install') {
      if (value === false) errors.push(unknownOption(`--no-${key}`));
      else flags[key] = value;
    } else if (BY_FLAG.has(key)) flags[key] = value;
    else if (negated !== undefined && switches.includes(negated) && negated !== 'h') errors.push(takesNoValue(negated, argv));
    else errors.push(unknownOption(written(rawKey, argv)));
  }
  if (flags['help'] === true) return { kind: 'help' };
  if (flags['version'] === true) return { kind: 'version' };
  const complaints = translate(parsed.error, argv);
  // `--install` with nothing after it: yargs drops the flag, so it is recognised by its complaint.
  if (flags['install'] !== undefined || complaints.includes(INSTALL_USAGE)) {
    return parseInstall(flags['install'], [...errors, ...complaints], parsed.argv);
  }
  errors.push(...complaints);

  const scuttle = readScuttle(env, DEFAULTS.quitUrls);
  const options: Record<string, unknown> = {};
  // Which flag or variable set an option that a scuttle variable asked for too.
  const overrides = new Map<keyof Options, string>();
  for (const [key, spec] of SPECS) {
    const resolved = resolveOption(spec, flags[spec.flag], env[spec.env], scuttle.options[key]);
    if (resolved.error !== undefined) errors.push(resolved.error);
    options[key] = resolved.value;
    if (resolved.source === 'env') overrides.set(key, spec.env);
    if (resolved.source === 'flag')
      overrides.set(key, spec.kind === 'switch' && resolved.value === false ? `--no-${spec.flag}` : `--${spec.flag}`);
  }
  errors.push(...scuttle.errors);
  const line = describeScuttle(scuttle.effects, overrides);
  const note = { envoyAdmin: scuttle.envoyAdmin, ...(line === undefined ? {} : { scuttle: line }) };

  const command = [...(parsed.argv._ ?? []), ...afterDashes(parsed.argv)].map(String);
  if (errors.length === 0 && command.length === 0) {
    errors.push('no command given (usage: istio-job-run [options] [--] COMMAND [ARG...])');
  }
  if (errors.length > 0) {
    return { kind: 'usage-error', options: options as unknown as Options, errors: [...new Set(errors)], command, ...note };
  }
  return { kind: 'run', options: options as unknown as Options, command, ...note };
}

function parseInstall(value: unknown, errors: string[], argv: yargsParser.Arguments): Invocation {
  const dir = Array.isArray(value) ? value.at(-1) : value;
  const extra = [...(argv._ ?? []), ...afterDashes(argv)];
  if ((typeof dir !== 'string' || dir === '') && !errors.includes(INSTALL_USAGE)) errors.push(INSTALL_USAGE);
  if (extra.length > 0) errors.push(`--install: takes no command (got ${JSON.stringify(extra.map(String).join(' '))})`);
  // An install runs in an init container, before any sidecar starts: a usage error has nothing to quit.
  if (errors.length > 0 || typeof dir !== 'string') {
    return { kind: 'usage-error', options: { ...DEFAULTS, sidecar: 'none' }, errors, envoyAdmin: false };
  }
  return { kind: 'install', dir };
}

/** What followed `--` (populate--). */
function afterDashes(argv: yargsParser.Arguments): unknown[] {
  const rest: unknown = argv['--'];
  return Array.isArray(rest) ? rest : [];
}

const unknownOption = (flag: string): string => `unknown option ${flag} (see istio-job-run --help)`;

/** An option as the user wrote it (`--x`, `-x`, `--no-foo`), found again in argv: yargs-parser keeps only its name. */
function written(key: string, argv: readonly string[]): string {
  for (const arg of argv) {
    if (arg === '--') break;
    if (arg.startsWith('--')) {
      const name = arg.slice(2).split('=')[0];
      if (name === key || name === `no-${key}`) return `--${name}`;
    } else if (arg.startsWith('-') && key.length === 1 && arg.slice(1).split('=')[0]?.includes(key) === true) return `-${key}`;
  }
  return `${key.length === 1 ? '-' : '--'}${key}`;
}

/** A switch given a value (--wait=false): the message shows the value as it was written. */
function takesNoValue(name: string, argv: readonly string[]): string {
  const written = argv.find((arg) => arg.startsWith(`--${name}=`) || arg.startsWith(`--no-${name}=`));
  const value = written === undefined ? '' : `, got ${quote(written.slice(written.indexOf('=') + 1))}`;
  return `--${name}: takes no value${value} (use --${name} or --no-${name})`;
}

/** yargs-parser's own complaints, in this tool's words. */
function translate(error: Error | null, argv: readonly string[]): string[] {
  if (error === null) return [];
  const unexpected = /^Argument unexpected for: (\S+)$/.exec(error.message)?.[1];
  if (unexpected !== undefined) return [takesNoValue(unexpected, argv)];
  const missing = /^Not enough arguments following: (\S+)$/.exec(error.message)?.[1];
  if (missing === 'install') return [INSTALL_USAGE];
  const spec = SPECS.find(([, candidate]) => candidate.flag === missing)?.[1];
  if (spec !== undefined) return [`--${spec.flag}: needs a value (${spec.usage})`];
  return [error.message];
}

/** Where an option's value came from. */
type Source = 'flag' | 'env' | 'scuttle' | 'default';

interface Resolved {
  readonly value: unknown;
  readonly source: Source;
  readonly error?: string;
}

/**
 * Flag beats variable beats scuttle's variables beat default. A bad flag falls back to a good variable, a bad
 * variable to scuttle's or the default, so a usage error can still tell the sidecar to quit at the right URL.
 * A list keeps its good entries beside the error about its bad ones.
 */
function resolveOption(spec: Spec<unknown>, flag: unknown, envValue: string | undefined, scuttleValue: unknown): Resolved {
  const below: Resolved =
    scuttleValue === undefined ? { value: spec.default, source: 'default' } : { value: scuttleValue, source: 'scuttle' };
  let fromEnv = below;
  if (envValue !== undefined) {
    try {
      fromEnv = { value: spec.parse(envValue), source: 'env' };
    } catch (error) {
      fromEnv = partial(error, 'env') ?? below;
      fromEnv = { ...fromEnv, error: `${spec.env}: ${errorMessage(error)}` };
    }
  }
  if (flag === undefined) return fromEnv;
  try {
    return { value: parseFlag(spec, flag), source: 'flag' };
  } catch (error) {
    const kept = partial(error, 'flag') ?? fromEnv;
    return { value: kept.value, source: kept.source, error: `--${spec.flag}: ${errorMessage(error)}` };
  }
}

/** The good entries of a list that had bad ones too; none kept: the value below holds. */
const partial = (error: unknown, source: Source): Resolved | undefined =>
  error instanceof PartialError && error.partial.length > 0 ? { value: error.partial, source } : undefined;

function parseFlag(spec: Spec<unknown>, flag: unknown): unknown {
  const values = Array.isArray(flag) ? flag : [flag];
  if (spec.kind === 'switch') {
    // --NAME, --no-NAME, --NAME=true|false: yargs-parser hands over booleans or strings.
    const last: unknown = values.at(-1);
    return typeof last === 'boolean' ? last : spec.parse(String(last));
  }
  if (values.some((value) => typeof value !== 'string')) throw new Error('is a value option, not a switch');
  if (values.some((value) => value === '')) throw new Error(`needs a value (${spec.usage})`);
  if (spec.kind === 'list') return parseList(spec, values.map(String));
  return spec.parse(String(values.at(-1)));
}

/** Every value of a repeated list flag; one bad value keeps the others. */
function parseList(spec: Spec<unknown>, values: readonly string[]): unknown[] {
  const kept: unknown[] = [];
  const errors: string[] = [];
  for (const value of values) {
    try {
      const parsed: unknown = spec.parse(value);
      if (Array.isArray(parsed)) kept.push(...parsed);
    } catch (error) {
      if (error instanceof PartialError) kept.push(...error.partial);
      errors.push(errorMessage(error));
    }
  }
  if (errors.length > 0) throw new PartialError(errors.join('; '), kept);
  return kept;
}
