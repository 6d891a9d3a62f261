// Which injectors a namespace's labels and annotations switch on (src/manifest/cluster/doctor.ts, injectedBy), by
// the namespace rules of the kinds table: Istio's two webhooks, Linkerd's annotation.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kindNamed } from '../../../../src/config/kinds.ts';
import { injectedBy } from '../../../../src/manifest/cluster/doctor.ts';

const ns = (labels: Record<string, string>, annotations: Record<string, string> = {}) => ({ name: 'batch', labels, annotations });

test('Istio: istio-injection=enabled, or istio.io/rev where istio-injection is not there at all', () => {
  const istio = kindNamed('istio');
  assert.equal(injectedBy(istio, ns({ 'istio-injection': 'enabled' })), 'label istio-injection=enabled');
  assert.equal(injectedBy(istio, ns({ 'istio.io/rev': 'canary' })), 'label istio.io/rev=canary');
  assert.equal(injectedBy(istio, ns({ 'istio-injection': 'disabled', 'istio.io/rev': 'canary' })), undefined);
  assert.equal(injectedBy(istio, ns({ 'istio-injection': 'true' })), undefined);
  assert.equal(injectedBy(istio, ns({}, { 'istio-injection': 'enabled' })), undefined);
});

test('Linkerd: the annotation linkerd.io/inject enabled or ingress, never a label', () => {
  const linkerd = kindNamed('linkerd');
  assert.equal(injectedBy(linkerd, ns({}, { 'linkerd.io/inject': 'enabled' })), 'annotation linkerd.io/inject=enabled');
  assert.equal(injectedBy(linkerd, ns({}, { 'linkerd.io/inject': 'ingress' })), 'annotation linkerd.io/inject=ingress');
  assert.equal(injectedBy(linkerd, ns({}, { 'linkerd.io/inject': 'disabled' })), undefined);
  assert.equal(injectedBy(linkerd, ns({ 'linkerd.io/inject': 'enabled' })), undefined);
});
