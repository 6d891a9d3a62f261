// scuttle's variables, from tables: what each row of the migration table sets, precedence (flag >
// ISTIO_JOB_RUN_* > scuttle > default), conflicts among scuttle's own variables, and bad values.

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { renderHelp } from '../../../src/config/help.ts';
import { parseInvocation, type Invocation } from '../../../src/config/parse.ts';
import { DEFAULTS, OPTIONS, type Options } from '../../../src/config/options.ts';
import { SCUTTLE_VARIABLES, describeScuttle, readScuttle, type Effect, type ScuttleVariable } from '../../../src/config/scuttle.ts';
import { GENERIC_KIND, ISTIO, type QuitTarget } from '../../../src/config/kinds.ts';

type Env = Record<string, string>;
type Run = Extract<Invocation, { kind: 'run' }>;
type UsageError = Extract<Invocation, { kind: 'usage-error' }>;

const url = (href: string): URL => new URL(href);
/** A quit URL of Istio's (flags, ISTIO_QUIT_API), or of another sidecar (GENERIC_QUIT_ENDPOINTS). */
const istio = (href: string): QuitTarget => ({ url: url(href), kind: ISTIO });
const generic = (href: string): QuitTarget => ({ url: url(href), kind: GENERIC_KIND });
const DEFAULT_QUIT = 'http://127.0.0.1:15020/quitquitquit';

function parseRun(argv: readonly string[], env: Env): Run {
  const invocation = parseInvocation(argv, env);
  if (invocation.kind !== 'run') assert.fail(`expected a run, got ${JSON.stringify(invocation)}`);
  return invocation;
}

function parseError(argv: readonly string[], env: Env): UsageError {
  const invocation = parseInvocation(argv, env);
  if (invocation.kind !== 'usage-error') assert.fail(`expected a usage error, got ${JSON.stringify(invocation)}`);
  return invocation;
}

const line = (...items: string[]): string => `scuttle settings: ${items.join(', ')}`;

/** One row of the migration table: the variables, the options they set (the rest stays default), the info line. */
interface Row {
  readonly env: Env;
  readonly options: Partial<Options>;
  readonly says: readonly string[];
}

const TABLE: Row[] = [
  {
    env: { ENVOY_ADMIN_API: 'http://127.0.0.1:15000' },
    options: { readyUrl: url('http://127.0.0.1:15000/ready') },
    says: ['ENVOY_ADMIN_API -> --ready-url http://127.0.0.1:15000/ready'],
  },
  {
    env: { ENVOY_ADMIN_API: 'http://localhost:15000/' },
    options: { readyUrl: url('http://localhost:15000/ready') },
    says: ['ENVOY_ADMIN_API -> --ready-url http://localhost:15000/ready'],
  },
  {
    env: { ENVOY_ADMIN_API: 'http://[::1]:15000/envoy//' },
    options: { readyUrl: url('http://[::1]:15000/envoy/ready') },
    says: ['ENVOY_ADMIN_API -> --ready-url http://[::1]:15000/envoy/ready'],
  },
  {
    env: { ISTIO_QUIT_API: 'http://127.0.0.1:15020' },
    options: { quitUrls: [istio(DEFAULT_QUIT)] },
    says: [`ISTIO_QUIT_API -> --quit-url ${DEFAULT_QUIT}`],
  },
  {
    env: { ISTIO_QUIT_API: ' https://localhost:25020/ ' },
    options: { quitUrls: [istio('https://localhost:25020/quitquitquit')] },
    says: ['ISTIO_QUIT_API -> --quit-url https://localhost:25020/quitquitquit'],
  },
  { env: { NEVER_KILL_ISTIO: 'true' }, options: { quit: 'never' }, says: ['NEVER_KILL_ISTIO -> --quit never'] },
  {
    env: { NEVER_KILL_ISTIO_ON_FAILURE: 'true' },
    options: { quit: 'on-success' },
    says: ['NEVER_KILL_ISTIO_ON_FAILURE -> --quit on-success'],
  },
  { env: { START_WITHOUT_ENVOY: 'true' }, options: { wait: false }, says: ['START_WITHOUT_ENVOY -> --no-wait'] },
  {
    env: { WAIT_FOR_ENVOY_TIMEOUT: '30s' },
    options: { readyTimeout: 30_000, startWithoutProxy: true },
    says: ['WAIT_FOR_ENVOY_TIMEOUT -> --ready-timeout 30s --start-without-proxy'],
  },
  {
    env: { QUIT_WITHOUT_ENVOY_TIMEOUT: '1m30s' },
    options: { readyTimeout: 90_000, startWithoutProxy: false },
    says: ['QUIT_WITHOUT_ENVOY_TIMEOUT -> --ready-timeout 1.5m --no-start-without-proxy'],
  },
  {
    env: { GENERIC_QUIT_ENDPOINTS: 'http://127.0.0.1:9091/quitquitquit, http://localhost:8500/shutdown' },
    options: { quitUrls: [istio(DEFAULT_QUIT), generic('http://127.0.0.1:9091/quitquitquit'), generic('http://localhost:8500/shutdown')] },
    says: [
      `GENERIC_QUIT_ENDPOINTS -> --quit-url http://127.0.0.1:9091/quitquitquit --quit-url http://localhost:8500/shutdown (besides ${DEFAULT_QUIT})`,
    ],
  },
  {
    env: { ISTIO_QUIT_API: 'http://127.0.0.1:25020', GENERIC_QUIT_ENDPOINTS: 'http://127.0.0.1:9091/quitquitquit' },
    options: { quitUrls: [istio('http://127.0.0.1:25020/quitquitquit'), generic('http://127.0.0.1:9091/quitquitquit')] },
    says: [
      'ISTIO_QUIT_API -> --quit-url http://127.0.0.1:25020/quitquitquit',
      'GENERIC_QUIT_ENDPOINTS -> --quit-url http://127.0.0.1:9091/quitquitquit',
    ],
  },
  { env: { SCUTTLE_LOGGING: 'false' }, options: { logLevel: 'warn' }, says: ['SCUTTLE_LOGGING -> --log-level warn'] },
  { env: { QUIT_REQUEST_TIMEOUT: '5s' }, options: { requestTimeout: 5_000 }, says: ['QUIT_REQUEST_TIMEOUT -> --request-timeout 5s'] },
  {
    env: {
      ENVOY_ADMIN_API: 'http://127.0.0.1:15000',
      ISTIO_QUIT_API: 'http://127.0.0.1:15020',
      NEVER_KILL_ISTIO_ON_FAILURE: 'true',
      WAIT_FOR_ENVOY_TIMEOUT: '2m',
      SCUTTLE_LOGGING: 'false',
      QUIT_REQUEST_TIMEOUT: '300ms',
    },
    options: {
      readyUrl: url('http://127.0.0.1:15000/ready'),
      quitUrls: [istio(DEFAULT_QUIT)],
      quit: 'on-success',
      readyTimeout: 120_000,
      startWithoutProxy: true,
      logLevel: 'warn',
      requestTimeout: 300,
    },
    says: [
      'ENVOY_ADMIN_API -> --ready-url http://127.0.0.1:15000/ready',
      `ISTIO_QUIT_API -> --quit-url ${DEFAULT_QUIT}`,
      'NEVER_KILL_ISTIO_ON_FAILURE -> --quit on-success',
      'WAIT_FOR_ENVOY_TIMEOUT -> --ready-timeout 2m --start-without-proxy',
      'SCUTTLE_LOGGING -> --log-level warn',
      'QUIT_REQUEST_TIMEOUT -> --request-timeout 300ms',
    ],
  },
];

