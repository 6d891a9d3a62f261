// Manifests read as their readers read them: a wrapper's command line as the wrapper parses it, each sidecar's
// settings as its own injector reads them, and the shapes of real manifests that quit a sidecar (or fail to).
// Each case: a manifest, and the findings --check gives for it (rule and the text of the line it names).

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { type CheckSettings, check } from '../../../../src/manifest/check/rules.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { source } from '../../../support/manifest.ts';

before(loadShellParser);

const indent = (text: string, by: number): string =>
  text
    .split('\n')
    .map((line) => (line === '' ? line : ' '.repeat(by) + line))
    .join('\n');

/** A Job: its pod template's metadata (YAML at column 0, or none) and its pod spec. */
function job(podMeta: string | undefined, podSpec: string): string {
  return [
    'apiVersion: batch/v1',
    'kind: Job',
    'metadata:',
    '  name: task',
    'spec:',
    '  template:',
    ...(podMeta === undefined ? [] : ['    metadata:', indent(podMeta, 6)]),
    '    spec:',
    indent(podSpec, 6),
    '',
  ].join('\n');
}

/** Each finding as `RULE @ LINE-TEXT`: the rule and the trimmed text of the line it names. */
function findings(yaml: string, settings?: CheckSettings): string[] {
  const lines = yaml.split('\n');
  return check(source(yaml), settings).map((finding) => `${finding.rule} @ ${lines[finding.line - 1]?.trim()}`);
}

describe("a wrapper's command line, as the wrapper reads it", () => {
  test('istio-job-run --quit always --also linkerd: --also after a value option is read, so linkerd is stopped', () => {
    const yaml = job(
      'annotations:\n  linkerd.io/inject: enabled\n  config.linkerd.io/proxy-admin-shutdown: enabled',
      [
        'restartPolicy: Never',
        'containers:',
        '- name: job',
        '  image: example',
        '  command: ["/opt/istio-job-run", "--quit", "always", "--also", "linkerd", "--", "/app/job"]',
      ].join('\n'),
    );
    assert.deepEqual(findings(yaml), []);
  });
});

describe("Istio's injection, as injectRequired reads it", () => {
  const unwrapped = (podMeta: string, namespaces: readonly string[]): string[] =>
    findings(job(podMeta, 'restartPolicy: Never\ncontainers:\n- name: job\n  image: example\n  command: ["/app/job"]'), {
      namespaces: new Map(namespaces.length === 0 ? [] : [['istio', new Set(namespaces)]]),
    });
  const UNWRAPPED = ['unwrapped @ command: ["/app/job"]'];
  test('the label beats the annotation, even empty: the namespace decides then', () => {
    assert.deepEqual(
      unwrapped('labels:\n  sidecar.istio.io/inject: ""\nannotations:\n  sidecar.istio.io/inject: "false"', ['*']),
      UNWRAPPED,
    );
    assert.deepEqual(unwrapped('labels:\n  sidecar.istio.io/inject: ""\nannotations:\n  sidecar.istio.io/inject: "true"', []), []);
  });
  test('a label that declines beats an annotation that asks', () => {
    assert.deepEqual(unwrapped('labels:\n  sidecar.istio.io/inject: "no"\nannotations:\n  sidecar.istio.io/inject: "true"', ['*']), []);
  });
  test('"Yes" asks, in a namespace that does not inject; " true" (not trimmed) declines, in one that does', () => {
    assert.deepEqual(unwrapped('annotations:\n  sidecar.istio.io/inject: "Yes"', []), UNWRAPPED);
    assert.deepEqual(unwrapped('labels:\n  sidecar.istio.io/inject: "On"', []), UNWRAPPED);
    assert.deepEqual(unwrapped('annotations:\n  sidecar.istio.io/inject: " true"', ['*']), []);
  });
});
