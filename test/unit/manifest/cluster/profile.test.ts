// The profile read from a cluster's objects (src/manifest/cluster/profile.ts) for each shape an install takes, and
// its config file read back by the profile model's reader (--check --config FILE) as the same profile; what cannot
// be read is a note, never a guess.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Profile } from '../../../../src/config/profile.ts';
import type { KubeObject } from '../../../../src/manifest/cluster/facts.ts';
import { profileFile, profileOf, readProfile } from '../../../../src/manifest/cluster/profile.ts';
import { parseFlags } from '../../../../src/manifest/cli/flags.ts';
import { cloudSqlProxyOperator, istiod, linkerdConfig, node } from '../../../support/cluster-objects.ts';

const cluster = (nodes: KubeObject[], deployments: KubeObject[] = [], configmaps: KubeObject[] = []) =>
  new Map<string, readonly KubeObject[]>([
    ['nodes', nodes],
    ['deployments.apps', deployments],
    ['configmaps', configmaps],
  ]);

/** The profile --check reads from TEXT as its config file. */
function readBack(text: string): Profile | undefined {
  const files = { cwd: '/repo', read: (path: string) => (path === '/repo/p.yaml' ? text : undefined), exists: () => true };
  const request = parseFlags(['--check', 'job.yaml', '--config', '/repo/p.yaml'], {}, files);
  assert.equal(request.kind, 'check', JSON.stringify(request));
  return 'profile' in request ? request.profile : undefined;
}

/** Reads the profile of OBJECTS and checks that its file reads back as the same profile. */
function roundTrip(objects: ReturnType<typeof cluster>) {
  const read = readProfile(objects);
  const file = profileFile(read, undefined);
  const back = readBack(file);
  const profile = profileOf(read);
  assert.deepEqual(back, profile.kubernetes === undefined && profile.meshes.length === 0 ? undefined : profile, file);
  return { read, profile, file };
}

describe('Istio', () => {
  const nodes = [node('a', 'v1.33.5'), node('b', 'v1.34.1')];
  for (const [value, mesh] of [
    [undefined, { name: 'istio', version: [1, 27] }],
    ['auto', { name: 'istio', version: [1, 27] }],
    ['true', { name: 'istio', version: [1, 27], setting: 'native' }],
    ['false', { name: 'istio', version: [1, 27], setting: 'classic' }],
  ] as const)
    test(`ENABLE_NATIVE_SIDECARS ${value ?? 'unset'}: ${JSON.stringify(mesh)}`, () => {
      const { profile, read } = roundTrip(cluster(nodes, [istiod('1.27.3', value === undefined ? {} : { nativeSidecars: value })]));
      assert.deepEqual(profile, { kubernetes: [1, 33], meshes: [mesh] });
      assert.deepEqual(read.notes, []);
    });

  test('a value Istio does not take, or one from valueFrom: the release alone, and a note', () => {
    const odd = readProfile(cluster(nodes, [istiod('1.28.0', { nativeSidecars: 'TRUE' })]));
    assert.deepEqual(profileOf(odd).meshes, [{ name: 'istio', version: [1, 28] }]);
    assert.deepEqual(odd.notes, [
      'istiod istio-system/istiod: ENABLE_NATIVE_SIDECARS is "TRUE", not true, false or auto: the release\'s default is written; ' +
        'state the setting with --mesh istio=X.Y:native or :classic',
    ]);
    const from = istiod('1.28.0');
    const container = (from.spec as { template: { spec: { containers: { env: object[] }[] } } }).template.spec.containers[0];
    container?.env.push({ name: 'ENABLE_NATIVE_SIDECARS', valueFrom: { configMapKeyRef: { name: 'istiod-settings', key: 'native' } } });
    assert.deepEqual(readProfile(cluster(nodes, [from])).notes, [
      "istiod istio-system/istiod: ENABLE_NATIVE_SIDECARS is set from valueFrom, which is not read: the release's default is " +
        'written; state the setting with --mesh istio=X.Y:native or :classic',
    ]);
  });

  test('an image without a release tag: no Istio in the profile, and a note saying how to state it', () => {
    const untagged = istiod('1.28.0');
    const container = (untagged.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0];
    if (container !== undefined) container.image = 'registry.example/mirror/pilot@sha256:4f6a';
    const { profile, read } = roundTrip(cluster(nodes, [untagged]));
    assert.deepEqual(profile.meshes, []);
    assert.deepEqual(read.notes, [
      'istiod istio-system/istiod: its image registry.example/mirror/pilot@sha256:4f6a has no release tag: state it with --mesh istio=X.Y',
    ]);
  });
});

describe('Linkerd', () => {
  test('proxy.nativeSidecar true or false is the setting; unset leaves it to the release', () => {
    const nodes = [node('a', 'v1.31.2')];
    assert.deepEqual(roundTrip(cluster(nodes, [], [linkerdConfig('enterprise-2.20.0', false)])).profile.meshes, [
      { name: 'linkerd', version: [2, 20], setting: 'classic' },
    ]);
    assert.deepEqual(roundTrip(cluster(nodes, [], [linkerdConfig('stable-2.14.10', undefined)])).profile.meshes, [
      { name: 'linkerd', version: [2, 14] },
    ]);
  });

  test('an edge release has no 2.x number: left out, with a note naming the setting to state', () => {
    const { profile, read } = roundTrip(cluster([node('a', 'v1.31.2')], [], [linkerdConfig('edge-26.5.2', true)]));
    assert.deepEqual(profile.meshes, []);
    assert.deepEqual(read.notes, [
      'linkerd-config in linkerd (linkerdVersion edge-26.5.2, proxy.nativeSidecar true): not a 2.x release (an edge release?): ' +
        'state it with --mesh linkerd=2.X:native',
    ]);
  });
});

test('the operator: the release of its image', () => {
  const { profile } = roundTrip(cluster([node('a', 'v1.30.4-eks-a737599')], [cloudSqlProxyOperator('1.6.2')]));
  assert.deepEqual(profile, { kubernetes: [1, 30], meshes: [{ name: 'cloud-sql-proxy-operator', version: [1, 6] }] });
});

test('no node that reports a kubelet, no install: an empty profile, said so', () => {
  const { read, file } = roundTrip(cluster([node('odd', '')]));
  assert.deepEqual(read.notes, [
    'node odd: its kubeletVersion "" is not a version: left out',
    'no node reports its kubelet: state the oldest with --kubernetes X.Y',
  ]);
  assert.match(file, /^# no mesh, and no operator that injects sidecars, found$/m);
});
