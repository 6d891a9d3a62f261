// Detection from tables: the annotations file's format (Go's strconv.Quote), each kind's rule, --also, and
// the values that must never show credentials.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseAnnotations, unquote } from '../../src/annotations.ts';
import { detect, describeSidecars } from '../../src/detect.ts';
import { parseInvocation } from '../../src/options-parse.ts';
import { DEFAULTS, type Options } from '../../src/options-table.ts';
import { boundedLookup, withoutDns, type Address } from '../../src/lookup.ts';
import { redact } from '../../src/values.ts';

describe('unquote: Go strconv.Quote as kubelet writes annotation values', () => {
  const rows: [quoted: string, value: string | undefined][] = [
    ['"plain"', 'plain'],
    ['""', ''],
    ['"{\\"containers\\":[\\"istio-proxy\\"]}"', '{"containers":["istio-proxy"]}'],
    ['"a\\nb\\tc\\\\d"', 'a\nb\tc\\d'],
    ['"\\a\\b\\f\\r\\v"', '\x07\b\f\r\v'],
    ['"\\x41\\u00e9\\U0001F600"', 'Aé😀'],
    ['"\\xc3\\xa9"', 'é'],
    ['"\\101"', 'A'],
    ['"é unquoted UTF-8"', 'é unquoted UTF-8'],
    ['plain', undefined],
    ['"open', undefined],
    ['"bad \\q escape"', undefined],
    ['"inner " quote"', undefined],
    ['"\\x4"', undefined],
  ];
  for (const [quoted, value] of rows) {
    test(`${quoted} -> ${JSON.stringify(value)}`, () => assert.equal(unquote(quoted), value));
  }

  test('a file: one annotation a line, bad lines named by number', () => {
    const parsed = parseAnnotations('a.io/x="1"\nb.io/y="two=2"\n\nnonsense\n=""\n');
    assert.deepEqual(
      [...parsed.values],
      [
        ['a.io/x', '1'],
        ['b.io/y', 'two=2'],
      ],
    );
    assert.deepEqual(parsed.errors, ['line 4: not key="value"', 'line 5: not key="value"']);
  });
});

const file = (entries: Record<string, string>): string =>
  Object.entries(entries)
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
    .join('\n');
const found = (entries: Record<string, string>, options: Partial<Options> = {}, env: Record<string, string> = {}) =>
  detect({ options: { ...DEFAULTS, ...options }, env, envoyAdmin: false, annotations: { path: '/p/a', text: file(entries) } });
const urls = (detection: ReturnType<typeof found>) =>
  detection.sidecars.map((s) => [s.kind.name, s.ready?.href ?? null, s.quit.map((u) => u.href).join(',')]);

describe('detect', () => {
  const rows: [name: string, entries: Record<string, string>, sidecars: (string | null)[][]][] = [
    ['nothing', {}, []],
    [
      'Linkerd with shutdown',
      { 'linkerd.io/proxy-version': 'v', 'config.linkerd.io/proxy-admin-shutdown': 'enabled' },
      [['linkerd', 'http://127.0.0.1:4191/ready', 'http://127.0.0.1:4191/shutdown']],
    ],
    [
      'Linkerd native wins',
      {
        'linkerd.io/proxy-version': 'v',
        'config.linkerd.io/proxy-admin-shutdown': 'enabled',
        'config.linkerd.io/proxy-enable-native-sidecar': 'true',
      },
      [],
    ],
    [
      'Linkerd native "false" is classic',
      {
        'linkerd.io/proxy-version': 'v',
        'config.linkerd.io/proxy-admin-shutdown': 'enabled',
        'config.beta.linkerd.io/proxy-enable-native-sidecar': 'false',
      },
      [['linkerd', 'http://127.0.0.1:4191/ready', 'http://127.0.0.1:4191/shutdown']],
    ],
    [
      'Vault with quit, custom port',
      {
        'vault.hashicorp.com/agent-inject-status': 'injected',
        'vault.hashicorp.com/agent-enable-quit': 'true',
        'vault.hashicorp.com/agent-cache-listener-port': '8300',
      },
      [['vault-agent', null, 'http://127.0.0.1:8300/agent/v1/quit']],
    ],
    [
      'Vault pre-populate only',
      {
        'vault.hashicorp.com/agent-inject-status': 'injected',
        'vault.hashicorp.com/agent-enable-quit': 'true',
        'vault.hashicorp.com/agent-pre-populate-only': 'true',
      },
      [],
    ],
    [
      'Dapr',
      { 'dapr.io/enabled': 'true' },
      [['dapr', 'http://127.0.0.1:3500/v1.0/healthz/outbound', 'http://127.0.0.1:3500/v1.0/shutdown']],
    ],
    [
      'Consul with custom paths',
      {
        'consul.hashicorp.com/connect-inject-status': 'injected',
        'consul.hashicorp.com/sidecar-proxy-lifecycle-graceful-shutdown-path': '/stop',
      },
      [['consul-dataplane', 'http://127.0.0.1:20600/graceful_startup', 'http://127.0.0.1:20600/stop']],
    ],
    [
      'Consul lifecycle off',
      { 'consul.hashicorp.com/connect-inject-status': 'injected', 'consul.hashicorp.com/enable-sidecar-proxy-lifecycle': 'false' },
      [],
    ],
    [
      'Istio classic from the annotation',
      { 'sidecar.istio.io/status': '{"containers":["istio-proxy"]}' },
      [['istio', 'http://127.0.0.1:15021/healthz/ready', 'http://127.0.0.1:15020/quitquitquit']],
    ],
    ['Istio native from the annotation', { 'sidecar.istio.io/status': '{"initContainers":["istio-proxy"]}' }, []],
  ];
  for (const [name, entries, sidecars] of rows) {
    test(name, () => assert.deepEqual(urls(found(entries, {}, { KUBERNETES_SERVICE_HOST: 'x' })), sidecars));
  }

  test('the status variable wins over the annotation', () => {
    const detection = found(
      { 'sidecar.istio.io/status': '{"containers":["istio-proxy"]}' },
      {},
      { ISTIO_JOB_RUN_SIDECAR_STATUS: '{"initContainers":["istio-proxy"]}' },
    );
    assert.equal(detection.mode.mode, 'native');
  });

  test('--also wins over the annotation of the same kind, and its ports are used', () => {
    const detection = found({ 'dapr.io/enabled': 'true' }, { sidecar: 'none', also: [{ kind: 'dapr', ports: [3999] }] });
    assert.deepEqual(urls(detection), [['dapr', 'http://127.0.0.1:3999/v1.0/healthz/outbound', 'http://127.0.0.1:3999/v1.0/shutdown']]);
    assert.equal(describeSidecars(detection.sidecars), 'sidecars: dapr (from --also/ISTIO_JOB_RUN_ALSO)');
  });

  test('an empty status: an info line on what it means, and a probe of 15020 only in a pod', () => {
    const inPod = detect({ options: DEFAULTS, env: { ISTIO_JOB_RUN_SIDECAR_STATUS: '', KUBERNETES_SERVICE_HOST: 'x' }, envoyAdmin: false });
    assert.match(inPod.notes.map((n) => `${n.level} ${n.message}`).join('\n'), /^info .*is set but empty.*ambient mode.*misspelled/);
    assert.equal(inPod.probe?.href, 'http://127.0.0.1:15020/');
    const outside = detect({ options: DEFAULTS, env: { ISTIO_JOB_RUN_SIDECAR_STATUS: '' }, envoyAdmin: false });
    assert.equal(outside.probe, undefined);
  });
});

