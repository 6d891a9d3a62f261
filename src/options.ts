// Every option, declared once: flag, environment variable, default, parser and help text.
// Parsing, precedence (flag > variable > scuttle's variables > default), error messages and --help all come
// from this table and from scuttle.ts.

import yargsParser from 'yargs-parser';
import { quote } from './duration.ts';
import { EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND, EXIT_WRAPPER_FAILED } from './exit-code.ts';
import { STATUS_VARIABLE, type SidecarSetting } from './mode.ts';
import { SCUTTLE_VARIABLES, describeScuttle, readScuttle } from './scuttle.ts';
import { durationAtLeast, httpUrl, urlList } from './values.ts';

export type QuitPolicy = 'always' | 'on-success' | 'never';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFormat = 'text' | 'json';

export interface Options {
  readonly sidecar: SidecarSetting;
  readonly readyUrl: URL;
  readonly readyTimeout: number;
  readonly pollInterval: number;
  readonly requestTimeout: number;
  readonly startWithoutProxy: boolean;
  readonly wait: boolean;
  readonly quitUrls: readonly URL[];
  readonly quit: QuitPolicy;
  readonly quitTimeout: number;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
}

type Env = Readonly<Record<string, string | undefined>>;

interface Spec<T> {
  /** Long flag without dashes; a switch is written --NAME or --no-NAME. */
  readonly flag: string;
  readonly env: string;
  readonly kind: 'value' | 'list' | 'switch';
  /** How the flag is shown in --help, e.g. "--ready-timeout DURATION". */
  readonly usage: string;
  readonly default: T;
  readonly defaultText: string;
  /** Parses one value; throws an Error whose message says what is wrong and what is allowed. */
  readonly parse: (raw: string) => T;
  readonly help: string;
}

const oneOf = <T extends string>(...allowed: readonly T[]) => (raw: string): T => {
  const value = raw.trim().toLowerCase();
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new Error(`${quote(raw)} is not one of ${allowed.join(', ')}`);
};

function bool(raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw new Error(`${quote(raw)} is not a boolean (true, false, 1, 0, yes, no)`);
}


/** The whole interface. The order here is the order of --help. */
export const OPTIONS: { readonly [K in keyof Options]: Spec<Options[K]> } = {
  sidecar: {
    flag: 'sidecar', env: 'ISTIO_JOB_RUN_SIDECAR', kind: 'value', usage: '--sidecar auto|classic|native|none',
    default: 'auto', defaultText: 'auto', parse: oneOf('auto', 'classic', 'native', 'none'),
    help: `What the pod has. auto: from ${STATUS_VARIABLE} if set, else classic if scuttle's ENVOY_ADMIN_API is ` +
      'set, else none outside Kubernetes, else classic. ' +
      'classic: wait, run, quit. native: run only (Kubernetes manages the proxy). none: run only, no HTTP.',
  },
  readyUrl: {
    flag: 'ready-url', env: 'ISTIO_JOB_RUN_READY_URL', kind: 'value', usage: '--ready-url URL',
    default: new URL('http://127.0.0.1:15021/healthz/ready'), defaultText: 'http://127.0.0.1:15021/healthz/ready',
    parse: (raw) => httpUrl(raw), help: 'Polled with GET until it answers 2xx.',
  },
  readyTimeout: {
    flag: 'ready-timeout', env: 'ISTIO_JOB_RUN_READY_TIMEOUT', kind: 'value', usage: '--ready-timeout DURATION',
    default: 60_000, defaultText: '60s', parse: durationAtLeast(1),
    help: `How long to wait for readiness; then exit ${EXIT_WRAPPER_FAILED} without running the command.`,
  },
  pollInterval: {
    flag: 'poll-interval', env: 'ISTIO_JOB_RUN_POLL_INTERVAL', kind: 'value', usage: '--poll-interval DURATION',
    default: 25, defaultText: '25ms', parse: durationAtLeast(5), help: 'Time between readiness checks (at least 5ms).',
  },
  requestTimeout: {
    flag: 'request-timeout', env: 'ISTIO_JOB_RUN_REQUEST_TIMEOUT', kind: 'value', usage: '--request-timeout DURATION',
    default: 1_000, defaultText: '1s', parse: durationAtLeast(1), help: 'Timeout of one HTTP attempt.',
  },
  startWithoutProxy: {
    flag: 'start-without-proxy', env: 'ISTIO_JOB_RUN_START_WITHOUT_PROXY', kind: 'switch', usage: '--start-without-proxy',
    default: false, defaultText: 'off', parse: bool, help: 'Run the command anyway (with a warning) if the proxy never got ready.',
  },
  wait: {
    flag: 'wait', env: 'ISTIO_JOB_RUN_WAIT', kind: 'switch', usage: '--no-wait',
    default: true, defaultText: 'wait', parse: bool, help: 'Start the command at once, without waiting for readiness (ISTIO_JOB_RUN_WAIT=false).',
  },
  quitUrls: {
    flag: 'quit-url', env: 'ISTIO_JOB_RUN_QUIT_URL', kind: 'list', usage: '--quit-url URL',
    default: [new URL('http://127.0.0.1:15020/quitquitquit')], defaultText: 'http://127.0.0.1:15020/quitquitquit',
    parse: urlList(), help: 'POSTed to stop the proxy. Repeatable; the variable takes a comma-separated list.',
  },
  quit: {
    flag: 'quit', env: 'ISTIO_JOB_RUN_QUIT', kind: 'value', usage: '--quit always|on-success|never',
    default: 'always', defaultText: 'always', parse: oneOf('always', 'on-success', 'never'),
    help: 'When to tell a classic sidecar to quit. Use on-success with restartPolicy OnFailure.',
  },
  quitTimeout: {
    flag: 'quit-timeout', env: 'ISTIO_JOB_RUN_QUIT_TIMEOUT', kind: 'value', usage: '--quit-timeout DURATION',
    default: 10_000, defaultText: '10s', parse: durationAtLeast(1), help: 'How long to keep retrying the quit, all attempts together.',
  },
  logLevel: {
    flag: 'log-level', env: 'ISTIO_JOB_RUN_LOG_LEVEL', kind: 'value', usage: '--log-level debug|info|warn|error|silent',
    default: 'info', defaultText: 'info', parse: oneOf('debug', 'info', 'warn', 'error', 'silent'),
    help: 'How much the wrapper says on stderr.',
  },
  logFormat: {
    flag: 'log-format', env: 'ISTIO_JOB_RUN_LOG_FORMAT', kind: 'value', usage: '--log-format text|json',
    default: 'text', defaultText: 'text', parse: oneOf('text', 'json'), help: 'Lines prefixed "istio-job-run:", or one JSON object a line.',
  },
};

