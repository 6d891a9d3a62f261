// Every kind of sidecar in a simulated pod (a network namespace, the real default ports): each waited
// for and stopped by its own rules, two and three in one pod, found from an annotations file in Kubernetes'
// format, and "already gone" judged per listener.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KindPodSpec } from '../support/kind-pod-main.ts';
import { podsUnavailable, simulateKindPod } from '../support/pods.ts';
import { run, WRAPPER } from '../support/process.ts';
import { annotationsFile, containerAsWritten, type StandInKind } from '../support/sidecar-kinds.ts';

const POD = { KUBERNETES_SERVICE_HOST: '10.96.0.1' };
const job = (...args: string[]): string[] => [WRAPPER, '--quit-timeout', '5s', ...args];
const pod = (spec: Partial<KindPodSpec> & Pick<KindPodSpec, 'args'>): Promise<Awaited<ReturnType<typeof simulateKindPod>>> =>
  simulateKindPod({ standIns: [], env: POD, ...spec });

/** What each kind is waited on and stopped with, by its project (the README's Sidecars section). */
const KINDS: [kind: StandInKind, ready: string | undefined, stop: string, stopStatus: number][] = [
  ['linkerd', '/ready', '/shutdown', 200],
  ['cloud-sql-proxy', '/startup', '/quitquitquit', 200],
  ['alloydb-auth-proxy', '/startup', '/quitquitquit', 200],
  ['vault-agent', undefined, '/agent/v1/quit', 200],
  ['dapr', '/v1.0/healthz/outbound', '/v1.0/shutdown', 204],
  ['consul-dataplane', '/graceful_startup', '/graceful_shutdown', 200],
];

