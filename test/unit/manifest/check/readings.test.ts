// Manifests read as their readers read them: a wrapper's command line as the wrapper parses it, each sidecar's
// settings as its own injector reads them, and the shapes of real manifests that quit a sidecar (or fail to).
// Each case: a manifest, and the findings --check gives for it (rule and the text of the line it names).

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { type CheckSettings, check } from '../../../../src/manifest/check/rules.ts';
import { messageOf } from '../../../../src/manifest/check/finding.ts';
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

/** A pod spec with restartPolicy Never and these containers (YAML at column 0, each a list item). */
const spec = (containers: string, extra = ''): string => `restartPolicy: Never\n${extra}containers:\n${containers}`;
const ISTIO_POD = 'annotations:\n  sidecar.istio.io/inject: "true"';
const PROXY_V1 = '- name: proxy\n  image: gcr.io/cloudsql-docker/gce-proxy:1.33.2';

describe('the shapes real manifests quit a sidecar with', () => {
  test('a PID found first (pgrep, pidof; a variable or inline) is a quit by process: its status is the last', () => {
    const script = (line: string): string =>
      spec(
        `- name: job\n  image: example\n  command: ["/bin/sh", "-c"]\n  args:\n  - |\n    /app/migrate\n    ${line}`,
        'shareProcessNamespace: true\n',
      );
    for (const line of [
      'pid=$(pgrep cloud_sql_proxy) && kill -INT $pid',
      'kill -INT `pidof cloud_sql_proxy`',
      'kill -s INT "$(pgrep -f /cloud_sql_proxy)"',
    ]) {
      const yaml = job(undefined, `${script(line)}\n${PROXY_V1}\n  command: ["/cloud_sql_proxy", "-instances=p:r:i=tcp:5432"]`);
      assert.deepEqual(findings(yaml), [`exit-code-lost @ ${line}`], line);
    }
    for (const line of ['PID=$(pidof pilot-agent); kill $PID', 'kill $(pgrep -f "pilot-agent proxy")']) {
      assert.deepEqual(findings(job(ISTIO_POD, script(line))), [`exit-code-lost @ ${line}`], line);
    }
  });
  test("a watcher that waits for the job's container and then quits: its status is not the job's", () => {
    const watcher = (wait: string): string =>
      job(
        ISTIO_POD,
        spec(
          '- name: job\n  image: example\n  command: ["/opt/istio-job-run", "--", "/app/job"]\n' +
            `- name: watcher\n  image: bitnami/kubectl\n  command: ["/bin/sh", "-c"]\n  args:\n  - |\n    ${wait}\n    curl -fsS -XPOST localhost:15020/quitquitquit`,
        ),
      );
    assert.deepEqual(findings(watcher(`kubectl wait --for=jsonpath='{.status.containerStatuses[0].state.terminated}' pod/$HOSTNAME`)), []);
    // A container that does work of its own before the quit is a job: its status is lost.
    assert.deepEqual(findings(watcher('/app/report')), ['exit-code-lost @ curl -fsS -XPOST localhost:15020/quitquitquit']);
  });
  // A watcher's pgrep: -f matches its own shell's command line (which holds the script), so a pattern written in the
  // script is always found; another container's process is seen only where the pod shares its processes.
  const watcher = (lookup: string, shares: boolean): string =>
    job(
      ISTIO_POD,
      spec(
        '- name: job\n  image: example\n  command: ["/app/job"]\n' +
          `- name: watcher\n  image: example\n  command: ["bash", "-c", "while ${lookup} >/dev/null; do sleep 5; done; curl -fsS -XPOST localhost:15020/quitquitquit"]`,
        shares ? 'shareProcessNamespace: true\n' : '',
      ),
    );
  test("a watcher that polls for the job's process with pgrep in a pod that shares its processes stops the sidecar after the job", () => {
    assert.deepEqual(
      findings(watcher('pgrep -x job', true)).map((found) => found.split(' @ ')[0]),
      ['hand-rolled-quit'],
    );
  });
  test("a watcher's pgrep in a pod that does not share its processes finds nothing: it quits while the job runs", () => {
    assert.deepEqual(
      findings(watcher('pgrep -x job', false)).map((found) => found.split(' @ ')[0]),
      ['quit-before-job'],
    );
  });
  test("a watcher's pgrep -f of a pattern its own script holds finds its own shell: it never quits", () => {
    assert.deepEqual(
      findings(watcher('pgrep -f /app/job', true)).map((found) => found.split(' @ ')[0]),
      ['unwrapped'],
    );
  });
  test('the v1 proxy image with args only is the v1 proxy, which has no quit endpoint', () => {
    const yaml = job(
      undefined,
      spec(
        '- name: job\n  image: example\n  command: ["/bin/sh", "-c", "/app/migrate; rc=$?; curl -XPOST localhost:9091/quitquitquit; exit $rc"]\n' +
          `${PROXY_V1}\n  args: ["-instances=p:r:i=tcp:5432", "--quitquitquit"]`,
      ),
    );
    const [finding] = findings(yaml);
    assert.match(finding ?? '', /^quit-not-enabled @ command: /);
    const [found] = check(source(yaml));
    assert.match(found === undefined ? '' : messageOf(found), /a release without a quit endpoint: use its v2 image/);
  });
  test('a quit as more items after any program that is no shell never runs', () => {
    const yaml = job(
      ISTIO_POD,
      spec(
        '- name: job\n  image: example\n  command: ["/scripts/wait-for-deps", "&&", "curl", "-X", "POST", "http://localhost:15020/quitquitquit"]',
      ),
    );
    assert.deepEqual(
      findings(yaml).map((line) => line.split(' @ ')[0]),
      ['quit-in-exec-args', 'unwrapped'],
    );
  });
  test("a switch its injector reads only as an annotation, written as a label (Linkerd's inject, Dapr's, a quit switch)", () => {
    for (const key of ['linkerd.io/inject: disabled', 'dapr.io/enabled: "true"', 'config.linkerd.io/proxy-admin-shutdown: enabled']) {
      const yaml = job(`labels:\n  ${key}`, spec('- name: job\n  image: example\n  command: ["/app/job"]'));
      assert.deepEqual(findings(yaml), [`annotation-as-label @ ${key}`], key);
    }
  });
});