export const DEFAULTS: Options = Object.fromEntries(
  Object.entries(OPTIONS).map(([key, spec]) => [key, spec.default]),
) as unknown as Options;

/** `scuttle`: the one info line saying which of scuttle's variables are in effect and what they stand for. */
export type Invocation =
  | { readonly kind: 'run'; readonly options: Options; readonly command: readonly string[]; readonly scuttle?: string }
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  /** --install DIR: put a working copy of the portable bundle into DIR (an emptyDir shared with the job). */
  | { readonly kind: 'install'; readonly dir: string }
  /** What did parse is kept, defaults elsewhere, so the sidecar can still be told to quit. */
  | { readonly kind: 'usage-error'; readonly options: Options; readonly errors: readonly string[]; readonly scuttle?: string };

const SPECS = Object.entries(OPTIONS) as [keyof Options, Spec<unknown>][];
const BY_FLAG = new Map(SPECS.map(([key, spec]) => [spec.flag, key]));
const SHORT_FLAGS: Record<string, string> = { h: 'help' };

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
    else errors.push(unknownOption(`${rawKey.length === 1 ? '-' : '--'}${rawKey}`));
  }
  if (flags['help'] === true) return { kind: 'help' };
  if (flags['version'] === true) return { kind: 'version' };
  errors.push(...translate(parsed.error, argv));
  if (flags['install'] !== undefined) return parseInstall(flags['install'], errors, parsed.argv);

  const scuttle = readScuttle(env, DEFAULTS.quitUrls);
  const options: Record<string, unknown> = {};
  const sources = new Map<keyof Options, Source>();
  for (const [key, spec] of SPECS) {
    const resolved = resolveOption(spec, flags[spec.flag], env[spec.env], scuttle.options[key]);
    if (resolved.error !== undefined) errors.push(resolved.error);
    options[key] = resolved.value;
    sources.set(key, resolved.source);
  }
  errors.push(...scuttle.errors);
  const line = describeScuttle(scuttle.effects, (key) => {
    const spec = OPTIONS[key];
    const source = sources.get(key);
    if (source === 'env') return spec.env;
    if (source !== 'flag') return undefined;
    return spec.kind === 'switch' && options[key] === false ? `--no-${spec.flag}` : `--${spec.flag}`;
  });
  const note = line === undefined ? {} : { scuttle: line };

  const command = [...(parsed.argv._ ?? []).map(String), ...((parsed.argv['--'] as string[] | undefined) ?? [])];
  if (errors.length === 0 && command.length === 0) {
    errors.push('no command given (usage: istio-job-run [options] [--] COMMAND [ARG...])');
  }
  if (errors.length > 0) return { kind: 'usage-error', options: options as unknown as Options, errors: [...new Set(errors)], ...note };
  return { kind: 'run', options: options as unknown as Options, command, ...note };
}