describe('each row of the migration table', () => {
  for (const row of TABLE) {
    test(`${JSON.stringify(row.env)} sets ${JSON.stringify(row.options)}`, () => {
      const invocation = parseRun(['job'], row.env);
      assert.deepEqual(invocation.options, { ...DEFAULTS, ...row.options });
      assert.equal(invocation.scuttle, line(...row.says));
    });
  }

  test('every scuttle variable has a row that puts it in effect', () => {
    const inEffect = new Set(TABLE.flatMap((row) => row.says.map((said) => said.split(' ')[0])));
    assert.deepEqual(
      SCUTTLE_VARIABLES.filter((name) => !inEffect.has(name)),
      [],
    );
  });

  test('no scuttle variable, no line', () => {
    assert.equal(parseRun(['job'], { ISTIO_JOB_RUN_QUIT: 'never' }).scuttle, undefined);
  });
});

describe('values that change nothing: no effect and no line', () => {
  const rows: Env[] = [
    { NEVER_KILL_ISTIO: 'false' },
    { NEVER_KILL_ISTIO_ON_FAILURE: 'false' },
    { START_WITHOUT_ENVOY: 'false' },
    { SCUTTLE_LOGGING: 'true' },
    { NEVER_KILL_ISTIO: ' false\n', SCUTTLE_LOGGING: 'true\n' },
    // scuttle read an empty variable as unset (templates render `value: ""`).
    ...SCUTTLE_VARIABLES.map((name) => ({ [name]: '' })),
    ...SCUTTLE_VARIABLES.map((name) => ({ [name]: ' \t' })),
    // Names that only look like scuttle's.
    { envoy_admin_api: 'http://127.0.0.1:15000', NEVER_KILL_ISTIO_X: 'true', GENERIC_QUIT_ENDPOINT: 'http://a/' },
  ];
  for (const env of rows) {
    test(JSON.stringify(env), () => {
      const invocation = parseRun(['job'], env);
      assert.deepEqual(invocation.options, DEFAULTS);
      assert.equal(invocation.scuttle, undefined);
    });
  }
});

