import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { renderHelp } from '../../../src/config/help.ts';
import { parseInvocation, type Invocation } from '../../../src/config/parse.ts';
import { DEFAULTS, OPTIONS, type Options } from '../../../src/config/options.ts';
import { redact } from '../../../src/quote.ts';
import { ISTIO, type QuitTarget } from '../../../src/config/kinds.ts';

type Env = Record<string, string>;
type Run = Extract<Invocation, { kind: 'run' }>;
type UsageError = Extract<Invocation, { kind: 'usage-error' }>;

const KEYS = Object.keys(OPTIONS) as (keyof Options)[];
const SWITCHES = KEYS.filter((key) => OPTIONS[key].kind === 'switch');
const NO_COMMAND = 'no command given (usage: istio-job-run [options] [--] COMMAND [ARG...])';
const unknown = (flag: string): string => `unknown option ${flag} (see istio-job-run --help)`;
const url = (href: string): URL => new URL(href);
const istio = (href: string): QuitTarget => ({ url: url(href), kind: ISTIO });

function parseRun(argv: readonly string[], env: Env = {}): Run {
  const invocation = parseInvocation(argv, env);
  if (invocation.kind !== 'run') assert.fail(`expected a run, got ${JSON.stringify(invocation)}`);
  return invocation;
}

function parseError(argv: readonly string[], env: Env = {}): UsageError {
  const invocation = parseInvocation(argv, env);
  if (invocation.kind !== 'usage-error') assert.fail(`expected a usage error, got ${JSON.stringify(invocation)}`);
  return invocation;
}

const show = (argv: readonly string[]): string => JSON.stringify(argv);

/** A raw value as a user writes it, and what it parses to. */
interface Sample<T> {
  readonly raw: string;
  readonly value: T;
}

/**
 * Two valid values per option, both different from each other, `sample` also from the default.
 * Keyed by option, so a new option in OPTIONS does not type-check until it has a row here.
 */
const SAMPLES: { readonly [K in keyof Options]: { readonly sample: Sample<Options[K]>; readonly other: Sample<Options[K]> } } = {
  sidecar: { sample: { raw: 'classic', value: 'classic' }, other: { raw: 'none', value: 'none' } },
  readyUrl: {
    sample: { raw: 'http://localhost:8080/ready', value: url('http://localhost:8080/ready') },
    other: { raw: 'https://127.0.0.1/healthz', value: url('https://127.0.0.1/healthz') },
  },
  readyTimeout: { sample: { raw: '90s', value: 90_000 }, other: { raw: '2m', value: 120_000 } },
  pollInterval: { sample: { raw: '100ms', value: 100 }, other: { raw: '5ms', value: 5 } },
  requestTimeout: { sample: { raw: '250ms', value: 250 }, other: { raw: '3', value: 3_000 } },
  startWithoutProxy: { sample: { raw: 'yes', value: true }, other: { raw: 'false', value: false } },
  wait: { sample: { raw: 'no', value: false }, other: { raw: 'true', value: true } },
  quitUrls: {
    sample: { raw: 'http://127.0.0.1:1/a,http://127.0.0.1:2/b', value: [istio('http://127.0.0.1:1/a'), istio('http://127.0.0.1:2/b')] },
    other: { raw: 'http://[::1]:15020/quitquitquit', value: [istio('http://[::1]:15020/quitquitquit')] },
  },
  quit: { sample: { raw: 'on-success', value: 'on-success' }, other: { raw: 'never', value: 'never' } },
  quitTimeout: { sample: { raw: '1m30s', value: 90_000 }, other: { raw: '500ms', value: 500 } },
  also: {
    sample: {
      raw: 'linkerd,dapr:3501',
      value: [
        { kind: 'linkerd', ports: [] },
        { kind: 'dapr', ports: [3501] },
      ],
    },
    other: { raw: 'cloud-sql-proxy:9190:9191', value: [{ kind: 'cloud-sql-proxy', ports: [9190, 9191] }] },
  },
  podAnnotations: { sample: { raw: '/podinfo/annotations', value: '/podinfo/annotations' }, other: { raw: '/a', value: '/a' } },
  logLevel: { sample: { raw: 'debug', value: 'debug' }, other: { raw: 'silent', value: 'silent' } },
  logFormat: { sample: { raw: 'json', value: 'json' }, other: { raw: 'text', value: 'text' } },
};

