// --inject --image-volume: the istio-job-run image mounted read-only as an image volume, the wrapper run from
// it; no init container and no emptyDir; every byte it did not add as it was, idempotent, --check clean; and
// the wrapper's path in the image is where docker/Dockerfile puts it.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { IMAGE_BUNDLE_DIR, imageVolumeWrapper } from '../../../../src/manifest/inject/image-volume.ts';
import { inject, INSTALLER, MOUNT_PATH, VOLUME } from '../../../../src/manifest/inject/inject.ts';
import type { InjectedNamespaces } from '../../../../src/manifest/pod/sidecars.ts';
import { check } from '../../../../src/manifest/check/rules.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { root } from '../../../support/process.ts';
import { insertedOnly, source } from '../../../support/manifest.ts';

const IMAGE = 'registry.example/istio-job-run:9.9.9';
const EVERYWHERE: InjectedNamespaces = new Map([['istio', new Set(['*'])]]);
await loadShellParser();

/** A CronJob with an init container and a volume of its own, comments and quoting to keep. */
const CRONJOB = `# Nightly: OnFailure, so the quit waits for a success.
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure   # retried in place
          initContainers:
          - name: wait-db
            image: 'registry.example/wait:1'
            command: ["/wait", "db:5432"]
          volumes:
          - name: config
            configMap: {name: nightly, defaultMode: 0644}
          containers:
          - name: job
            image: registry.example/nightly:2
            command:
            - /app/run
            volumeMounts:
            - {name: config, mountPath: /etc/nightly}
`;

type PodSpec = Record<string, unknown> & {
  containers: (Record<string, unknown> & { volumeMounts: Record<string, unknown>[] })[];
  initContainers?: Record<string, unknown>[];
  volumes: Record<string, unknown>[];
};
const podOf = (text: string): PodSpec =>
  (parse(text, { version: '1.1' }) as { spec: { jobTemplate: { spec: { template: { spec: PodSpec } } } } }).spec.jobTemplate.spec.template
    .spec;

function injected(text: string, imageVolume = true): string {
  const result = inject(source(text), { image: IMAGE, native: false, imageVolume, namespaces: EVERYWHERE });
  assert.equal(result.kind, 'done', result.kind === 'refused' ? result.problems.join('\n') : '');
  return (result as { text: string }).text;
}

describe('--inject --image-volume of a CronJob', () => {
  const out = injected(CRONJOB);
  const pod = podOf(out);
  const job = pod.containers[0] as PodSpec['containers'][number];

  test("the job's command runs the wrapper from the image volume, --quit on-success for OnFailure", () => {
    assert.deepEqual(job['command'], [`${MOUNT_PATH}${IMAGE_BUNDLE_DIR}/istio-job-run`, '--quit', 'on-success', '--', '/app/run']);
  });
  test('the pod gets the image as a volume, pulled if not present, and the job mounts it read-only', () => {
    assert.deepEqual(pod.volumes.at(-1), { name: VOLUME, image: { reference: IMAGE, pullPolicy: 'IfNotPresent' } });
    assert.deepEqual(job.volumeMounts.at(-1), { name: VOLUME, mountPath: MOUNT_PATH, readOnly: true });
  });
  test('no init container of its own and no emptyDir: only the pod’s own init container', () => {
    assert.deepEqual(
      pod.initContainers?.map((init) => init['name']),
      ['wait-db'],
    );
    assert.ok(!pod.volumes.some((volume) => 'emptyDir' in volume));
    assert.doesNotMatch(out, /emptyDir|--install/);
  });
  test('every byte it did not add is as it was', () => {
    assert.ok(insertedOnly(CRONJOB, out));
    assert.ok(out.includes('restartPolicy: OnFailure   # retried in place'));
    assert.ok(out.includes('defaultMode: 0644'));
  });
  test('idempotent with either form, and --check finds no error in it', () => {
    assert.equal(injected(out), out);
    assert.equal(injected(out, false), out);
    assert.deepEqual(
      check(source(out), { namespaces: EVERYWHERE }).filter((finding) => finding.level === 'error'),
      [],
    );
    assert.ok(check(source(CRONJOB), { namespaces: EVERYWHERE }).some((finding) => finding.rule === 'unwrapped'));
  });
});

describe('--inject --image-volume beside the rest of --inject', () => {
  const pod = (initContainers: string, meta = '{}'): string =>
    [
      'apiVersion: batch/v1',
      'kind: CronJob',
      'metadata: {name: c}',
      'spec:',
      '  jobTemplate:',
      '    spec:',
      '      template:',
      `        metadata: ${meta}`,
      '        spec:',
      '          restartPolicy: Never',
      initContainers,
      '          containers:',
      '          - {name: job, image: x, command: [./task]}',
      '',
    ].join('\n');

  test('an init container already named as the installer is no obstacle: none is added', () => {
    const text = pod(`          initContainers:\n          - {name: ${INSTALLER}, image: y}`);
    const copy = inject(source(text), { image: IMAGE, native: false, namespaces: EVERYWHERE });
    assert.equal(copy.kind, 'refused', 'the emptyDir form adds an init container of that name');
    assert.deepEqual(
      podOf(injected(text)).initContainers?.map((init) => init['name']),
      [INSTALLER],
    );
  });
  test('Linkerd: the annotations file beside the image volume', () => {
    const out = injected(pod('', '{annotations: {linkerd.io/inject: enabled}}'));
    assert.deepEqual(
      podOf(out).volumes.map((volume) => Object.keys(volume).filter((key) => key !== 'name')[0]),
      ['image', 'downwardAPI'],
    );
    assert.deepEqual(podOf(out).initContainers, undefined);
  });
});

test("the wrapper's path in the image is where docker/Dockerfile puts the bundle and runs it from", () => {
  const dockerfile = readFileSync(join(root, 'docker', 'Dockerfile'), 'utf8');
  const added = /^ADD \S+ (\S+)$/m.exec(dockerfile)?.[1];
  const entrypoint = /^ENTRYPOINT \["([^"]+)"/m.exec(dockerfile)?.[1];
  assert.equal(added, `${IMAGE_BUNDLE_DIR}/`);
  assert.equal(entrypoint, `${IMAGE_BUNDLE_DIR}/istio-job-run`);
  assert.equal(imageVolumeWrapper('/mnt'), `/mnt${entrypoint}`);
});
