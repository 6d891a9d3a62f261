// Detection from tables, through the one pass of configure(): each kind's rule on the pod's annotations,
// --also beside them, the mode, and what is wrong with the file.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { configure, type Job } from '../../../src/config/configuration.ts';
import { describeSidecars } from '../../../src/config/detect.ts';
import { parseInvocation } from '../../../src/config/parse.ts';

const file = (entries: Record<string, string>): string =>
  Object.entries(entries)
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
    .join('\n');
/** The configuration from these flags and variables, with this annotations file at /p/a. */
function found(entries: Record<string, string>, argv: readonly string[] = [], env: Record<string, string> = {}): Job {
  const text = file(entries);
  const configuration = configure({
    argv: ['--pod-annotations', '/p/a', ...argv, 'job'],
    env,
    readFile: (path) => {
      if (path === '/p/a') return text;
      throw Object.assign(new Error(`no ${path}`), { code: 'ENOENT' });
    },
  });
  if (configuration.kind !== 'job') assert.fail(`expected a job, got ${configuration.kind}`);
  return configuration;
}
const urls = (job: Job) => job.sidecars.map((s) => [s.kind.name, s.ready?.href ?? null, s.quit.map((q) => q.url.href).join(',')]);

describe('detect', () => {
  type Row = [name: string, entries: Record<string, string>, sidecars: (string | null)[][]];
  const rows: Row[] = [
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
    // Each setting as its injector reads it: Go's strconv.ParseBool (vault-k8s, consul-k8s, Linkerd's native
    // keys), Dapr's IsTruthy, Linkerd's "enabled".
    ...['1', 't', 'T', 'TRUE', 'True'].map(
      (value): Row => [
        `Vault with agent-enable-quit: "${value}"`,
        { 'vault.hashicorp.com/agent-inject-status': 'injected', 'vault.hashicorp.com/agent-enable-quit': value },
        [['vault-agent', null, 'http://127.0.0.1:8200/agent/v1/quit']],
      ],
    ),
    ...['0', 'f', 'False', '', 'yes'].map(
      (value): Row => [
        `Vault with agent-enable-quit: "${value}": no quit endpoint`,
        { 'vault.hashicorp.com/agent-inject-status': 'injected', 'vault.hashicorp.com/agent-enable-quit': value },
        [],
      ],
    ),
    ...['1', 'T'].map(
      (value): Row => [
        `Vault pre-populate only: "${value}"`,
        {
          'vault.hashicorp.com/agent-inject-status': 'injected',
          'vault.hashicorp.com/agent-enable-quit': 'true',
          'vault.hashicorp.com/agent-pre-populate-only': value,
        },
        [],
      ],
    ),
    ...['y', 'yes', 'on', '1', 't', 'YES', ' On '].map(
      (value): Row => [
        `Dapr with dapr.io/enabled: "${value}"`,
        { 'dapr.io/enabled': value },
        [['dapr', 'http://127.0.0.1:3500/v1.0/healthz/outbound', 'http://127.0.0.1:3500/v1.0/shutdown']],
      ],
    ),
    ...['false', 'no', '0', 'off', ''].map((value): Row => [`Dapr with dapr.io/enabled: "${value}"`, { 'dapr.io/enabled': value }, []]),
    ...['0', 'f', 'F', 'FALSE', 'False'].map(
      (value): Row => [
        `Consul lifecycle off: "${value}"`,
        { 'consul.hashicorp.com/connect-inject-status': 'injected', 'consul.hashicorp.com/enable-sidecar-proxy-lifecycle': value },
        [],
      ],
    ),
    ...['1', 'T', ''].map(
      (value): Row => [
        `Consul lifecycle on: "${value}"`,
        { 'consul.hashicorp.com/connect-inject-status': 'injected', 'consul.hashicorp.com/enable-sidecar-proxy-lifecycle': value },
        [['consul-dataplane', 'http://127.0.0.1:20600/graceful_startup', 'http://127.0.0.1:20600/graceful_shutdown']],
      ],
    ),
    ...['1', 'T'].map(
      (value): Row => [
        `Linkerd native: "${value}"`,
        {
          'linkerd.io/proxy-version': 'v',
          'config.linkerd.io/proxy-admin-shutdown': 'enabled',
          'config.alpha.linkerd.io/proxy-enable-native-sidecar': value,
        },
        [],
      ],
    ),
    [
      'Linkerd native: the GA key wins over the alpha one',
      {
        'linkerd.io/proxy-version': 'v',
        'config.linkerd.io/proxy-admin-shutdown': 'enabled',
        'config.linkerd.io/proxy-enable-native-sidecar': 'false',
        'config.alpha.linkerd.io/proxy-enable-native-sidecar': 'true',
      },
      [['linkerd', 'http://127.0.0.1:4191/ready', 'http://127.0.0.1:4191/shutdown']],
    ],
    ...['Enabled', 'true', 'disabled'].map(
      (value): Row => [
        `Linkerd shutdown: "${value}": not enabled`,
        { 'linkerd.io/proxy-version': 'v', 'config.linkerd.io/proxy-admin-shutdown': value },
        [],
      ],
    ),
  ];
  for (const [name, entries, sidecars] of rows) {
    test(name, () => assert.deepEqual(urls(found(entries, [], { KUBERNETES_SERVICE_HOST: 'x' })), sidecars));
  }

  test('the status variable wins over the annotation', () => {
    const detection = found({ 'sidecar.istio.io/status': '{"containers":["istio-proxy"]}' }, [], {
      ISTIO_JOB_RUN_SIDECAR_STATUS: '{"initContainers":["istio-proxy"]}',
    });
    assert.equal(detection.mode.mode, 'native');
    assert.deepEqual(detection.sidecars, []);
  });

  test('--also wins over the annotation of the same kind, and its ports are used', () => {
    const detection = found({ 'dapr.io/enabled': 'true' }, ['--sidecar', 'none', '--also', 'dapr:3999']);
    assert.deepEqual(urls(detection), [['dapr', 'http://127.0.0.1:3999/v1.0/healthz/outbound', 'http://127.0.0.1:3999/v1.0/shutdown']]);
    assert.equal(describeSidecars(detection.sidecars), 'sidecars: dapr (from --also/ISTIO_JOB_RUN_ALSO)');
  });

  test('an empty status: an info line on what it means, and a probe of 15020 only in a pod', () => {
    const inPod = found({}, [], { ISTIO_JOB_RUN_SIDECAR_STATUS: '', KUBERNETES_SERVICE_HOST: 'x' });
    assert.match(inPod.lines.map((n) => `${n.level} ${n.message}`).join('\n'), /\ninfo .*is set but empty.*ambient mode.*misspelled/);
    assert.equal(inPod.probe?.href, 'http://127.0.0.1:15020/');
    const outside = found({}, [], { ISTIO_JOB_RUN_SIDECAR_STATUS: '' });
    assert.equal(outside.probe, undefined);
  });

  const errors: [name: string, entries: Record<string, string>, argv: string[], error: string, kinds: string[]][] = [
    [
      'a bad port annotation: named, and the other sidecars kept',
      {
        'dapr.io/enabled': 'true',
        'dapr.io/http-port': '99999',
        'linkerd.io/proxy-version': 'v',
        'config.linkerd.io/proxy-admin-shutdown': 'enabled',
      },
      [],
      'pod annotations "/p/a": dapr.io/http-port: "99999" is not a port (1-65535)',
      ['linkerd'],
    ],
    [
      'a bad port annotation even beside --also of that kind',
      { 'dapr.io/enabled': 'true', 'dapr.io/http-port': 'x' },
      ['--also', 'dapr'],
      'pod annotations "/p/a": dapr.io/http-port: "x" is not a port (1-65535)',
      ['dapr'],
    ],
  ];
  for (const [name, entries, argv, error, kinds] of errors) {
    test(name, () => {
      const job = found(entries, argv, { KUBERNETES_SERVICE_HOST: 'x' });
      assert.deepEqual(job.errors, [error]);
      assert.deepEqual(
        job.sidecars.map((s) => s.kind.name),
        kinds,
      );
    });
  }

  test('a file whose lines are not key="value": read as an unreadable one, the Istio sidecar assumed and told to quit', () => {
    for (const text of ['garbage\n', 'dapr.io/enabled="true"\nnot an annotation\n']) {
      const job = configure({
        argv: ['--pod-annotations', '/p/a', 'job'],
        env: { KUBERNETES_SERVICE_HOST: 'x' },
        readFile: () => text,
      });
      assert.ok(job.kind === 'job');
      assert.match(job.errors.join('\n'), /pod annotations "\/p\/a": line \d: not key="value"/);
      assert.equal(job.mode.mode, 'classic');
      assert.ok(job.sidecars.some((sidecar) => sidecar.kind.name === 'istio'));
    }
  });

  test('quit URLs the launcher cannot take: more than it holds, or a path from the file too long for its line', () => {
    const many = found({}, [
      '--sidecar',
      'classic',
      ...Array.from({ length: 17 }, (_, i) => ['--quit-url', `http://127.0.0.1:${i + 1}/q`]).flat(),
    ]);
    assert.deepEqual(many.errors, [
      '17 quit URLs: the launcher takes at most 16 (--quit-url, --also, the annotations file, CSQL_PROXY_QUIT_URLS)',
    ]);
    const long = found({
      'consul.hashicorp.com/connect-inject-status': 'injected',
      'consul.hashicorp.com/sidecar-proxy-lifecycle-graceful-shutdown-path': `/${'p'.repeat(4100)}`,
    });
    assert.match(
      long.errors.join('\n'),
      /^\/p\/a: the consul-dataplane's quit URL http:\/\/127\.0\.0\.1:20600\/p+ is too long for the launcher's line \(at most 4096 bytes\)$/,
    );
  });

  test('a file that cannot be read: the error names it; a missing default file is no error', () => {
    const named = configure({
      argv: ['--pod-annotations', '/p/none', 'job'],
      env: {},
      readFile: () => {
        throw Object.assign(new Error('gone'), { code: 'ENOENT' });
      },
    });
    assert.ok(named.kind === 'job');
    assert.deepEqual(named.errors, ['pod annotations "/p/none": cannot be read (ENOENT)']);
    const quiet = configure({
      argv: ['job'],
      env: {},
      readFile: () => {
        throw Object.assign(new Error('gone'), { code: 'ENOENT' });
      },
    });
    assert.ok(quiet.kind === 'job');
    assert.deepEqual(quiet.errors, []);
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