/** The ways to give a value on the command line: a switch is --NAME or --no-NAME, a value option two ways. */
function flagForms(key: keyof Options, { raw, value }: Sample<unknown>): string[][] {
  const { flag, kind } = OPTIONS[key];
  if (kind === 'switch') return [[value === true ? `--${flag}` : `--no-${flag}`]];
  return [[`--${flag}`, raw], [`--${flag}=${raw}`]];
}

describe('defaults', () => {
  test('DEFAULTS holds the documented values', () => {
    assert.deepEqual(DEFAULTS, {
      sidecar: 'auto',
      readyUrl: url('http://127.0.0.1:15021/healthz/ready'),
      readyTimeout: 60_000,
      pollInterval: 25,
      also: [],
      podAnnotations: '/etc/podinfo/annotations',
      requestTimeout: 1_000,
      startWithoutProxy: false,
      wait: true,
      quitUrls: [istio('http://127.0.0.1:15020/quitquitquit')],
      quit: 'always',
      quitTimeout: 10_000,
      logLevel: 'info',
      logFormat: 'text',
    });
  });

  test('with no flags and no variables every option is its default', () => {
    assert.deepEqual(parseRun(['job'], {}).options, DEFAULTS);
  });

  for (const key of KEYS.filter((k) => OPTIONS[k].kind !== 'switch')) {
    const spec = OPTIONS[key];
    test(`${key}: the default shown in --help (${spec.defaultText}) parses to the default`, () => {
      assert.deepEqual(spec.parse(spec.defaultText), spec.default);
    });
  }
});

describe('each option from its flag, its variable, or its default', () => {
  for (const key of KEYS) {
    const { flag, env } = OPTIONS[key];
    const { sample, other } = SAMPLES[key];

    test(`${key}: the samples differ from each other and the sample from the default`, () => {
      assert.notDeepEqual(sample.value, DEFAULTS[key]);
      assert.notDeepEqual(sample.value, other.value);
    });
    for (const argv of flagForms(key, sample)) {
      test(`${key}: ${show(argv)} sets ${JSON.stringify(sample.value)}`, () => {
        assert.deepEqual(parseRun([...argv, 'job']).options[key], sample.value);
      });
    }
    test(`${key}: ${env}=${sample.raw} sets ${JSON.stringify(sample.value)}`, () => {
      assert.deepEqual(parseRun(['job'], { [env]: sample.raw }).options[key], sample.value);
    });
    for (const argv of flagForms(key, other)) {
      test(`${key}: ${show(argv)} beats ${env}=${sample.raw}`, () => {
        assert.deepEqual(parseRun([...argv, 'job'], { [env]: sample.raw }).options[key], other.value);
      });
    }
    test(`${key}: variables with a similar name are ignored`, () => {
      const near = { [env.toLowerCase()]: sample.raw, [`${env}_X`]: sample.raw, [flag]: sample.raw };
      assert.deepEqual(parseRun(['job'], near).options[key], DEFAULTS[key]);
    });
  }

  test('every flag and variable together: all flags win', () => {
    const argv = KEYS.flatMap((key) => flagForms(key, SAMPLES[key].other)[0] ?? []);
    const env = Object.fromEntries(KEYS.map((key) => [OPTIONS[key].env, SAMPLES[key].sample.raw]));
    const expected = Object.fromEntries(KEYS.map((key) => [key, SAMPLES[key].other.value]));
    assert.deepEqual(parseRun([...argv, 'job'], env).options, expected);
  });
});