describe("Go's durations in scuttle's variables", () => {
  const rows: [raw: string, ms: number][] = [
    ['300ms', 300],
    ['30s', 30_000],
    ['1m30s', 90_000],
    ['1.5h', 5_400_000],
    ['2h45m', 9_900_000],
    ['500us', 1],
    ['1500µs', 2], // U+00B5 micro sign
    ['2500μs', 3], // U+03BC Greek mu
    ['1ns', 1],
    ['1s1ns', 1_001],
    ['1.0001s', 1_001],
    ['90', 90_000], // Go wanted a unit; a bare number is seconds here, as in istio-job-run's own variables
  ];
  for (const [raw, ms] of rows) {
    test(`WAIT_FOR_ENVOY_TIMEOUT=${raw} is ${ms}ms (rounded up to whole milliseconds)`, () => {
      assert.equal(parseRun(['job'], { WAIT_FOR_ENVOY_TIMEOUT: raw }).options.readyTimeout, ms);
    });
  }

  test('Go units are for scuttle variables only: --ready-timeout 500us stays an error', () => {
    assert.deepEqual(parseError(['--ready-timeout', '500us', 'job'], {}).errors, [
      '--ready-timeout: "500us" is not a duration (examples: 500ms, 30s, 2m)',
    ]);
  });
});

describe('conflicts among scuttle variables are settled as scuttle settled them', () => {
  const rows: [name: string, env: Env, options: Partial<Options>, says: string[]][] = [
    [
      'NEVER_KILL_ISTIO covers NEVER_KILL_ISTIO_ON_FAILURE',
      { NEVER_KILL_ISTIO: 'true', NEVER_KILL_ISTIO_ON_FAILURE: 'true' },
      { quit: 'never' },
      ['NEVER_KILL_ISTIO -> --quit never', 'NEVER_KILL_ISTIO_ON_FAILURE (overridden by NEVER_KILL_ISTIO)'],
    ],
    [
      'NEVER_KILL_ISTIO=false leaves NEVER_KILL_ISTIO_ON_FAILURE in effect',
      { NEVER_KILL_ISTIO: 'false', NEVER_KILL_ISTIO_ON_FAILURE: 'true' },
      { quit: 'on-success' },
      ['NEVER_KILL_ISTIO_ON_FAILURE -> --quit on-success'],
    ],
    [
      'QUIT_WITHOUT_ENVOY_TIMEOUT beats WAIT_FOR_ENVOY_TIMEOUT: the job does not run without its proxy',
      { WAIT_FOR_ENVOY_TIMEOUT: '30s', QUIT_WITHOUT_ENVOY_TIMEOUT: '10s' },
      { readyTimeout: 10_000, startWithoutProxy: false },
      [
        'WAIT_FOR_ENVOY_TIMEOUT (overridden by QUIT_WITHOUT_ENVOY_TIMEOUT)',
        'QUIT_WITHOUT_ENVOY_TIMEOUT -> --ready-timeout 10s --no-start-without-proxy',
      ],
    ],
    [
      'QUIT_WITHOUT_ENVOY_TIMEOUT=0 is unset, so WAIT_FOR_ENVOY_TIMEOUT holds',
      { WAIT_FOR_ENVOY_TIMEOUT: '30s', QUIT_WITHOUT_ENVOY_TIMEOUT: '0' },
      { readyTimeout: 30_000, startWithoutProxy: true },
      [
        'WAIT_FOR_ENVOY_TIMEOUT -> --ready-timeout 30s --start-without-proxy',
        'QUIT_WITHOUT_ENVOY_TIMEOUT (0: the same as unset, as in scuttle)',
      ],
    ],
    [
      'WAIT_FOR_ENVOY_TIMEOUT=0s is unset: the default timeout holds',
      { WAIT_FOR_ENVOY_TIMEOUT: '0s' },
      {},
      ['WAIT_FOR_ENVOY_TIMEOUT (0: the same as unset, as in scuttle)'],
    ],
    [
      'START_WITHOUT_ENVOY beats both timeouts',
      { START_WITHOUT_ENVOY: 'true', WAIT_FOR_ENVOY_TIMEOUT: '30s', QUIT_WITHOUT_ENVOY_TIMEOUT: '10s' },
      { wait: false },
      [
        'START_WITHOUT_ENVOY -> --no-wait',
        'WAIT_FOR_ENVOY_TIMEOUT (overridden by START_WITHOUT_ENVOY)',
        'QUIT_WITHOUT_ENVOY_TIMEOUT (overridden by START_WITHOUT_ENVOY)',
      ],
    ],
    [
      'START_WITHOUT_ENVOY=false leaves the timeout in effect',
      { START_WITHOUT_ENVOY: 'false', QUIT_WITHOUT_ENVOY_TIMEOUT: '10s' },
      { readyTimeout: 10_000 },
      ['QUIT_WITHOUT_ENVOY_TIMEOUT -> --ready-timeout 10s --no-start-without-proxy'],
    ],
    [
      'NEVER_KILL_ISTIO with GENERIC_QUIT_ENDPOINTS: the URLs are kept, and never POSTed',
      { NEVER_KILL_ISTIO: 'true', GENERIC_QUIT_ENDPOINTS: 'http://127.0.0.1:9091/quitquitquit' },
      { quit: 'never', quitUrls: [istio(DEFAULT_QUIT), generic('http://127.0.0.1:9091/quitquitquit')] },
      [
        'NEVER_KILL_ISTIO -> --quit never',
        `GENERIC_QUIT_ENDPOINTS -> --quit-url http://127.0.0.1:9091/quitquitquit (besides ${DEFAULT_QUIT})`,
      ],
    ],
  ];
  for (const [name, env, options, says] of rows) {
    test(name, () => {
      const invocation = parseRun(['job'], env);
      assert.deepEqual(invocation.options, { ...DEFAULTS, ...options });
      assert.equal(invocation.scuttle, line(...says));
    });
  }
});

