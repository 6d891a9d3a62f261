// The cluster profile: --kubernetes and --mesh values, and the form each kind's install gives a pod that does not
// say, one row per version boundary of each install's rule (src/config/kinds.ts, `install`).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { kindNamed, type KindName, SIDECAR_KINDS } from '../../../src/config/kinds.ts';
import {
  configText,
  installForm,
  MESH_NAMES,
  parseKubernetes,
  parseMesh,
  type Profile,
  whyNotNative,
} from '../../../src/config/profile.ts';

/** A profile from the flags' own values. */
function profile(kubernetes: string | undefined, ...meshes: string[]): Profile {
  const parsed = meshes.map((text) => {
    const mesh = parseMesh(text);
    assert.ok(typeof mesh !== 'string', String(mesh));
    return mesh;
  });
  const version = kubernetes === undefined ? undefined : parseKubernetes(kubernetes);
  assert.ok(typeof version !== 'string');
  return { ...(version === undefined ? {} : { kubernetes: version }), meshes: parsed };
}

describe('values', () => {
  test('the mesh names come from the kinds table, with the operator', () => {
    assert.deepEqual(
      MESH_NAMES,
      (SIDECAR_KINDS as readonly { install?: { name: string } }[]).flatMap((kind) =>
        kind.install === undefined ? [] : [kind.install.name],
      ),
    );
    assert.ok(MESH_NAMES.includes('istio') && MESH_NAMES.includes('linkerd'));
    for (const name of MESH_NAMES) assert.ok(typeof parseMesh(`${name}=1.0`) !== 'string', name);
  });
  test('--kubernetes X.Y', () => {
    assert.deepEqual(parseKubernetes('1.31'), [1, 31]);
    assert.deepEqual(parseKubernetes('v1.33.2'), [1, 33]);
    for (const bad of ['1', '2.1', 'latest', '1.31-gke', ''])
      assert.match(String(parseKubernetes(bad)), /is not a Kubernetes minor version \(X\.Y/, bad);
  });
  test('--mesh NAME=VERSION[:native|classic]', () => {
    assert.deepEqual(parseMesh('linkerd=2.20'), { name: 'linkerd', version: [2, 20] });
    assert.deepEqual(parseMesh('istio=1.28.1:classic'), { name: 'istio', version: [1, 28], setting: 'classic' });
    const cases: [string, RegExp][] = [
      ['linkerd', /is not NAME=VERSION\[:native\|classic\]/],
      ['kuma=2.14', new RegExp(`"kuma" is not a NAME .*\\(${MESH_NAMES.join(', ')}\\)`)],
      ['istio=new', /"new" is not a release of istio/],
      ['istio=1.28:auto', /"auto" is not a setting of istio \(native or classic\)/],
      ['vault-agent=1.7:native', /vault-agent has no native mode \(.*vault-k8s issue 620/],
      ['dapr=1.16:native', /dapr has no native mode/],
    ];
    for (const [text, message] of cases) assert.match(String(parseMesh(text)), message, text);
    assert.deepEqual(parseMesh('dapr=1.16:classic'), { name: 'dapr', version: [1, 16], setting: 'classic' });
  });
});

describe('the form each install gives a pod that does not say', () => {
  const form = (kind: KindName, given: Profile): string | undefined => installForm(kindNamed(kind), given)?.form;
  test('a profile that does not name the install says nothing', () => {
    assert.equal(installForm(kindNamed('istio'), profile('1.33')), undefined);
    assert.equal(installForm(kindNamed('linkerd'), profile('1.33', 'istio=1.28')), undefined);
  });
  test('Istio: auto from 1.27, native only where every node is 1.33+', () => {
    const rows: [string | undefined, string, string][] = [
      ['1.33', 'istio=1.26', 'classic'],
      ['1.33', 'istio=1.27', 'native'],
      ['1.32', 'istio=1.27', 'classic'],
      ['1.32', 'istio=1.30', 'classic'],
      ['1.34', 'istio=1.31', 'native'],
      [undefined, 'istio=1.28', 'classic'],
      ['1.29', 'istio=1.28:native', 'native'],
      ['1.33', 'istio=1.28:classic', 'classic'],
      ['1.33', 'istio=1.22:native', 'native'],
    ];
    for (const [kubernetes, mesh, expected] of rows)
      assert.equal(form('istio', profile(kubernetes, mesh)), expected, `${kubernetes} ${mesh}`);
    const floor = installForm(kindNamed('istio'), profile('1.32', 'istio=1.30'));
    assert.equal(floor?.floor, true);
    assert.match(floor?.why ?? '', /istio 1\.30 injects it native only where every node is 1\.33\+, and the oldest is 1\.32/);
  });
  test('Linkerd: native by default from 2.20, with no node check', () => {
    assert.equal(form('linkerd', profile('1.31', 'linkerd=2.19')), 'classic');
    assert.equal(form('linkerd', profile('1.31', 'linkerd=2.20')), 'native');
    assert.equal(form('linkerd', profile(undefined, 'linkerd=2.20')), 'native');
    assert.equal(form('linkerd', profile('1.31', 'linkerd=2.20:classic')), 'classic');
    assert.equal(form('linkerd', profile('1.31', 'linkerd=2.18:native')), 'native');
  });
  test("the Cloud SQL proxy operator: native from 1.6 where the API server (so every node's floor) is 1.29+", () => {
    const rows: [string | undefined, string, string][] = [
      ['1.29', 'cloud-sql-proxy-operator=1.5', 'classic'],
      ['1.29', 'cloud-sql-proxy-operator=1.6', 'native'],
      ['1.28', 'cloud-sql-proxy-operator=1.6', 'classic'],
      [undefined, 'cloud-sql-proxy-operator=1.6.3', 'classic'],
    ];
    for (const [kubernetes, mesh, expected] of rows)
      assert.equal(form('cloud-sql-proxy', profile(kubernetes, mesh)), expected, `${kubernetes} ${mesh}`);
  });
  test('Vault Agent, Consul dataplane and Dapr: classic on every version', () => {
    for (const [kind, mesh] of [
      ['vault-agent', 'vault-agent=1.7'],
      ['consul-dataplane', 'consul-dataplane=1.8'],
      ['dapr', 'dapr=1.16'],
    ] as const) {
      assert.equal(form(kind, profile('1.36', mesh)), 'classic', kind);
      assert.match(whyNotNative(kindNamed(kind), profile('1.36', mesh)) ?? '', /has no native mode/, kind);
    }
  });
  test('whether --inject can make a kind native: every node 1.29+, a switch the release reads, or a declared container', () => {
    assert.match(whyNotNative(kindNamed('istio'), undefined) ?? '', /--kubernetes does not say that every node is 1\.29\+/);
    assert.match(whyNotNative(kindNamed('istio'), profile('1.28')) ?? '', /the oldest node is 1\.28, and native sidecars need 1\.29\+/);
    assert.equal(whyNotNative(kindNamed('istio'), profile('1.29')), undefined);
    assert.match(
      whyNotNative(kindNamed('istio'), profile('1.29', 'istio=1.23')) ?? '',
      /istio 1\.23 does not read sidecar\.istio\.io\/nativeSidecar \(1\.24\+\)/,
    );
    assert.equal(whyNotNative(kindNamed('linkerd'), profile('1.31', 'linkerd=2.20')), undefined);
    assert.match(
      whyNotNative(kindNamed('linkerd'), profile('1.31', 'linkerd=2.19')) ?? '',
      /does not read config\.linkerd\.io\/proxy-enable-native-sidecar/,
    );
    for (const kind of ['cloud-sql-proxy', 'alloydb-auth-proxy'] as const)
      assert.equal(whyNotNative(kindNamed(kind), profile('1.29')), undefined);
  });
  test('every install names the source its rule follows', () => {
    for (const kind of SIDECAR_KINDS) {
      if (!('install' in kind)) continue;
      assert.match(kind.install.source, /\.go, \w+|issue \d+/, kind.name);
    }
  });
});

describe('the profile as the config file writes it', () => {
  test('kubernetes quoted, then each mesh, read back the same by the file reader', async () => {
    const { readConfig } = await import('../../../src/manifest/cli/config-file.ts');
    const stated = profile('1.30', 'linkerd=2.20', 'istio=1.28.1:classic');
    const text = configText(stated);
    assert.equal(text, 'kubernetes: "1.30"\nmesh:\n  - "linkerd=2.20"\n  - "istio=1.28:classic"\n');
    const read = readConfig('p.yaml', text);
    assert.ok(typeof read !== 'string');
    assert.deepEqual(
      profile(read.values.get('--kubernetes')?.[0]?.value, ...(read.values.get('--mesh') ?? []).map(({ value }) => value)),
      stated,
    );
    assert.equal(configText({ meshes: [] }), '');
  });
});