describe('values are read case-insensitively and trimmed', () => {
  const rows: [argv: string[], key: keyof Options, value: unknown][] = [
    [['--sidecar', 'CLASSIC'], 'sidecar', 'classic'],
    [['--quit', ' On-Success '], 'quit', 'on-success'],
    [['--log-level', 'Debug'], 'logLevel', 'debug'],
    [['--log-format', 'JSON'], 'logFormat', 'json'],
    [['--ready-timeout', ' 45s '], 'readyTimeout', 45_000],
    [['--ready-url', ' http://127.0.0.1:9/r '], 'readyUrl', url('http://127.0.0.1:9/r')],
  ];
  for (const [argv, key, value] of rows) {
    test(`${show(argv)} sets ${key} to ${JSON.stringify(value)}`, () => {
      assert.deepEqual(parseRun([...argv, 'job']).options[key], value);
    });
  }
});

describe('quit URLs', () => {
  const env = { ISTIO_JOB_RUN_QUIT_URL: 'http://127.0.0.1:7/env1,http://127.0.0.1:7/env2' };
  const rows: [name: string, argv: string[], env: Env, hrefs: string[]][] = [
    ['the variable takes a comma-separated list', [], env, ['http://127.0.0.1:7/env1', 'http://127.0.0.1:7/env2']],
    ['spaces around the entries are ignored', [], { ISTIO_JOB_RUN_QUIT_URL: ' http://a/x ,  http://b/y ' }, ['http://a/x', 'http://b/y']],
    ['one flag replaces the whole list of the variable', ['--quit-url', 'http://127.0.0.1:7/f1'], env, ['http://127.0.0.1:7/f1']],
    [
      'repeated flags collect in order and replace the variable',
      ['--quit-url', 'http://127.0.0.1:7/f1', '--quit-url=http://127.0.0.1:7/f2', '--quit-url', 'http://127.0.0.1:7/f3'],
      env,
      ['http://127.0.0.1:7/f1', 'http://127.0.0.1:7/f2', 'http://127.0.0.1:7/f3'],
    ],
    [
      'a flag may itself hold a list',
      ['--quit-url', 'http://a/1,http://b/2', '--quit-url', 'http://c/3'],
      {},
      ['http://a/1', 'http://b/2', 'http://c/3'],
    ],
    ['IPv6 loopback', ['--quit-url', 'http://[::1]:15020/quitquitquit'], {}, ['http://[::1]:15020/quitquitquit']],
    ['https', ['--quit-url', 'https://127.0.0.1:15020/quitquitquit'], {}, ['https://127.0.0.1:15020/quitquitquit']],
  ];
  for (const [name, argv, variables, hrefs] of rows) {
    test(name, () => {
      assert.deepEqual(
        parseRun([...argv, 'job'], variables).options.quitUrls.map((q) => q.url.href),
        hrefs,
      );
    });
  }

  const empty: [argv: string[], env: Env, error: string][] = [
    [
      [],
      { ISTIO_JOB_RUN_QUIT_URL: 'http://a/,,http://b/' },
      'ISTIO_JOB_RUN_QUIT_URL: "http://a/,,http://b/" has an empty entry (comma-separated URLs)',
    ],
    [[], { ISTIO_JOB_RUN_QUIT_URL: 'http://a/,' }, 'ISTIO_JOB_RUN_QUIT_URL: "http://a/," has an empty entry (comma-separated URLs)'],
    [[], { ISTIO_JOB_RUN_QUIT_URL: '' }, 'ISTIO_JOB_RUN_QUIT_URL: "" has an empty entry (comma-separated URLs)'],
    [['--quit-url=http://a/, '], {}, '--quit-url: "http://a/, " has an empty entry (comma-separated URLs)'],
  ];
  for (const [argv, variables, error] of empty) {
    test(`empty entry: ${error}`, () => {
      const result = parseError([...argv, 'job'], variables);
      assert.deepEqual(result.errors, [error]);
      assert.deepEqual(result.options.quitUrls, DEFAULTS.quitUrls);
    });
  }
});

