// --inject under a cluster profile, native sidecars first: an injected sidecar made native by its switch, a
// declared auth proxy moved to initContainers (restartPolicy: Always, a startupProbe on its readiness where its
// release has one), the wrapper where native cannot be, --wrapper and --native; every result checked clean under
// the same profile, and a second --inject writing the same bytes.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { parseKubernetes, parseMesh, type Profile } from '../../../../src/config/profile.ts';
import { check } from '../../../../src/manifest/check/rules.ts';
import { messageOf } from '../../../../src/manifest/check/finding.ts';
import { inject, WRAPPER_PATH } from '../../../../src/manifest/inject/inject.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { source } from '../../../support/manifest.ts';
import { indent, job as jobOf } from '../check/cases.ts';

await loadShellParser();
const IMAGE = 'registry.example/istio-job-run:9.9.9';

function profile(kubernetes: string | undefined, ...meshes: string[]): Profile {
  const version = kubernetes === undefined ? undefined : parseKubernetes(kubernetes);
  return {
    ...(typeof version === 'object' ? { kubernetes: version } : {}),
    meshes: meshes.map((text) => parseMesh(text)).filter((mesh) => typeof mesh !== 'string'),
  };
}

/** A Job whose pod template has ANNOTATIONS, its job container, the containers after it and its init containers. */
function job(annotations: string, rest = '', inits = ''): string {
  const dedent = (text: string): string => text.replace(/^ {6}/gm, '');
  const spec = [
    'restartPolicy: Never',
    ...(inits === '' ? [] : ['initContainers:', dedent(inits)]),
    'containers:',
    '- name: job',
    '  image: registry.example/task:1',
    '  command: ["./task.sh"]',
    ...(rest === '' ? [] : [dedent(rest)]),
  ].join('\n');
  return jobOf(spec, annotations === '' ? {} : { podMeta: `annotations:\n${indent(annotations, 2)}` });
}

type Settings = { profile?: Profile; native?: boolean; wrapper?: boolean };

/** --inject's text and notes, or its problems. */
function run(text: string, settings: Settings): { text?: string; notes?: readonly string[]; problems?: readonly string[] } {
  const result = inject(source(text), { image: IMAGE, native: settings.native ?? false, ...settings });
  return result.kind === 'done' ? { text: result.text, notes: result.notes } : { problems: result.problems };
}

/** The text --inject writes, checked clean (no error, no warning) under the same profile, and idempotent. */
function rewritten(text: string, settings: Settings): string {
  const result = run(text, settings);
  assert.ok(result.text !== undefined, (result.problems ?? []).join('\n'));
  const after = result.text as string;
  const left = check(source(after), {
    namespaces: new Map(),
    ...(settings.profile === undefined ? {} : { profile: settings.profile }),
  }).filter((finding) => finding.level !== 'info');
  assert.deepEqual(
    left.map((finding) => `${finding.rule}: ${messageOf(finding)}`),
    [],
    after,
  );
  assert.equal(run(after, settings).text, after, 'a second --inject leaves it as it is');
  return after;
}

/** A container as parse() gives it. */
type Container = { name: string; startupProbe: { httpGet: unknown } };
/** The pod template as parse() gives it: what the tests read of it. */
interface Template {
  metadata: { annotations: Record<string, string> };
  spec: { containers: Container[]; initContainers: Container[] };
}
const podOf = (text: string): Template => (parse(text) as { spec: { template: Template } }).spec.template;

const ISTIO = 'sidecar.istio.io/inject: "true"';
const LINKERD = 'linkerd.io/inject: enabled';
const PROXY_V2 = [
  '      - name: cloud-sql-proxy',
  '        # the proxy',
  '        image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1',
  '        args:',
  '          - "--port=5432"',
  '          - "project:region:db"',
  '        resources: {requests: {memory: "2Gi"}}',
].join('\n');
const PROXY_V1 = [
  '      - name: cloudsql-proxy',
  '        image: gcr.io/cloudsql-docker/gce-proxy:1.33.2',
  '        command: ["/cloud_sql_proxy", "-instances=project:region:db=tcp:5432"]',
].join('\n');
const ALLOYDB = [
  '      - name: alloydb',
  '        image: gcr.io/alloydb-connectors/alloydb-auth-proxy:1.10.0',
  '        args: ["--http-port=9191", "projects/p/locations/l/clusters/c/instances/i"]',
].join('\n');