/**
 * Precedence for every variable: what scuttle asks for, what ISTIO_JOB_RUN_* and a flag say instead (both
 * different from scuttle's value and from each other), and the option they fight over.
 */
interface Fight {
  readonly variable: ScuttleVariable;
  readonly raw: string;
  readonly key: keyof Options;
  readonly scuttle: unknown;
  readonly env: { readonly raw: string; readonly value: unknown };
  readonly flag: { readonly argv: readonly string[]; readonly value: unknown };
  /** A switch has two values: the flag that beats ISTIO_JOB_RUN_* must differ from it (default: `flag`). */
  readonly flagOverEnv?: { readonly argv: readonly string[]; readonly value: unknown };
  /** The line once this option is overridden by `by`. */
  readonly overridden: (by: string) => string;
}

const whole =
  (variable: string) =>
  (by: string): string =>
    `${variable} (overridden by ${by})`;

const FIGHTS: Fight[] = [
  {
    variable: 'ENVOY_ADMIN_API',
    raw: 'http://127.0.0.1:15000',
    key: 'readyUrl',
    scuttle: url('http://127.0.0.1:15000/ready'),
    env: { raw: 'http://127.0.0.1:1/env', value: url('http://127.0.0.1:1/env') },
    flag: { argv: ['--ready-url', 'http://127.0.0.1:2/flag'], value: url('http://127.0.0.1:2/flag') },
    overridden: whole('ENVOY_ADMIN_API'),
  },
  {
    variable: 'ISTIO_QUIT_API',
    raw: 'http://127.0.0.1:25020',
    key: 'quitUrls',
    scuttle: [istio('http://127.0.0.1:25020/quitquitquit')],
    env: { raw: 'http://127.0.0.1:1/env', value: [istio('http://127.0.0.1:1/env')] },
    flag: { argv: ['--quit-url', 'http://127.0.0.1:2/flag'], value: [istio('http://127.0.0.1:2/flag')] },
    overridden: whole('ISTIO_QUIT_API'),
  },
  {
    variable: 'GENERIC_QUIT_ENDPOINTS',
    raw: 'http://127.0.0.1:9091/q',
    key: 'quitUrls',
    scuttle: [istio(DEFAULT_QUIT), generic('http://127.0.0.1:9091/q')],
    env: { raw: 'http://127.0.0.1:1/env', value: [istio('http://127.0.0.1:1/env')] },
    flag: { argv: ['--quit-url', 'http://127.0.0.1:2/flag'], value: [istio('http://127.0.0.1:2/flag')] },
    overridden: whole('GENERIC_QUIT_ENDPOINTS'),
  },
  {
    variable: 'NEVER_KILL_ISTIO',
    raw: 'true',
    key: 'quit',
    scuttle: 'never',
    env: { raw: 'always', value: 'always' },
    flag: { argv: ['--quit', 'on-success'], value: 'on-success' },
    overridden: whole('NEVER_KILL_ISTIO'),
  },
  {
    variable: 'NEVER_KILL_ISTIO_ON_FAILURE',
    raw: 'true',
    key: 'quit',
    scuttle: 'on-success',
    env: { raw: 'always', value: 'always' },
    flag: { argv: ['--quit', 'never'], value: 'never' },
    overridden: whole('NEVER_KILL_ISTIO_ON_FAILURE'),
  },
  {
    variable: 'START_WITHOUT_ENVOY',
    raw: 'true',
    key: 'wait',
    scuttle: false,
    env: { raw: 'true', value: true },
    flag: { argv: ['--wait'], value: true },
    flagOverEnv: { argv: ['--no-wait'], value: false },
    overridden: whole('START_WITHOUT_ENVOY'),
  },
  {
    variable: 'WAIT_FOR_ENVOY_TIMEOUT',
    raw: '30s',
    key: 'readyTimeout',
    scuttle: 30_000,
    env: { raw: '45s', value: 45_000 },
    flag: { argv: ['--ready-timeout', '2m'], value: 120_000 },
    overridden: (by) => `WAIT_FOR_ENVOY_TIMEOUT -> --start-without-proxy (--ready-timeout 30s overridden by ${by})`,
  },
  {
    variable: 'WAIT_FOR_ENVOY_TIMEOUT',
    raw: '30s',
    key: 'startWithoutProxy',
    scuttle: true,
    env: { raw: 'false', value: false },
    flag: { argv: ['--no-start-without-proxy'], value: false },
    flagOverEnv: { argv: ['--start-without-proxy'], value: true },
    overridden: (by) => `WAIT_FOR_ENVOY_TIMEOUT -> --ready-timeout 30s (--start-without-proxy overridden by ${by})`,
  },
  {
    variable: 'QUIT_WITHOUT_ENVOY_TIMEOUT',
    raw: '10s',
    key: 'readyTimeout',
    scuttle: 10_000,
    env: { raw: '45s', value: 45_000 },
    flag: { argv: ['--ready-timeout', '2m'], value: 120_000 },
    overridden: (by) => `QUIT_WITHOUT_ENVOY_TIMEOUT -> --no-start-without-proxy (--ready-timeout 10s overridden by ${by})`,
  },
  {
    variable: 'QUIT_WITHOUT_ENVOY_TIMEOUT',
    raw: '10s',
    key: 'startWithoutProxy',
    scuttle: false,
    env: { raw: 'yes', value: true },
    flag: { argv: ['--start-without-proxy'], value: true },
    flagOverEnv: { argv: ['--no-start-without-proxy'], value: false },
    overridden: (by) => `QUIT_WITHOUT_ENVOY_TIMEOUT -> --ready-timeout 10s (--no-start-without-proxy overridden by ${by})`,
  },
  {
    variable: 'SCUTTLE_LOGGING',
    raw: 'false',
    key: 'logLevel',
    scuttle: 'warn',
    env: { raw: 'debug', value: 'debug' },
    flag: { argv: ['--log-level', 'error'], value: 'error' },
    overridden: whole('SCUTTLE_LOGGING'),
  },
  {
    variable: 'QUIT_REQUEST_TIMEOUT',
    raw: '5s',
    key: 'requestTimeout',
    scuttle: 5_000,
    env: { raw: '250ms', value: 250 },
    flag: { argv: ['--request-timeout', '2s'], value: 2_000 },
    overridden: whole('QUIT_REQUEST_TIMEOUT'),
  },
];