describe('booleans in variables', () => {
  const accepted: [raw: string, value: boolean][] = [
    ['true', true],
    ['TRUE', true],
    ['True', true],
    ['1', true],
    ['yes', true],
    [' YES ', true],
    ['false', false],
    ['FALSE', false],
    ['0', false],
    ['no', false],
    ['No', false],
  ];
  const rejected = ['on', 'off', 'y', 'n', '2', '', 't'];
  for (const key of SWITCHES) {
    const { env } = OPTIONS[key];
    for (const [raw, value] of accepted) {
      test(`${env}=${JSON.stringify(raw)} is ${value}`, () => {
        assert.equal(parseRun(['job'], { [env]: raw }).options[key], value);
      });
    }
    for (const raw of rejected) {
      test(`${env}=${JSON.stringify(raw)} is an error naming the variable`, () => {
        const result = parseError(['job'], { [env]: raw });
        assert.deepEqual(result.errors, [`${env}: ${JSON.stringify(raw)} is not a boolean (true, false, 1, 0, yes, no)`]);
        assert.equal(result.options[key], DEFAULTS[key]);
      });
    }
  }
});

describe('switches', () => {
  const rows: [argv: string[], env: Env, wait: boolean, startWithoutProxy: boolean][] = [
    [['--no-wait'], {}, false, false],
    [['--wait'], { ISTIO_JOB_RUN_WAIT: 'false' }, true, false],
    [['--start-without-proxy'], {}, true, true],
    [['--no-start-without-proxy'], { ISTIO_JOB_RUN_START_WITHOUT_PROXY: 'true' }, true, false],
    [['--no-wait', '--wait'], {}, true, false],
    [['--wait', '--no-wait'], {}, false, false],
    [['--no-wait', '--start-without-proxy'], {}, false, true],
  ];
  for (const [argv, env, wait, startWithoutProxy] of rows) {
    test(`${show(argv)} with ${JSON.stringify(env)}: wait ${wait}, start-without-proxy ${startWithoutProxy}`, () => {
      const { options } = parseRun([...argv, 'job'], env);
      assert.deepEqual({ wait: options.wait, startWithoutProxy: options.startWithoutProxy }, { wait, startWithoutProxy });
    });
  }

  const valued: [argv: string[], error: string][] = [
    [['--wait=false'], '--wait: takes no value, got "false" (use --wait or --no-wait)'],
    [['--wait=true'], '--wait: takes no value, got "true" (use --wait or --no-wait)'],
    [
      ['--start-without-proxy=yes'],
      '--start-without-proxy: takes no value, got "yes" (use --start-without-proxy or --no-start-without-proxy)',
    ],
  ];
  for (const [argv, error] of valued) {
    test(`${show(argv)} is an error: ${error}`, () => {
      assert.deepEqual(parseError([...argv, 'job']).errors, [error]);
    });
  }
});

