// --admission-policy under a cluster profile: a sidecar the profile's install makes native (Linkerd 2.20, Istio's
// auto on 1.33+ nodes) is left alone, as --check leaves it; where the profile keeps it classic, the wrapper as
// before; without a profile the printed policy is the same bytes as ever.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { parseKubernetes, parseMesh, type Profile } from '../../../../src/config/profile.ts';
import { admissionPolicy, type PolicySettings } from '../../../../src/manifest/inject/policy.ts';
import { admit } from '../../../support/admission.ts';

const SETTINGS = { image: 'registry.example/istio-job-run:9.9.9', version: 'v1', native: false, imageVolume: false } as const;

function profile(kubernetes: string, ...meshes: string[]): Profile {
  const version = parseKubernetes(kubernetes);
  assert.ok(typeof version !== 'string');
  return { kubernetes: version, meshes: meshes.map((text) => parseMesh(text)).filter((mesh) => typeof mesh !== 'string') };
}

function outcome(settings: PolicySettings, annotations: Record<string, string>): string {
  const [policy] = parseAllDocuments(admissionPolicy(settings)).map((document) => document.toJS()) as [Parameters<typeof admit>[0]];
  const job = parse(
    `apiVersion: batch/v1\nkind: Job\nmetadata: {name: task, namespace: jobs}\nspec:\n  template:\n    metadata:\n      annotations: ${JSON.stringify(annotations)}\n    spec:\n      restartPolicy: Never\n      containers: [{name: job, image: x, command: ["./task.sh"]}]\n`,
  );
  const admitted = admit(policy, { operation: 'CREATE', object: job, namespace: { metadata: { name: 'jobs' } } });
  if (admitted.kind === 'skipped') return `skipped: ${admitted.condition}`;
  // A check that fails leaves the patch empty and names itself in the variable `skipped`.
  const skipped = admitted.kind === 'patched' ? admitted.variables.get('skipped') : '';
  return skipped === '' || skipped === undefined ? admitted.kind : `skipped: ${String(skipped)}`;
}

describe('the policy under a profile', () => {
  const linkerd = { 'linkerd.io/inject': 'enabled' };
  const istio = { 'sidecar.istio.io/inject': 'true' };
  test('no profile: the same bytes as ever, and the wrapper for a Linkerd or Istio pod', () => {
    const plain = { ...SETTINGS, namespaces: new Map() };
    assert.equal(admissionPolicy(plain), admissionPolicy({ ...plain }));
    assert.equal(outcome(plain, linkerd), 'patched');
    assert.equal(outcome(plain, istio), 'patched');
  });
  test('a sidecar the install makes native is left alone; one it keeps classic is wrapped', () => {
    const stated = (given: Profile): PolicySettings => ({ ...SETTINGS, namespaces: new Map(), profile: given });
    assert.match(outcome(stated(profile('1.31', 'linkerd=2.20')), linkerd), /^skipped: /);
    assert.equal(outcome(stated(profile('1.31', 'linkerd=2.19')), linkerd), 'patched');
    assert.equal(
      outcome(stated(profile('1.31', 'linkerd=2.20')), { ...linkerd, 'config.linkerd.io/proxy-enable-native-sidecar': 'false' }),
      'patched',
    );
    assert.match(outcome(stated(profile('1.33', 'istio=1.28')), istio), /^skipped: /);
    assert.equal(outcome(stated(profile('1.32', 'istio=1.30')), istio), 'patched');
  });
});