describe('an injected sidecar made native by its switch', () => {
  test('Istio where every node is 1.29+: sidecar.istio.io/nativeSidecar, no wrapper', () => {
    const after = rewritten(job(ISTIO), { profile: profile('1.29') });
    assert.equal(podOf(after).metadata.annotations['sidecar.istio.io/nativeSidecar'], 'true');
    assert.ok(!after.includes(WRAPPER_PATH));
    assert.equal(after, job(`${ISTIO}\nsidecar.istio.io/nativeSidecar: "true"`));
  });
  test('Linkerd: the GA key, where the release reads it; an older one, the wrapper', () => {
    const after = rewritten(job(LINKERD), { profile: profile('1.31') });
    assert.equal(podOf(after).metadata.annotations['config.linkerd.io/proxy-enable-native-sidecar'], 'true');
    assert.ok(rewritten(job(LINKERD), { profile: profile('1.31', 'linkerd=2.19') }).includes(WRAPPER_PATH));
    // Linkerd 2.20 makes it native already: nothing to do.
    assert.equal(rewritten(job(LINKERD), { profile: profile('1.31', 'linkerd=2.20') }), job(LINKERD));
  });
  test('a pod that opts out keeps its choice: the wrapper; --native refuses it', () => {
    const optOut = job(`${LINKERD}\nconfig.linkerd.io/proxy-enable-native-sidecar: "false"`);
    assert.ok(rewritten(optOut, { profile: profile('1.33') }).includes(WRAPPER_PATH));
    assert.match(
      (run(optOut, { profile: profile('1.33'), native: true }).problems ?? []).join('\n'),
      /--native: .*the pod sets config\.linkerd\.io\/proxy-enable-native-sidecar: "false": only the wrapper stops it/,
    );
  });
});

describe('a declared auth proxy moved to initContainers', () => {
  test('Cloud SQL v2: restartPolicy Always, its readiness served to kubelet and probed, its place in containers gone', () => {
    const after = rewritten(job('', PROXY_V2), { profile: profile('1.29') });
    const spec = podOf(after).spec;
    assert.deepEqual(
      spec.containers.map((container) => container.name),
      ['job'],
    );
    assert.deepEqual(spec.initContainers, [
      {
        name: 'cloud-sql-proxy',
        image: 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1',
        args: ['--port=5432', 'project:region:db', '--health-check', '--http-address=0.0.0.0'],
        resources: { requests: { memory: '2Gi' } },
        restartPolicy: 'Always',
        startupProbe: { httpGet: { path: '/startup', port: 9090 }, periodSeconds: 1, failureThreshold: 60 },
      },
    ]);
    assert.ok(!after.includes(WRAPPER_PATH));
  });
  test('Cloud SQL v1 (no quit endpoint, which no wrapper can stop): moved, with no probe', () => {
    const after = rewritten(job('', PROXY_V1), { profile: profile('1.31') });
    assert.deepEqual(podOf(after).spec.initContainers, [
      {
        name: 'cloudsql-proxy',
        image: 'gcr.io/cloudsql-docker/gce-proxy:1.33.2',
        command: ['/cloud_sql_proxy', '-instances=project:region:db=tcp:5432'],
        restartPolicy: 'Always',
      },
    ]);
    // Without a profile it is refused, as it always was.
    assert.match((run(job('', PROXY_V1), {}).problems ?? []).join('\n'), /without a quit endpoint/);
  });
  test('AlloyDB on its own health port, before the init containers already there', () => {
    const inits = '      - name: migrate\n        image: registry.example/migrate:1';
    const after = rewritten(job('', ALLOYDB, inits), { profile: profile('1.30') });
    const spec = podOf(after).spec;
    assert.deepEqual(
      spec.initContainers.map((container) => container.name),
      ['alloydb', 'migrate'],
    );
    assert.deepEqual(spec.initContainers[0]?.startupProbe.httpGet, { path: '/startup', port: 9191 });
  });
  test("with the job's own quit of it taken out", () => {
    const quitting = job('', PROXY_V2.replace('"--port=5432"', '"--quitquitquit"')).replace(
      'command: ["./task.sh"]',
      'command: ["sh", "-c", "./task.sh && curl -X POST http://localhost:9091/quitquitquit"]',
    );
    const result = run(quitting, { profile: profile('1.29') });
    assert.ok(result.text !== undefined, (result.problems ?? []).join('\n'));
    assert.ok(!result.text.includes('curl'), result.text);
    assert.match(
      (result.notes ?? []).join('\n'),
      /took out the script's own quit \(line \d+\): kubelet stops the native sidecar after the job/,
    );
    rewritten(quitting, { profile: profile('1.29') });
  });
});

describe('the wrapper where native cannot be', () => {
  test('a node below 1.29, a kind with no native mode, --wrapper: the wrapper; --native refuses, saying why', () => {
    const vault = job('vault.hashicorp.com/agent-inject: "true"');
    const cases: [string, Settings, RegExp][] = [
      [job(ISTIO), { profile: profile('1.28') }, /the oldest node is 1\.28, and native sidecars need 1\.29\+/],
      [vault, { profile: profile('1.36', 'vault-agent=1.7') }, /the vault-agent has no native mode/],
      [job('dapr.io/enabled: "true"'), { profile: profile('1.36') }, /the daprd has no native mode/],
      [job(ISTIO), { profile: profile('1.33'), wrapper: true }, /./],
    ];
    for (const [text, settings, why] of cases) {
      assert.ok(rewritten(text, settings).includes(WRAPPER_PATH), text);
      if (settings.wrapper === true) continue;
      assert.match((run(text, { ...settings, native: true }).problems ?? []).join('\n'), why);
    }
  });
  test("without a profile, --native adds Istio's annotation and leaves the others as it always did", () => {
    assert.ok(rewritten(job(ISTIO), { native: true }).includes('sidecar.istio.io/nativeSidecar: "true"'));
    assert.equal(run(job(LINKERD), { native: true }).text, job(LINKERD));
  });
});