describe('where the options stop and the command begins', () => {
  const rows: [argv: string[], command: string[]][] = [
    [
      ['echo', 'hi'],
      ['echo', 'hi'],
    ],
    [
      ['echo', '--help'],
      ['echo', '--help'],
    ],
    [
      ['echo', '--sidecar', 'none'],
      ['echo', '--sidecar', 'none'],
    ],
    [['--', '--help'], ['--help']],
    [['--', '-h'], ['-h']],
    [['--no-wait', 'true'], ['true']],
    [['--start-without-proxy', 'false'], ['false']],
    [
      ['--sidecar', 'classic', 'sh', '-c', 'x'],
      ['sh', '-c', 'x'],
    ],
    [
      ['--quit=never', '--', 'ls', '-l'],
      ['ls', '-l'],
    ],
    [
      ['--', 'echo', '--', 'x'],
      ['echo', '--', 'x'],
    ],
    [
      ['echo', '--', 'x'],
      ['echo', '--', 'x'],
    ],
    [
      ['x', '--ready-timeout'],
      ['x', '--ready-timeout'],
    ],
    [['--quit-url', 'http://a/', '5'], ['5']],
    [
      ['007', '1e3'],
      ['007', '1e3'],
    ],
    [
      ['-', 'x'],
      ['-', 'x'],
    ],
  ];
  for (const [argv, command] of rows) {
    test(`${show(argv)} runs ${show(command)}`, () => {
      assert.deepEqual(parseRun(argv).command, command);
    });
  }

  test('options after the command are not read', () => {
    assert.equal(parseRun(['echo', '--sidecar', 'none']).options.sidecar, 'auto');
  });
});

describe('help and version', () => {
  const rows: [argv: string[], kind: Invocation['kind']][] = [
    [['--help'], 'help'],
    [['-h'], 'help'],
    [['--no-wait', '--help'], 'help'],
    [['--help', 'job'], 'help'],
    [['--help', '--foo'], 'help'],
    [['-h', '--no-wait', 'job'], 'help'],
    [['-h', 'job'], 'help'],
    [['-h', 'echo', 'hi'], 'help'],
    [['-h', '--', 'job'], 'help'],
    [['--version'], 'version'],
    [['--version', 'job'], 'version'],
    [['echo', '--help'], 'run'],
    [['echo', '-h'], 'run'],
    [['--', '--help'], 'run'],
    [['echo', '--version'], 'run'],
  ];
  for (const [argv, kind] of rows) {
    test(`${show(argv)} is ${kind}`, () => {
      assert.equal(parseInvocation(argv, {}).kind, kind);
    });
  }
});