describe('precedence: flag > ISTIO_JOB_RUN_* > scuttle > default', () => {
  for (const fight of FIGHTS) {
    const { variable, raw, key } = fight;
    const spec = OPTIONS[key];
    const scuttleEnv = { [variable]: raw };
    const name = `${variable}=${raw} (${key})`;

    const flagOverEnv = fight.flagOverEnv ?? fight.flag;
    const asFlag = (argv: readonly string[]): string => argv[0] ?? '';

    test(`${name}: the values differ where a step below compares them, so each step can fail`, () => {
      assert.notDeepEqual(fight.env.value, fight.scuttle, 'ISTIO_JOB_RUN_* vs scuttle');
      assert.notDeepEqual(fight.flag.value, fight.scuttle, 'flag vs scuttle');
      assert.notDeepEqual(flagOverEnv.value, fight.env.value, 'flag vs ISTIO_JOB_RUN_*');
    });
    // QUIT_WITHOUT_ENVOY_TIMEOUT's --no-start-without-proxy is the default: that step could not fail.
    if (!isDeepStrictEqual(fight.scuttle, DEFAULTS[key])) {
      test(`${name} beats the default`, () => {
        assert.deepEqual(parseRun(['job'], scuttleEnv).options[key], fight.scuttle);
      });
    }
    test(`${name}: ${spec.env}=${fight.env.raw} beats it, and the line says so`, () => {
      const invocation = parseRun(['job'], { ...scuttleEnv, [spec.env]: fight.env.raw });
      assert.deepEqual(invocation.options[key], fight.env.value);
      assert.equal(invocation.scuttle, line(fight.overridden(spec.env)));
    });
    test(`${name}: ${fight.flag.argv.join(' ')} beats it, and the line says so`, () => {
      const invocation = parseRun([...fight.flag.argv, 'job'], scuttleEnv);
      assert.deepEqual(invocation.options[key], fight.flag.value);
      assert.equal(invocation.scuttle, line(fight.overridden(asFlag(fight.flag.argv))));
    });
    test(`${name}: ${flagOverEnv.argv.join(' ')} beats ${spec.env}=${fight.env.raw} too`, () => {
      const invocation = parseRun([...flagOverEnv.argv, 'job'], { ...scuttleEnv, [spec.env]: fight.env.raw });
      assert.deepEqual(invocation.options[key], flagOverEnv.value);
      assert.equal(invocation.scuttle, line(fight.overridden(asFlag(flagOverEnv.argv))));
    });
  }

  test('every scuttle variable that sets an option has a fight', () => {
    const fought = new Set(FIGHTS.map((fight) => fight.variable));
    assert.deepEqual(
      SCUTTLE_VARIABLES.filter((name) => !fought.has(name)),
      [],
    );
  });

  test('both parts of WAIT_FOR_ENVOY_TIMEOUT overridden, by two different things', () => {
    const invocation = parseRun(['--ready-timeout', '5s', 'job'], {
      WAIT_FOR_ENVOY_TIMEOUT: '30s',
      ISTIO_JOB_RUN_START_WITHOUT_PROXY: 'false',
    });
    assert.deepEqual([invocation.options.readyTimeout, invocation.options.startWithoutProxy], [5_000, false]);
    assert.equal(invocation.scuttle, line('WAIT_FOR_ENVOY_TIMEOUT (overridden by --ready-timeout and ISTIO_JOB_RUN_START_WITHOUT_PROXY)'));
  });

  test('an overridden variable and one in effect, in table order', () => {
    const invocation = parseRun(['--quit', 'always', 'job'], { NEVER_KILL_ISTIO: 'true', ENVOY_ADMIN_API: 'http://127.0.0.1:15000' });
    assert.equal(invocation.options.quit, 'always');
    assert.equal(
      invocation.scuttle,
      line('ENVOY_ADMIN_API -> --ready-url http://127.0.0.1:15000/ready', 'NEVER_KILL_ISTIO (overridden by --quit)'),
    );
  });

  test('a scuttle variable does not affect what it does not map to', () => {
    const env = Object.fromEntries(FIGHTS.map((fight) => [fight.variable, fight.raw]));
    const { options } = parseRun(['job'], env);
    assert.deepEqual(
      [options.sidecar, options.pollInterval, options.quitTimeout, options.logFormat],
      [DEFAULTS.sidecar, DEFAULTS.pollInterval, DEFAULTS.quitTimeout, DEFAULTS.logFormat],
    );
  });
});

