// What stands in the way of the wrapper, each refused in one line, all of them at once in the order --inject
// looks (the command, the pod's lists, the sidecars): a command and --entrypoint both, the names and paths the
// wrapper takes already taken.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inject, INSTALLER, MOUNT_PATH, PODINFO_VOLUME } from '../../../../src/manifest/inject/inject.ts';
import type { InjectedNamespaces } from '../../../../src/manifest/pod/sidecars.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { source } from '../../../support/manifest.ts';

await loadShellParser();

const IMAGE = 'registry.example/istio-job-run:9.9.9';
const ISTIO_EVERYWHERE: InjectedNamespaces = new Map([['istio', new Set(['*'])]]);
const LINKERD_EVERYWHERE: InjectedNamespaces = new Map([['linkerd', new Set(['*'])]]);

/** A Job of one container, with POD's lines under its spec and CONTAINER's under its container. */
const job = (pod: string, container: string): string =>
  `apiVersion: batch/v1
kind: Job
metadata: {name: report}
spec:
  template:
    spec:
      restartPolicy: Never
${pod}      containers:
      - name: job
        image: registry.example/report:1.0
        command: [/app/report]
${container}`;

/** The problems of a refused rewrite, without the file, line and object that start each. */
function refusals(text: string, namespaces: InjectedNamespaces, entrypoints?: ReadonlyMap<string, readonly string[]>): readonly string[] {
  const result = inject(source(text), { image: IMAGE, native: false, namespaces, ...(entrypoints === undefined ? {} : { entrypoints }) });
  assert.equal(result.kind, 'refused');
  return result.kind === 'refused' ? result.problems.map((problem) => problem.replace(/^test\.yaml:\d+: Job report: /, '')) : [];
}

test('each name or path the wrapper takes, already taken: one line each', () => {
  const installer = `      initContainers:\n      - {name: ${INSTALLER}, image: x}\n`;
  assert.deepEqual(refusals(job(installer, ''), ISTIO_EVERYWHERE), [`the pod already has an init container named ${INSTALLER}`]);
  const mount = `        volumeMounts:\n        - {name: data, mountPath: ${MOUNT_PATH}}\n`;
  assert.deepEqual(refusals(job('', mount), ISTIO_EVERYWHERE), [`container job already mounts something at ${MOUNT_PATH}`]);
  // Without Istio the wrapper reads the pod's annotations from a volume of its own.
  const podinfo = `      volumes:\n      - {name: ${PODINFO_VOLUME}, emptyDir: {}}\n`;
  assert.deepEqual(refusals(job(podinfo, ''), LINKERD_EVERYWHERE), [`the pod already has a volume named ${PODINFO_VOLUME}: rename it`]);
});

test('--entrypoint for a container with a command, and the rest, named at once in order', () => {
  const pod = `      initContainers:\n      - {name: ${INSTALLER}, image: x}\n`;
  const container = `        volumeMounts:\n        - {name: data, mountPath: ${MOUNT_PATH}}\n`;
  assert.deepEqual(refusals(job(pod, container), ISTIO_EVERYWHERE, new Map([['job', ['/app/other']]])), [
    'container job has a command already: --entrypoint job=... is for a container without one',
    `the pod already has an init container named ${INSTALLER}`,
    `container job already mounts something at ${MOUNT_PATH}`,
  ]);
});