describe('usage errors', () => {
  const rows: [argv: string[], env: Env, errors: string[]][] = [
    [['--foo', 'x'], {}, [unknown('--foo')]],
    [['--foo=bar', 'x'], {}, [unknown('--foo')]],
    [['--no-foo', 'x'], {}, [unknown('--no-foo')]],
    [['--x', 'y'], {}, [unknown('--x')]],
    [['--x=1', 'y'], {}, [unknown('--x')]],
    [['-ax', 'y'], {}, [unknown('-a'), unknown('-x')]],
    [['-x', 'y'], {}, [unknown('-x')]],
    [['-v', 'y'], {}, [unknown('-v')]],
    [[], {}, [NO_COMMAND]],
    [['--'], {}, [NO_COMMAND]],
    [['--no-wait', '--quit', 'never'], {}, [NO_COMMAND]],
    [['--ready-timeout', 'soon', 'x'], {}, ['--ready-timeout: "soon" is not a duration (examples: 500ms, 30s, 2m)']],
    [['x'], { ISTIO_JOB_RUN_READY_TIMEOUT: 'soon' }, ['ISTIO_JOB_RUN_READY_TIMEOUT: "soon" is not a duration (examples: 500ms, 30s, 2m)']],
    [['--ready-timeout', '0', 'x'], {}, ['--ready-timeout: "0" is too short (at least 1ms)']],
    [['--request-timeout=999999999h', 'x'], {}, ['--request-timeout: "999999999h" is too long (at most 24d 20h)']],
    [['--poll-interval', '4ms', 'x'], {}, ['--poll-interval: "4ms" is too short (at least 5ms)']],
    [['x'], { ISTIO_JOB_RUN_POLL_INTERVAL: '1ms' }, ['ISTIO_JOB_RUN_POLL_INTERVAL: "1ms" is too short (at least 5ms)']],
    [['--sidecar', 'sometimes', 'x'], {}, ['--sidecar: "sometimes" is not one of auto, classic, native, none']],
    [['x'], { ISTIO_JOB_RUN_SIDECAR: 'yes' }, ['ISTIO_JOB_RUN_SIDECAR: "yes" is not one of auto, classic, native, none']],
    [['--quit', 'maybe', 'x'], {}, ['--quit: "maybe" is not one of always, on-success, never']],
    [['--log-level', 'verbose', 'x'], {}, ['--log-level: "verbose" is not one of debug, info, warn, error, silent']],
    [['--log-format', 'xml', 'x'], {}, ['--log-format: "xml" is not one of text, json']],
    [['--quit-url', 'ftp://127.0.0.1/q', 'x'], {}, ['--quit-url: "ftp://127.0.0.1/q" is not an http or https URL']],
    [['x'], { ISTIO_JOB_RUN_READY_URL: 'file:///ready' }, ['ISTIO_JOB_RUN_READY_URL: "file:///ready" is not an http or https URL']],
    [['--ready-url', 'not a url', 'x'], {}, ['--ready-url: "not a url" is not a URL (example: http://127.0.0.1:15020/quitquitquit)']],
    [['--no-sidecar', 'x'], {}, ['--sidecar: is a value option, not a switch']],
    [['--ready-timeout'], {}, ['--ready-timeout: needs a value (--ready-timeout DURATION)']],
    [['--quit-url'], {}, ['--quit-url: needs a value (--quit-url URL)']],
    [['--ready-timeout=', 'x'], {}, ['--ready-timeout: needs a value (--ready-timeout DURATION)']],
    [['--sidecar', '--no-wait', 'x'], {}, ['--sidecar: "--no-wait" is not one of auto, classic, native, none']],
    [['--ready-timeout', '-1s', 'x'], {}, ['--ready-timeout: "-1s" is not a duration (examples: 500ms, 30s, 2m)']],
    [['--no-wait=false', 'x'], {}, ['--wait: takes no value, got "false" (use --wait or --no-wait)']],
    [['--wait=false', 'x'], {}, ['--wait: takes no value, got "false" (use --wait or --no-wait)']],
    [['--no-help', 'x'], {}, [unknown('--no-help')]],
    [['--no-version', 'x'], {}, [unknown('--no-version')]],
    [
      ['--ready-timeout', 'soon', '--quit', 'maybe', 'x'],
      {},
      ['--ready-timeout: "soon" is not a duration (examples: 500ms, 30s, 2m)', '--quit: "maybe" is not one of always, on-success, never'],
    ],
  ];
  for (const [argv, env, errors] of rows) {
    test(`${show(argv)} ${JSON.stringify(env)}: ${errors.join('; ')}`, () => {
      assert.deepEqual(parseError(argv, env).errors, errors);
    });
  }

  test('the good options survive a bad one, and the bad one falls back to its default', () => {
    const { options } = parseError(['--ready-timeout', 'soon', '--quit-url', 'http://127.0.0.1:1/q', '--quit', 'never', 'x']);
    assert.deepEqual(options, { ...DEFAULTS, quitUrls: [istio('http://127.0.0.1:1/q')], quit: 'never' });
  });

  test('a bad flag falls back to a good variable, so the quit goes where the pod said', () => {
    const env = { ISTIO_JOB_RUN_QUIT_URL: 'http://127.0.0.1:3/q' };
    const { options, errors } = parseError(['--quit-url', 'ftp://x', 'x'], env);
    assert.deepEqual(options.quitUrls, [istio('http://127.0.0.1:3/q')]);
    assert.deepEqual(errors, ['--quit-url: "ftp://x" is not an http or https URL']);
  });

  test('a good variable survives a bad variable', () => {
    const env = { ISTIO_JOB_RUN_QUIT_URL: 'http://127.0.0.1:2/q', ISTIO_JOB_RUN_QUIT_TIMEOUT: 'later' };
    const { options } = parseError(['x'], env);
    assert.deepEqual([options.quitUrls, options.quitTimeout], [[istio('http://127.0.0.1:2/q')], DEFAULTS.quitTimeout]);
  });

  test('the options survive an unknown flag', () => {
    assert.equal(parseError(['--foo', '--quit', 'never', 'x']).options.quit, 'never');
  });

  test('a bad flag is an error even when its variable is good', () => {
    const result = parseError(['--quit', 'maybe', 'x'], { ISTIO_JOB_RUN_QUIT: 'never' });
    assert.deepEqual(result.errors, ['--quit: "maybe" is not one of always, on-success, never']);
  });

  test('the last of repeated value flags counts', () => {
    assert.equal(parseRun(['--ready-timeout', 'soon', '--ready-timeout', '2s', 'x']).options.readyTimeout, 2_000);
  });
});