describe('bad values: named with the value and what is allowed, exit 125', () => {
  const rows: [env: Env, errors: string[]][] = [
    [
      { ENVOY_ADMIN_API: 'localhost:15000' },
      ['ENVOY_ADMIN_API: "localhost:15000" is not an http or https URL (example: http://127.0.0.1:15000)'],
    ],
    [{ ENVOY_ADMIN_API: '127.0.0.1:15000' }, ['ENVOY_ADMIN_API: "127.0.0.1:15000" is not a URL (example: http://127.0.0.1:15000)']],
    [
      { ENVOY_ADMIN_API: 'http://127.0.0.1:15000/?x=1' },
      [
        'ENVOY_ADMIN_API: "http://127.0.0.1:15000/?***" has a query or fragment; a path is appended to it (example: http://127.0.0.1:15000)',
      ],
    ],
    [
      { ISTIO_QUIT_API: 'ftp://127.0.0.1:15020' },
      ['ISTIO_QUIT_API: "ftp://127.0.0.1:15020" is not an http or https URL (example: http://127.0.0.1:15020)'],
    ],
    [
      { ISTIO_QUIT_API: 'http://127.0.0.1:15020#q' },
      ['ISTIO_QUIT_API: "http://127.0.0.1:15020#***" has a query or fragment; a path is appended to it (example: http://127.0.0.1:15020)'],
    ],
    ...(['1', 'yes', 'TRUE', 'True', 'on', '0'] as const).map((raw): [Env, string[]] => [
      { NEVER_KILL_ISTIO: raw },
      [`NEVER_KILL_ISTIO: "${raw}" is not a boolean (true or false; scuttle ignored any other value)`],
    ]),
    [
      { NEVER_KILL_ISTIO_ON_FAILURE: 'y' },
      ['NEVER_KILL_ISTIO_ON_FAILURE: "y" is not a boolean (true or false; scuttle ignored any other value)'],
    ],
    [{ START_WITHOUT_ENVOY: 'False' }, ['START_WITHOUT_ENVOY: "False" is not a boolean (true or false; scuttle ignored any other value)']],
    [{ SCUTTLE_LOGGING: 'off' }, ['SCUTTLE_LOGGING: "off" is not a boolean (true or false; scuttle ignored any other value)']],
    [{ WAIT_FOR_ENVOY_TIMEOUT: 'soon' }, ['WAIT_FOR_ENVOY_TIMEOUT: "soon" is not a duration (examples: 500ms, 30s, 2m)']],
    [{ WAIT_FOR_ENVOY_TIMEOUT: '-5s' }, ['WAIT_FOR_ENVOY_TIMEOUT: "-5s" is not a duration (examples: 500ms, 30s, 2m)']],
    [{ WAIT_FOR_ENVOY_TIMEOUT: '5 s' }, ['WAIT_FOR_ENVOY_TIMEOUT: "5 s" is not a duration (examples: 500ms, 30s, 2m)']],
    [{ QUIT_WITHOUT_ENVOY_TIMEOUT: '30sec' }, ['QUIT_WITHOUT_ENVOY_TIMEOUT: "30sec" is not a duration (examples: 500ms, 30s, 2m)']],
    [{ QUIT_WITHOUT_ENVOY_TIMEOUT: '999999999h' }, ['QUIT_WITHOUT_ENVOY_TIMEOUT: "999999999h" is too long (at most 24d 20h)']],
    [{ QUIT_REQUEST_TIMEOUT: '0' }, ['QUIT_REQUEST_TIMEOUT: "0" is too short (at least 1ms)']],
    [{ QUIT_REQUEST_TIMEOUT: '5x' }, ['QUIT_REQUEST_TIMEOUT: "5x" is not a duration (examples: 500ms, 30s, 2m)']],
    [
      { GENERIC_QUIT_ENDPOINTS: 'http://a/,,http://b/' },
      ['GENERIC_QUIT_ENDPOINTS: "http://a/,,http://b/" has an empty entry (comma-separated URLs)'],
    ],
    [{ GENERIC_QUIT_ENDPOINTS: 'http://a/,' }, ['GENERIC_QUIT_ENDPOINTS: "http://a/," has an empty entry (comma-separated URLs)']],
    [
      { GENERIC_QUIT_ENDPOINTS: 'http://a/, tcp://b:1' },
      ['GENERIC_QUIT_ENDPOINTS: "tcp://b:1" is not an http or https URL (example: http://127.0.0.1:9091/quitquitquit)'],
    ],
    [
      { QUIT_REQUEST_TIMEOUT: '0', NEVER_KILL_ISTIO: '1', ENVOY_ADMIN_API: 'x' },
      [
        'ENVOY_ADMIN_API: "x" is not a URL (example: http://127.0.0.1:15000)',
        'NEVER_KILL_ISTIO: "1" is not a boolean (true or false; scuttle ignored any other value)',
        'QUIT_REQUEST_TIMEOUT: "0" is too short (at least 1ms)',
      ],
    ],
  ];
  for (const [env, errors] of rows) {
    test(`${JSON.stringify(env)}: ${errors.join('; ')}`, () => {
      const result = parseError(['job'], env);
      assert.deepEqual(result.errors, errors);
      assert.deepEqual(result.options, DEFAULTS, 'a bad value sets nothing');
    });
  }

  test('every scuttle variable has a bad value', () => {
    const tried = new Set(rows.flatMap(([env]) => Object.keys(env)));
    assert.deepEqual(
      SCUTTLE_VARIABLES.filter((name) => !tried.has(name)),
      [],
    );
  });

  test('the quit URL comes from what did parse: a bad timeout keeps ISTIO_QUIT_API', () => {
    const result = parseError(['job'], { WAIT_FOR_ENVOY_TIMEOUT: 'soon', ISTIO_QUIT_API: 'http://127.0.0.1:25020' });
    assert.deepEqual(result.options.quitUrls, [istio('http://127.0.0.1:25020/quitquitquit')]);
    assert.equal(result.scuttle, line('ISTIO_QUIT_API -> --quit-url http://127.0.0.1:25020/quitquitquit'));
  });

  test('a bad ISTIO_QUIT_API keeps the default quit URL beside good GENERIC_QUIT_ENDPOINTS', () => {
    const result = parseError(['job'], { ISTIO_QUIT_API: 'nope', GENERIC_QUIT_ENDPOINTS: 'http://127.0.0.1:9091/q' });
    assert.deepEqual(result.options.quitUrls, [istio(DEFAULT_QUIT), generic('http://127.0.0.1:9091/q')]);
  });

  test('a bad ISTIO_JOB_RUN_QUIT_URL falls back to ISTIO_QUIT_API, not to the default', () => {
    const result = parseError(['job'], { ISTIO_JOB_RUN_QUIT_URL: 'ftp://x', ISTIO_QUIT_API: 'http://127.0.0.1:25020' });
    assert.deepEqual(result.options.quitUrls, [istio('http://127.0.0.1:25020/quitquitquit')]);
    assert.deepEqual(result.errors, ['ISTIO_JOB_RUN_QUIT_URL: "ftp://x" is not an http or https URL']);
  });

  test('a bad --quit falls back to NEVER_KILL_ISTIO_ON_FAILURE', () => {
    const result = parseError(['--quit', 'maybe', 'job'], { NEVER_KILL_ISTIO_ON_FAILURE: 'true' });
    assert.equal(result.options.quit, 'on-success');
  });

  test('a bad scuttle value is an error even where a flag overrides it', () => {
    const result = parseError(['--quit', 'never', 'job'], { NEVER_KILL_ISTIO: 'yes' });
    assert.deepEqual(result.errors, ['NEVER_KILL_ISTIO: "yes" is not a boolean (true or false; scuttle ignored any other value)']);
    assert.equal(result.options.quit, 'never');
  });

  test('a bad scuttle value with no command: both errors', () => {
    const result = parseError([], { START_WITHOUT_ENVOY: '1' });
    assert.deepEqual(result.errors, ['START_WITHOUT_ENVOY: "1" is not a boolean (true or false; scuttle ignored any other value)']);
  });
});