describe('--also and ISTIO_JOB_RUN_ALSO', () => {
  const rows: [argv: string[], also: unknown, error: RegExp | undefined][] = [
    [['--also', 'linkerd', 'true'], [{ kind: 'linkerd', ports: [] }], undefined],
    [['--also', 'cloud-sql-proxy:9190:9191', 'true'], [{ kind: 'cloud-sql-proxy', ports: [9190, 9191] }], undefined],
    [['--also', 'cloud-sql-proxy:9190', 'true'], [], /cloud-sql-proxy takes 2 ports \(cloud-sql-proxy:HTTP_PORT:ADMIN_PORT\)/],
    [['--also', 'istio', 'true'], [], /"istio" is not a sidecar name .*Istio is governed by --sidecar/],
    [['--also', 'dapr,bogus', 'true'], [{ kind: 'dapr', ports: [] }], /"bogus" is not a sidecar name/],
    [['--also', 'dapr', '--also', 'vault-agent:0', 'true'], [{ kind: 'dapr', ports: [] }], /"0" is not a port/],
    [['--also', 'none', 'true'], [], undefined],
  ];
  for (const [argv, also, error] of rows) {
    test(argv.join(' '), () => {
      const invocation = parseInvocation(argv, {});
      assert.ok(invocation.kind === 'run' || invocation.kind === 'usage-error');
      assert.deepEqual(invocation.options.also, also);
      if (error === undefined) assert.equal(invocation.kind, 'run');
      else assert.ok(invocation.kind === 'usage-error' && invocation.errors.some((e) => error.test(e)), JSON.stringify(invocation));
    });
  }
});

describe('issue 9: --install without a directory, credentials in URLs', () => {
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
});

describe('issue 9: name lookups', () => {
  test('literals and localhost never reach DNS', () => {
    assert.deepEqual(withoutDns('127.0.0.1'), [{ address: '127.0.0.1', family: 4 }]);
    assert.deepEqual(withoutDns('[::1]'), [{ address: '::1', family: 6 }]);
    assert.deepEqual(withoutDns('LOCALHOST'), [{ address: '127.0.0.1', family: 4 }]);
    assert.equal(withoutDns('istio.example'), undefined);
  });

  test('one lookup in flight per name, each caller bounded; a black hole does not hold up localhost', async () => {
    const calls: string[] = [];
    const never = new Promise<Address[]>(() => undefined);
    const lookup = boundedLookup((host) => {
      calls.push(host);
      return never;
    }, 20);
    const ask = (host: string) =>
      new Promise<string>((resolve) =>
        lookup(host, {}, (error, address) => resolve(error === null ? String(address) : String(error.code))),
      );
    const answers = await Promise.all([ask('black.hole'), ask('black.hole'), ask('black.hole'), ask('localhost')]);
    assert.deepEqual(answers, ['EAI_AGAIN', 'EAI_AGAIN', 'EAI_AGAIN', '127.0.0.1']);
    assert.deepEqual(calls, ['black.hole']);
    assert.equal(await ask('black.hole'), 'EAI_AGAIN');
    assert.deepEqual(calls, ['black.hole'], 'still the first lookup, shared');
  });
});