describe('renderHelp', () => {
  const help = renderHelp('1.2.3');
  const flat = help.replace(/\s+/g, ' ');
  const optionLines = help.slice(help.indexOf('Options:'), help.indexOf('  -h, --help')).split('\n');

  test('starts with the name and version', () => {
    assert.equal(help.split('\n')[0], 'istio-job-run 1.2.3');
  });

  for (const key of KEYS) {
    const spec = OPTIONS[key];
    test(`${key}: shows ${spec.usage}, ${spec.env}, its default and its whole help text`, () => {
      assert.ok(optionLines.includes(`  ${spec.usage}`), `no usage line for ${spec.usage}`);
      assert.ok(optionLines.includes(`      ${spec.env}, default: ${spec.defaultText}`), `no variable line for ${spec.env}`);
      assert.ok(flat.includes(spec.help.replace(/\s+/g, ' ')), `help text of ${key} is not shown whole`);
    });
  }

  test('lists the options in the order of OPTIONS', () => {
    const positions = KEYS.map((key) => optionLines.indexOf(`  ${OPTIONS[key].usage}`));
    assert.deepEqual(
      positions,
      [...positions].sort((a, b) => a - b),
    );
  });

  test('fits 80 columns, every line of it', () => {
    assert.deepEqual(
      help.split('\n').filter((line) => line.length > 80),
      [],
    );
  });

  test('shows --help, --version and the exit codes', () => {
    for (const text of ['-h, --help', '--version', '125 ', '126 ', '127 ', '128+N']) assert.ok(help.includes(text), text);
  });
});

describe('--install without a directory, credentials in URLs', () => {
  for (const argv of [['--install'], ['--install='], ['--install', '']]) {
    test(`${JSON.stringify(argv)}: a usage error naming --install and a directory, nothing to quit`, () => {
      const invocation = parseInvocation(argv, { KUBERNETES_SERVICE_HOST: 'x' });
      assert.equal(invocation.kind, 'usage-error');
      if (invocation.kind !== 'usage-error') return;
      assert.deepEqual(invocation.errors, ['--install: needs a directory (--install DIR)']);
      assert.equal(invocation.options.sidecar, 'none');
    });
  }

  const secret = 'http://user:s3cret@127.0.0.1:15020/quitquitquit';
  const places: [name: string, argv: string[], env: Record<string, string>][] = [
    ['--quit-url', ['--quit-url', secret, 'true'], {}],
    ['--ready-url', ['--ready-url', secret, 'true'], {}],
    ['ISTIO_JOB_RUN_QUIT_URL in a list', ['true'], { ISTIO_JOB_RUN_QUIT_URL: `http://127.0.0.1:1/q,${secret}` }],
    ['ENVOY_ADMIN_API', ['true'], { ENVOY_ADMIN_API: 'http://admin:s3cret@127.0.0.1:15000' }],
    ['GENERIC_QUIT_ENDPOINTS', ['true'], { GENERIC_QUIT_ENDPOINTS: secret }],
    ['a URL that does not even parse', ['--quit-url', 'http://user:s3cret@[bad', 'true'], {}],
    ['an empty entry beside it', ['true'], { ISTIO_JOB_RUN_QUIT_URL: `${secret}, ` }],
  ];
  for (const [name, argv, env] of places) {
    test(`${name}: refused, and the password is never shown`, () => {
      const invocation = parseInvocation(argv, env);
      assert.equal(invocation.kind, 'usage-error');
      const text = JSON.stringify(invocation);
      assert.ok(!text.includes('s3cret'), text);
      assert.match(text, /\*\*\*@/);
    });
  }

  test('redact', () => {
    assert.equal(redact('http://u:p@h:1/x,http://h/y'), 'http://***@h:1/x,http://h/y');
    assert.equal(redact('u:p@h'), '***@h');
    assert.equal(redact('http://h/x'), 'http://h/x');
  });

  test('redact: a query string or fragment, where a token may be, is never shown either', () => {
    assert.equal(redact('http://h/x?token=s3cret,http://h/y#s3cret'), 'http://h/x?***,http://h/y#***');
    assert.equal(redact('http://u:p@h/x?a@b'), 'http://***@h/x?***');
  });

  test('a bad quit URL with a token in its query: refused, the token never shown', () => {
    const invocation = parseInvocation(['--quit-url', 'http://127.0.0.1:0/q?token=s3cret', 'true'], {});
    assert.ok(invocation.kind === 'usage-error');
    assert.ok(!JSON.stringify(invocation.errors).includes('s3cret'), JSON.stringify(invocation.errors));
  });
});