describe('readScuttle and describeScuttle on their own', () => {
  test('readScuttle reports effects in table order, whatever order it found them in', () => {
    const { effects } = readScuttle(
      { QUIT_REQUEST_TIMEOUT: '1s', ENVOY_ADMIN_API: 'http://127.0.0.1:15000', NEVER_KILL_ISTIO: 'true' },
      DEFAULTS.quitUrls,
    );
    assert.deepEqual(
      effects.map((effect) => effect.variable),
      ['ENVOY_ADMIN_API', 'NEVER_KILL_ISTIO', 'QUIT_REQUEST_TIMEOUT'],
    );
  });

  test('readScuttle adds GENERIC_QUIT_ENDPOINTS to the defaults it is given', () => {
    const { options } = readScuttle({ GENERIC_QUIT_ENDPOINTS: 'http://127.0.0.1:3/g' }, [istio('http://127.0.0.1:4/d')]);
    assert.deepEqual(options.quitUrls, [istio('http://127.0.0.1:4/d'), generic('http://127.0.0.1:3/g')]);
  });

  const effects: Effect[] = [
    { variable: 'NEVER_KILL_ISTIO', kind: 'sets', parts: [{ option: 'quit', shown: '--quit never' }] },
    {
      variable: 'WAIT_FOR_ENVOY_TIMEOUT',
      kind: 'sets',
      parts: [
        { option: 'readyTimeout', shown: '--ready-timeout 1s' },
        { option: 'startWithoutProxy', shown: '--start-without-proxy' },
      ],
    },
    { variable: 'QUIT_WITHOUT_ENVOY_TIMEOUT', kind: 'inert', why: 'some reason' },
  ];
  const rows: [name: string, overriders: Partial<Record<keyof Options, string>>, text: string | undefined, given?: Effect[]][] = [
    ['nothing set: no line', {}, undefined, []],
    [
      'all in effect',
      {},
      line(
        'NEVER_KILL_ISTIO -> --quit never',
        'WAIT_FOR_ENVOY_TIMEOUT -> --ready-timeout 1s --start-without-proxy',
        'QUIT_WITHOUT_ENVOY_TIMEOUT (some reason)',
      ),
    ],
    [
      'one part overridden',
      { startWithoutProxy: 'X' },
      line(
        'NEVER_KILL_ISTIO -> --quit never',
        'WAIT_FOR_ENVOY_TIMEOUT -> --ready-timeout 1s (--start-without-proxy overridden by X)',
        'QUIT_WITHOUT_ENVOY_TIMEOUT (some reason)',
      ),
    ],
    [
      'everything overridden, the same overrider named once',
      { quit: '--quit', readyTimeout: 'Y', startWithoutProxy: 'Y' },
      line(
        'NEVER_KILL_ISTIO (overridden by --quit)',
        'WAIT_FOR_ENVOY_TIMEOUT (overridden by Y)',
        'QUIT_WITHOUT_ENVOY_TIMEOUT (some reason)',
      ),
    ],
  ];
  for (const [name, overriders, text, given] of rows) {
    test(`describeScuttle: ${name}`, () => {
      assert.equal(describeScuttle(given ?? effects, new Map(Object.entries(overriders) as [keyof Options, string][])), text);
    });
  }
});