describe('sidecars of every kind, in a pod', { skip: podsUnavailable() }, () => {
  for (const [kind, ready, stop, stopStatus] of KINDS) {
    test(`--sidecar none --also ${kind}: waited for${ready === undefined ? ' (nothing to wait for)' : ''}, stopped, exit code kept`, async () => {
      const result = await pod({
        standIns: [{ kind, readyAfter: 2 }],
        args: job('--sidecar', 'none', '--also', kind, 'sh', '-c', 'exit 3'),
      });
      assert.equal(result.code, 3, result.stderr);
      const requests = result.standIns[0]?.requests ?? [];
      if (ready !== undefined) {
        assert.deepEqual(
          requests.filter((r) => r.path === ready).map((r) => r.status >= 200 && r.status < 300),
          [false, false, true],
        );
      }
      assert.deepEqual(
        requests.filter((r) => r.path === stop).map((r) => [r.method, r.status]),
        [['POST', stopStatus]],
      );
      assert.equal(result.standIns[0]?.exited, true);
      assert.match(result.stderr, new RegExp(`sidecars: ${kind} \\(from --also`));
    });
  }

  test('Istio, Cloud SQL proxy and Vault Agent in one pod: all waited for, all stopped in parallel', async () => {
    const result = await pod({
      istio: true,
      standIns: [{ kind: 'cloud-sql-proxy', readyAfter: 3 }, { kind: 'vault-agent' }],
      env: { ...POD, ISTIO_JOB_RUN_ALSO: 'cloud-sql-proxy,vault-agent' },
      args: job('--sidecar', 'classic', 'true'),
    });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(result.istio.some((r) => r.path === '/quitquitquit' && r.status === 200));
    assert.deepEqual(
      result.standIns.map((s) => [s.kind, s.exited]),
      [
        ['cloud-sql-proxy', true],
        ['vault-agent', true],
      ],
    );
    assert.match(
      result.stderr,
      /sidecars: istio \(from --sidecar classic\), cloud-sql-proxy \(from --also\/ISTIO_JOB_RUN_ALSO\), vault-agent/,
    );
  });

  test('two sidecars, one never ready: the timeout names it with its last answer and hint; both still stopped', async () => {
    const result = await pod({
      standIns: [{ kind: 'linkerd' }, { kind: 'cloud-sql-proxy', noHealthCheck: true }],
      args: job('--sidecar', 'none', '--also', 'linkerd', '--also', 'cloud-sql-proxy', '--ready-timeout', '1s', 'true'),
    });
    assert.equal(result.code, 125);
    // The time is measured when the wait ends: the timeout, or a little later on a loaded machine (1.03s).
    assert.match(
      result.stderr,
      /cloud-sql-proxy not ready after 1(\.\d+)?s \(GET http:\/\/127\.0\.0\.1:9090\/startup: \d+ attempts, last: connection refused\); the Cloud SQL proxy answers \/startup only with --health-check; not running the command/,
    );
    assert.doesNotMatch(result.stderr, /linkerd-proxy not ready/);
    assert.deepEqual(
      result.standIns.map((s) => s.exited),
      [true, true],
    );
  });

  test('"not enabled" answers are reported at once with what enables them, never retried', async () => {
    const result = await pod({
      standIns: [
        { kind: 'linkerd', quitDisabled: true },
        { kind: 'vault-agent', quitDisabled: true },
      ],
      args: job('--sidecar', 'none', '--also', 'linkerd,vault-agent', 'true'),
    });
    assert.equal(result.code, 0);
    assert.deepEqual(
      result.standIns.map((s) => s.requests.filter((r) => r.method === 'POST').length),
      [1, 1],
    );
    assert.match(
      result.stderr,
      /linkerd-proxy says its quit endpoint is not enabled: .*enable it with pod annotation config\.linkerd\.io\/proxy-admin-shutdown: enabled/,
    );
    assert.match(result.stderr, /vault-agent says its quit endpoint is not enabled: .*vault\.hashicorp\.com\/agent-enable-quit: "true"/);
  });

  test('per-listener gone: a sidecar that dies mid-job is gone at once, not retried to the quit timeout', async () => {
    const result = await pod({
      standIns: [{ kind: 'vault-agent' }],
      crashOnJobLine: 0,
      args: [WRAPPER, '--quit-timeout', '30s', '--sidecar', 'none', '--also', 'vault-agent', 'sh', '-c', 'echo crash; cat >/dev/null'],
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /vault-agent already gone \(POST http:\/\/127\.0\.0\.1:8200\/agent\/v1\/quit refused after it had answered: 1 attempt/,
    );
  });

  test('a custom Istio port: gone judged by that listener, too', async () => {
    const result = await pod({
      standIns: [{ kind: 'dapr', ports: [3600] }],
      crashOnJobLine: 0,
      args: [WRAPPER, '--quit-timeout', '30s', '--sidecar', 'none', '--also', 'dapr:3600', 'sh', '-c', 'echo crash; cat >/dev/null'],
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /daprd already gone \(POST http:\/\/127\.0\.0\.1:3600\/v1\.0\/shutdown refused after it had answered: 1 attempt/,
    );
  });

  test('a bad name and a bad port: exit 125 naming each, and the sidecar that parsed is still stopped', async () => {
    const result = await pod({
      standIns: [{ kind: 'dapr' }],
      args: job('--sidecar', 'none', '--also', 'dapr,envoy,linkerd:99999', 'true'),
    });
    assert.equal(result.code, 125);
    assert.match(result.stderr, /--also: "envoy" is not a sidecar name \(linkerd, cloud-sql-proxy/);
    assert.match(result.stderr, /"99999" is not a port \(1-65535\)/);
    assert.equal(result.standIns[0]?.exited, true);
  });
});

/** Annotations as kubelet writes them: key="value", Go-quoted, one a line. */
const annotations = annotationsFile;
const ISTIO_STATUS = JSON.stringify({ initContainers: ['istio-init'], containers: ['istio-proxy'], volumes: ['istio-envoy'] });

describe('sidecars found from the pod annotations file', { skip: podsUnavailable() }, () => {
  const withFile = (entries: Record<string, string>, standIns: KindPodSpec['standIns'], istio = false) =>
    pod({ istio, standIns, annotations: annotations(entries), args: job('--pod-annotations', 'ANNOTATIONS', 'true') });

  test('Istio from sidecar.istio.io/status, Linkerd with shutdown enabled, Dapr on its http-port: three sidecars', async () => {
    const result = await withFile(
      {
        'sidecar.istio.io/status': ISTIO_STATUS,
        'linkerd.io/proxy-version': 'edge-26.1.1',
        'config.linkerd.io/proxy-admin-shutdown': 'enabled',
        'dapr.io/enabled': 'true',
        'dapr.io/http-port': '3601',
      },
      [{ kind: 'linkerd' }, { kind: 'dapr', ports: [3601] }],
      true,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.ok(result.istio.some((r) => r.path === '/quitquitquit' && r.status === 200));
    assert.deepEqual(
      result.standIns.map((s) => s.exited),
      [true, true],
    );
    assert.match(result.stderr, /sidecars: istio \(from \S+annotations\), linkerd \(from \S+annotations\), dapr \(from \S+annotations\)/);
  });

  test('Vault Agent with enable-quit on its cache listener port; Consul on its graceful port', async () => {
    const result = await withFile(
      {
        'vault.hashicorp.com/agent-inject-status': 'injected',
        'vault.hashicorp.com/agent-enable-quit': 'true',
        'vault.hashicorp.com/agent-cache-listener-port': '8201',
        'consul.hashicorp.com/connect-inject-status': 'injected',
        'consul.hashicorp.com/sidecar-proxy-lifecycle-graceful-port': '20601',
      },
      [
        { kind: 'vault-agent', ports: [8201] },
        { kind: 'consul-dataplane', ports: [20601] },
      ],
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      result.standIns.map((s) => s.exited),
      [true, true],
    );
  });

  const leaveAlone: [name: string, entries: Record<string, string>, says: RegExp][] = [
    [
      'native Linkerd (alpha key)',
      {
        'linkerd.io/proxy-version': 'x',
        'config.linkerd.io/proxy-admin-shutdown': 'enabled',
        'config.alpha.linkerd.io/proxy-enable-native-sidecar': 'true',
      },
      /native sidecar .*leaving it to Kubernetes/,
    ],
    [
      'native Linkerd (beta key)',
      { 'linkerd.io/proxy-version': 'x', 'config.beta.linkerd.io/proxy-enable-native-sidecar': 'true' },
      /native sidecar/,
    ],
    [
      'native Linkerd (GA key)',
      { 'linkerd.io/proxy-version': 'x', 'config.linkerd.io/proxy-enable-native-sidecar': 'true' },
      /native sidecar/,
    ],
    [
      'Linkerd without its shutdown endpoint',
      { 'linkerd.io/proxy-version': 'x' },
      /warning: .*linkerd-proxy whose shutdown endpoint is not enabled: the pod will not complete.*proxy-admin-shutdown: enabled/,
    ],
    [
      'Vault pre-populate only',
      { 'vault.hashicorp.com/agent-inject-status': 'injected', 'vault.hashicorp.com/agent-pre-populate-only': 'true' },
      /^(?![\s\S]*vault-agent \(from)/,
    ],
    [
      'Vault without enable-quit',
      { 'vault.hashicorp.com/agent-inject-status': 'injected' },
      /warning: .*vault-agent sidecar without its quit endpoint.*agent-enable-quit: "true"/,
    ],
    ['Dapr not enabled', { 'dapr.io/enabled': 'false' }, /^(?![\s\S]*dapr \(from)/],
    // Each of Go's strconv.ParseBool's false values, which consul-k8s reads the switch with.
    ...['false', '0', 'f', 'F', 'FALSE', 'False'].map((value): [string, Record<string, string>, RegExp] => [
      `Consul with the lifecycle off ("${value}")`,
      { 'consul.hashicorp.com/connect-inject-status': 'injected', 'consul.hashicorp.com/enable-sidecar-proxy-lifecycle': value },
      /leaving it alone/,
    ]),
    // Linkerd reads its native-sidecar keys with strconv.ParseBool.
    ...['1', 'T', 'True'].map((value): [string, Record<string, string>, RegExp] => [
      `native Linkerd ("${value}")`,
      {
        'linkerd.io/proxy-version': 'x',
        'config.linkerd.io/proxy-admin-shutdown': 'enabled',
        'config.linkerd.io/proxy-enable-native-sidecar': value,
      },
      /native sidecar .*leaving it to Kubernetes/,
    ]),
  ];
  for (const [name, entries, says] of leaveAlone) {
    test(`left alone: ${name}`, async () => {
      const kind =
        name.startsWith('native Linkerd') || name.startsWith('Linkerd')
          ? 'linkerd'
          : name.startsWith('Vault')
            ? 'vault-agent'
            : name.startsWith('Dapr')
              ? 'dapr'
              : 'consul-dataplane';
      const result = await withFile(entries, [{ kind }]);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(
        result.standIns[0]?.requests.filter((r) => r.method === 'POST'),
        [],
        'never told to stop',
      );
      assert.match(result.stderr, says);
    });
  }

  test('a bad port annotation and a bad line: exit 125 naming them, and what parsed is still stopped', async () => {
    const result = await pod({
      standIns: [{ kind: 'dapr' }],
      annotations: `${annotations({ 'dapr.io/enabled': 'true', 'vault.hashicorp.com/agent-inject-status': 'injected', 'vault.hashicorp.com/agent-enable-quit': 'true', 'vault.hashicorp.com/agent-cache-listener-port': 'eighty' })}garbage\n`,
      args: job('--pod-annotations', 'ANNOTATIONS', 'true'),
    });
    assert.equal(result.code, 125);
    assert.match(result.stderr, /vault\.hashicorp\.com\/agent-cache-listener-port: "eighty" is not a port/);
    assert.match(result.stderr, /line 5: not key="value"/);
    assert.equal(result.standIns[0]?.exited, true);
  });

  test('an unreadable annotations file: exit 125 naming it', async () => {
    const result = await pod({ args: job('--pod-annotations', '/nonexistent/annotations', 'true') });
    assert.equal(result.code, 125);
    assert.match(result.stderr, /pod annotations "\/nonexistent\/annotations": cannot be read \(ENOENT\)/);
  });
});

/** Go's strconv.ParseBool's true values, which vault-k8s and consul-k8s read their switches with. */
const PARSE_BOOL_ON = ['1', 't', 'T', 'TRUE', 'true', 'True'];

interface Rewritten {
  readonly name: string;
  readonly kind: StandInKind | 'istio';
  /** The pod template's metadata, and the proxy container a user declares (the auth proxies). */
  readonly podMeta: string;
  readonly proxy?: string;
  /** What the kind's injector adds to the pod's annotations. */
  readonly injector?: Record<string, string>;
}

const annotated = (entries: Record<string, string | undefined>): string =>
  `{annotations: ${JSON.stringify(Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined)))}}`;

/** Each kind's Job, with every value of each setting its injector takes as on (unset, where --inject switches it on). */
const REWRITTEN: readonly Rewritten[] = [
  {
    name: 'istio, label sidecar.istio.io/inject: "true"',
    kind: 'istio',
    podMeta: '{labels: {sidecar.istio.io/inject: "true"}}',
    injector: { 'sidecar.istio.io/status': ISTIO_STATUS },
  },
  ...['enabled', 'ingress'].map(
    (value): Rewritten => ({
      name: `linkerd, linkerd.io/inject: ${value}`,
      kind: 'linkerd',
      podMeta: annotated({ 'linkerd.io/inject': value }),
      injector: { 'linkerd.io/proxy-version': 'edge-26.1.1' },
    }),
  ),
  {
    name: 'linkerd, proxy-admin-shutdown: enabled already',
    kind: 'linkerd',
    podMeta: annotated({ 'linkerd.io/inject': 'enabled', 'config.linkerd.io/proxy-admin-shutdown': 'enabled' }),
    injector: { 'linkerd.io/proxy-version': 'edge-26.1.1' },
  },
  ...(['cloud-sql-proxy', 'alloydb-auth-proxy'] as const).map(
    (kind): Rewritten => ({
      name: `${kind}, a declared container`,
      kind,
      podMeta: '{}',
      proxy: `{name: proxy, image: "gcr.io/example/${kind}:2", args: ["p:r:i"]}`,
    }),
  ),
  // Its flags are read by Go's flag package: strconv.ParseBool.
  ...['1', 'T', 'True'].map(
    (value): Rewritten => ({
      name: `cloud-sql-proxy, --quitquitquit=${value} --health-check=${value}`,
      kind: 'cloud-sql-proxy',
      podMeta: '{}',
      proxy: `{name: proxy, image: "gcr.io/example/cloud-sql-proxy:2", args: ["--quitquitquit=${value}", "--health-check=${value}", "p:r:i"]}`,
    }),
  ),
  ...[undefined, ...PARSE_BOOL_ON].map(
    (value): Rewritten => ({
      name: `vault-agent, agent-inject and agent-enable-quit: ${JSON.stringify(value ?? 'unset')}`,
      kind: 'vault-agent',
      podMeta: annotated({ 'vault.hashicorp.com/agent-inject': value ?? 'true', 'vault.hashicorp.com/agent-enable-quit': value }),
      injector: { 'vault.hashicorp.com/agent-inject-status': 'injected' },
    }),
  ),
  ...['y', 'yes', 'true', 't', 'on', '1', 'YES', ' On '].map(
    (value): Rewritten => ({
      name: `dapr, dapr.io/enabled: ${JSON.stringify(value)}`,
      kind: 'dapr',
      podMeta: annotated({ 'dapr.io/enabled': value }),
    }),
  ),
  ...[undefined, ...PARSE_BOOL_ON].map(
    (value): Rewritten => ({
      name: `consul-dataplane, connect-inject and enable-sidecar-proxy-lifecycle: ${JSON.stringify(value ?? 'unset')}`,
      kind: 'consul-dataplane',
      podMeta: annotated({
        'consul.hashicorp.com/connect-inject': value ?? 'true',
        'consul.hashicorp.com/enable-sidecar-proxy-lifecycle': value,
      }),
      injector: { 'consul.hashicorp.com/connect-inject-status': 'injected' },
    }),
  ),
];

describe('each kind of Job rewritten by --inject, run as written', { skip: podsUnavailable() }, () => {
  for (const row of REWRITTEN) {
    test(`${row.name}: the job's code, the sidecar told to quit, no line of a missing Istio`, async () => {
      const manifest = [
        'apiVersion: batch/v1',
        'kind: Job',
        'metadata: {name: j}',
        'spec:',
        '  template:',
        `    metadata: ${row.podMeta}`,
        '    spec:',
        '      restartPolicy: Never',
        '      containers:',
        '      - {name: job, image: x, command: [sh, -c, "exit 3"]}',
        ...(row.proxy === undefined ? [] : [`      - ${row.proxy}`]),
        '',
      ].join('\n');
      const rewritten = await run(['--inject', '-'], { input: manifest });
      assert.equal(rewritten.code, 0, rewritten.stderr);
      const container = containerAsWritten(rewritten.stdout, 'istio-job-run', row.injector ?? {});
      const result = await pod({
        istio: row.kind === 'istio',
        standIns: row.kind === 'istio' ? [] : [{ kind: row.kind }],
        env: { ...POD, ...container.env },
        files: container.files,
        args: [WRAPPER, ...container.argv.slice(1)],
      });
      assert.equal(result.code, 3, `${result.stderr}\n${rewritten.stdout}`);
      if (row.kind === 'istio')
        assert.ok(
          result.istio.some((r) => r.path === '/quitquitquit' && r.status === 200),
          result.stderr,
        );
      else assert.equal(result.standIns[0]?.exited, true, `${result.stderr}\n${rewritten.stdout}`);
      assert.doesNotMatch(result.stderr, /set but empty|warning/);
    });
  }
});

describe('a Job of the Cloud SQL proxy operator rewritten by --inject, run as written', { skip: podsUnavailable() }, () => {
  // The operator's example shape: a folded script, the job, then a loop that sends each of the operator's quit
  // URLs; the operator adds the proxy container and the variable when it admits the pod, not in the manifest.
  const variable = 'CSQL_PROXY_QUIT_URLS';
  const manifest = [
    'apiVersion: batch/v1',
    'kind: Job',
    'metadata: {name: nightly-export}',
    'spec:',
    '  template:',
    '    metadata: {labels: {app: nightly-export}}',
    '    spec:',
    '      restartPolicy: Never',
    '      containers:',
    '      - name: export',
    '        image: registry.example/export:3',
    '        command:',
    '        - sh',
    '        - -c',
    '        - >',
    '          ls /nightly-export',
    `          for url in $${variable} ; do`,
    '            curl -s $url',
    '          done',
    '',
  ].join('\n');

  test("the loop over the operator's variable taken out, and the wrapper quits every proxy it lists", async () => {
    const rewritten = await run(['--inject', '-'], { input: manifest });
    assert.equal(rewritten.code, 0, rewritten.stderr);
    assert.doesNotMatch(rewritten.stdout, /for url in/);
    const container = containerAsWritten(rewritten.stdout, 'istio-job-run', {});
    const result = await pod({
      standIns: [{ kind: 'cloud-sql-proxy' }, { kind: 'cloud-sql-proxy', ports: [9190, 9191] }],
      env: { ...POD, ...container.env, [variable]: 'http://localhost:9091/quitquitquit http://localhost:9191/quitquitquit' },
      files: container.files,
      args: [WRAPPER, ...container.argv.slice(1)],
    });
    // GNU ls: 2 when a file named is not there.
    assert.equal(result.code, 2, `${result.stderr}\n${rewritten.stdout}`);
    assert.match(result.stderr, /ls: cannot access '\/nightly-export'/);
    for (const standIn of result.standIns) {
      assert.deepEqual(
        standIn.requests.filter((request) => request.path === '/quitquitquit').map((request) => [request.method, request.status]),
        [['POST', 200]],
        result.stderr,
      );
      assert.equal(standIn.exited, true);
    }
    assert.match(result.stderr, /sidecars: cloud-sql-proxy \(from CSQL_PROXY_QUIT_URLS\)/);
  });
});