describe('port 0 and quit URLs too long for the launcher', () => {
  const rows: [argv: string[], env: Env, error: RegExp][] = [
    [
      ['--quit-url', 'http://127.0.0.1:0/q', 'x'],
      {},
      /^--quit-url: "http:\/\/127\.0\.0\.1:0\/q" has port 0; a sidecar listens on a port from 1 to 65535$/,
    ],
    [['x'], { ISTIO_JOB_RUN_QUIT_URL: 'http://127.0.0.1:1/a,http://127.0.0.1:0/q' }, /^ISTIO_JOB_RUN_QUIT_URL: .* has port 0/],
    [['--ready-url', 'http://127.0.0.1:0/ready', 'x'], {}, /^--ready-url: .* has port 0/],
    [['--also', 'dapr:0', 'x'], {}, /^--also: "0" is not a port \(1-65535\)$/],
    [
      ['--quit-url', `http://127.0.0.1:15020/q?${'a'.repeat(4070)}\nexit 0`, 'x'],
      {},
      /^--quit-url: "http:\/\/127\.0\.0\.1:15020\/q\?\*\*\*" is too long: its path and query take \d+ bytes, and the line that hands it to the launcher may take at most 4096$/,
    ],
    [
      ['x'],
      { ISTIO_JOB_RUN_QUIT_URL: `http://127.0.0.1:15020/${'p'.repeat(4096)}` },
      /^ISTIO_JOB_RUN_QUIT_URL: .* is too long: .* at most 4096$/,
    ],
  ];
  for (const [argv, env, error] of rows) {
    test(`${show(argv).slice(0, 80)} ${JSON.stringify(env).slice(0, 60)}: ${error.source.slice(0, 60)}`, () => {
      const { errors, options } = parseError(argv, env);
      assert.equal(errors.length, 1, errors.join('\n'));
      assert.match(errors[0] ?? '', error);
      // The default stands in for the refused URLs: a usage error still tells the sidecar to quit.
      if (argv[0] === '--quit-url') assert.deepEqual(options.quitUrls, DEFAULTS.quitUrls);
    });
  }

  test('the longest quit URL whose line fits is kept, whole', () => {
    const url = `http://127.0.0.1:15020/${'p'.repeat(3900)}?t=${'q'.repeat(100)}`;
    assert.deepEqual(
      parseRun(['--quit-url', url, 'x'], {}).options.quitUrls.map((q) => q.url.href),
      [url],
    );
  });
});