describe('--help', () => {
  test('names every scuttle variable and the migration guide, within 80 columns', () => {
    const help = renderHelp('1.2.3');
    const flat = help.replace(/\s+/g, ' ');
    for (const name of SCUTTLE_VARIABLES) assert.ok(flat.includes(name), name);
    assert.ok(flat.includes('docs/MIGRATING.md'));
    assert.deepEqual(
      help.split('\n').filter((text) => text.length > 80),
      [],
    );
  });
});

describe('docs/MIGRATING.md', () => {
  const guide = readFileSync(new URL('../../../docs/MIGRATING.md', import.meta.url), 'utf8');

  test('has a row for every scuttle variable', () => {
    assert.deepEqual(
      SCUTTLE_VARIABLES.filter((name) => !new RegExp(`^\\| \`${name}[\`=]`, 'm').test(guide)),
      [],
    );
  });

  test('its example line is what istio-job-run says for its example manifest', () => {
    const example = guide.split('\n').find((text) => text.startsWith('istio-job-run: scuttle settings:'));
    const env = {
      ENVOY_ADMIN_API: 'http://127.0.0.1:15000',
      ISTIO_QUIT_API: 'http://127.0.0.1:15020',
      NEVER_KILL_ISTIO_ON_FAILURE: 'true',
      WAIT_FOR_ENVOY_TIMEOUT: '2m',
    };
    for (const [name, value] of Object.entries(env)) assert.ok(guide.includes(`{name: ${name}, value: "${value}"}`), name);
    assert.equal(example, `istio-job-run: ${parseRun(['job'], env).scuttle}`);
  });

  test('the README links it', () => {
    assert.ok(readFileSync(new URL('../../../README.md', import.meta.url), 'utf8').includes('(docs/MIGRATING.md)'));
  });
});
