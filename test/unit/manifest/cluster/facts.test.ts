// The readings of a cluster's objects (src/manifest/cluster/facts.ts) on recorded objects of each shape: kubelets
// and the oldest of them, istiods and their ENABLE_NATIVE_SIDECARS, linkerd-config's values, the operator's image.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  imageTag,
  istiodsOf,
  kubeletsOf,
  linkerdOf,
  linkerdRelease,
  minorOf,
  namespacesOf,
  oldestKubelet,
  operatorsOf,
  releaseOf,
} from '../../../../src/manifest/cluster/facts.ts';
import { cloudSqlProxyOperator, istiod, linkerdConfig, namespace, node, plainDeployment } from '../../../support/cluster-objects.ts';

describe('kubelets', () => {
  test("each node's kubeletVersion, and the oldest minor (the first by name among equals)", () => {
    const kubelets = kubeletsOf([
      node('pool-a-1', 'v1.33.5-gke.1080000'),
      node('pool-b-2', 'v1.32.9-gke.1234000'),
      node('pool-b-1', 'v1.32.11-gke.1000'),
      node('edge-1', 'v1.34.1+k3s1'),
    ]);
    assert.deepEqual(kubelets[0], { node: 'pool-a-1', version: 'v1.33.5-gke.1080000', minor: [1, 33] });
    assert.equal(oldestKubelet(kubelets)?.node, 'pool-b-1');
  });

  test('a version it cannot read is kept as written, without a minor, and is never the oldest', () => {
    const kubelets = kubeletsOf([node('odd', 'unknown'), node('fine', 'v1.31.0')]);
    assert.deepEqual(kubelets[0], { node: 'odd', version: 'unknown' });
    assert.equal(oldestKubelet(kubelets)?.node, 'fine');
    assert.equal(oldestKubelet(kubeletsOf([node('odd', '')])), undefined);
  });

  test('minor versions as kubelets and users write them', () => {
    assert.deepEqual(minorOf('v1.9.3'), [1, 9]);
    assert.deepEqual(minorOf('1.33'), [1, 33]);
    assert.equal(minorOf('1.33x'), undefined);
  });
});

describe('istiod', () => {
  test('the revision, the release of the pilot image and ENABLE_NATIVE_SIDECARS as set', () => {
    const [found] = istiodsOf([plainDeployment('shop', 'web'), istiod('1.28.1', { nativeSidecars: 'false' })]);
    assert.deepEqual(found, {
      namespace: 'istio-system',
      name: 'istiod',
      revision: 'default',
      image: 'docker.io/istio/pilot:1.28.1',
      version: '1.28.1',
      nativeSidecars: { value: 'false' },
    });
  });

  test('a revision of its own, the distroless tag, the variable unset', () => {
    const [found] = istiodsOf([istiod('1.29.0-distroless', { revision: 'canary' })]);
    assert.equal(found?.name, 'istiod-canary');
    assert.equal(found?.revision, 'canary');
    assert.equal(found?.version, '1.29.0');
    assert.equal(found?.nativeSidecars, undefined);
  });

  test('tags and digests', () => {
    assert.equal(imageTag('docker.io/istio/pilot:1.28.1@sha256:0123'), '1.28.1');
    assert.equal(imageTag('localhost:5000/istio/pilot'), undefined);
    assert.equal(releaseOf('latest'), undefined);
    assert.equal(releaseOf('v1.7.0'), '1.7.0');
  });
});

describe('linkerd-config', () => {
  test('linkerdVersion and proxy.nativeSidecar from its values, wherever it is installed', () => {
    assert.deepEqual(linkerdOf([linkerdConfig('enterprise-2.20.0', true, 'mesh')]), [
      { namespace: 'mesh', version: 'enterprise-2.20.0', nativeSidecar: true },
    ]);
    assert.deepEqual(linkerdOf([linkerdConfig('stable-2.14.10', undefined)]), [{ namespace: 'linkerd', version: 'stable-2.14.10' }]);
  });

  test('values that are not YAML, or none, say so', () => {
    const broken = { ...linkerdConfig('edge-26.5.2', true), data: { values: 'proxy: [' } };
    assert.match(linkerdOf([broken])[0]?.problem ?? '', /^its `values` are not YAML/);
    assert.equal(linkerdOf([{ ...broken, data: {} }])[0]?.problem, 'its data has no `values`');
  });

  test('the 2.x release of each way Linkerd spells a version; none for an edge release', () => {
    assert.equal(linkerdRelease('enterprise-2.20.0'), '2.20');
    assert.equal(linkerdRelease('stable-2.14.10'), '2.14');
    assert.equal(linkerdRelease('2.20'), '2.20');
    assert.equal(linkerdRelease('edge-26.5.2'), undefined);
  });
});

describe('cloud-sql-proxy-operator', () => {
  test('its Deployment by the image of its manager, the release from the tag', () => {
    assert.deepEqual(operatorsOf([istiod('1.28.1'), cloudSqlProxyOperator('1.7.0')]), [
      {
        namespace: 'cloud-sql-proxy-operator-system',
        name: 'cloud-sql-proxy-operator-controller-manager',
        image: 'gcr.io/cloud-sql-connectors/cloud-sql-proxy-operator:1.7.0',
        version: '1.7.0',
      },
    ]);
  });
});

test('namespaces: their labels and annotations', () => {
  assert.deepEqual(namespacesOf([namespace('batch', { 'istio-injection': 'enabled' }, { 'linkerd.io/inject': 'enabled' })]), [
    {
      name: 'batch',
      labels: { 'kubernetes.io/metadata.name': 'batch', 'istio-injection': 'enabled' },
      annotations: { 'linkerd.io/inject': 'enabled' },
    },
  ]);
});