function parseInstall(value: unknown, errors: string[], argv: yargsParser.Arguments): Invocation {
  const dir = Array.isArray(value) ? value.at(-1) : value;
  const extra = [...(argv._ ?? []), ...((argv['--'] as unknown[] | undefined) ?? [])];
  if (typeof dir !== 'string' || dir === '') errors.push('--install: needs a value (--install DIR)');
  if (extra.length > 0) errors.push(`--install: takes no command (got ${JSON.stringify(extra.map(String).join(' '))})`);
  // An install runs in an init container, before any sidecar starts: a usage error has nothing to quit.
  if (errors.length > 0 || typeof dir !== 'string') return { kind: 'usage-error', options: { ...DEFAULTS, sidecar: 'none' }, errors };
  return { kind: 'install', dir };
}

const unknownOption = (flag: string): string => `unknown option ${flag} (see istio-job-run --help)`;
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
 */
function resolveOption(spec: Spec<unknown>, flag: unknown, envValue: string | undefined, scuttleValue: unknown): Resolved {
  const below: Resolved = scuttleValue === undefined ? { value: spec.default, source: 'default' } : { value: scuttleValue, source: 'scuttle' };
  let fromEnv = below;
  if (envValue !== undefined) {
    try {
      fromEnv = { value: spec.parse(envValue), source: 'env' };
    } catch (error) {
      fromEnv = { ...below, error: `${spec.env}: ${(error as Error).message}` };
    }
  }
  if (flag === undefined) return fromEnv;
  try {
    return { value: parseFlag(spec, flag), source: 'flag' };
  } catch (error) {
    return { value: fromEnv.value, source: fromEnv.source, error: `--${spec.flag}: ${(error as Error).message}` };
  }
}

function parseFlag(spec: Spec<unknown>, flag: unknown): unknown {
  const values = Array.isArray(flag) ? flag : [flag];
  if (spec.kind === 'switch') {
    // --NAME, --no-NAME, --NAME=true|false: yargs-parser hands over booleans or strings.
    const last: unknown = values.at(-1);
    return typeof last === 'boolean' ? last : spec.parse(String(last));
  }
  if (values.some((value) => typeof value !== 'string')) throw new Error('is a value option, not a switch');
  if (values.some((value) => value === '')) throw new Error(`needs a value (${spec.usage})`);
  if (spec.kind === 'list') return values.flatMap((value) => spec.parse(String(value)) as unknown[]);
  return spec.parse(String(values.at(-1)));
}

/** --help, rendered from the table. */
export function renderHelp(version: string): string {
  const lines = [
    `istio-job-run ${version}`,
    '',
    'Usage: istio-job-run [options] [--] COMMAND [ARG...]',
    '       istio-job-run --install DIR',
    '       istio-job-run --help | --version',
    '',
    'Runs COMMAND as a Kubernetes Job behind an Istio sidecar: waits until the proxy',
    'is ready, runs the command with stdio and signals passed straight through, tells',
    'a classic sidecar to quit, and exits with the command\'s code. Options stop at',
    '"--" or at the first argument that is not an option. A flag beats its variable.',
    '',
    'Options:',
  ];
  for (const [, spec] of SPECS) {
    lines.push(`  ${spec.usage}`);
    lines.push(`      ${spec.env}, default: ${spec.defaultText}`);
    lines.push(...wrap(spec.help, 72).map((line) => `      ${line}`));
  }
  lines.push(
    '  --install DIR',
    ...wrap('Put a working copy of istio-job-run into DIR (an emptyDir shared with the job container) ' +
      'and exit: the init-container pattern. The copy needs no libc.', 72).map((line) => `      ${line}`),
    '  -h, --help       Show this help.',
    '      --version    Show the version.',
    '',
    'DURATION: 500ms, 30s, 2m, 1h or 1m30s; a bare number is seconds.',
    'Sidecar status: map the pod annotation sidecar.istio.io/status into',
    `${STATUS_VARIABLE} (downward API).`,
    ...wrap(`scuttle's variables are read too, below the ones above: ${SCUTTLE_VARIABLES.join(', ')} ` +
      '(docs/MIGRATING.md).', 78),
    '',
    'Exit codes:',
    "  the command's code   it exited",
    '  128+N                it died of signal N, or the wrapper got TERM, INT, HUP or',
    '                       QUIT before it started',
    `  ${EXIT_CANNOT_EXECUTE}                  the command exists but cannot be executed`,
    `  ${EXIT_NOT_FOUND}                  the command was not found`,
    `  ${EXIT_WRAPPER_FAILED}                  the wrapper failed before the command ran (usage error,`,
    '                       readiness timeout, internal error)',
    '',
  );
  return lines.join('\n');
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}
