// --inject's output as a real pod: a plain Job that asks for injection (a shell command in the base image, no
// wrapper) rewritten by the built executable, its pod template played in podman with the istio-job-run image as
// the init container's and the stand-in of istio-proxy as the classic sidecar. The pod completes, the job's exit code kept.
// Run by `npm run e2e:runtime` (needs root and Debian's podman runc catatonit iptables busybox-static).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parse } from 'yaml';
import { version } from '../../scripts/build.ts';
import { buildImage, Podman } from '../../scripts/podman.ts';
import { run } from '../support/process.ts';
import { baseImage, buildBaseStandIn, buildSidecarStandIn, Pod, podSpecOf, requests } from '../support/runtime.ts';

const unavailable = Podman.unavailable();
const podman = unavailable === undefined ? Podman.create('istio-job-run-inject-') : undefined;

before(async () => {
  if (podman === undefined) throw new Error(`the runtime suite ${unavailable}`);
  await Promise.all([buildBaseStandIn(podman, baseImage('job.Dockerfile')), buildSidecarStandIn(podman)]);
  await buildImage(podman, { dockerfile: 'Dockerfile', tag: `istio-job-run:${version}`, arch: process.arch as 'x64' | 'arm64' });
});
after(async () => {
  await podman?.remove();
});

const plainJob = (script: string): string => `apiVersion: batch/v1
kind: Job
metadata:
  name: plain
spec:
  template:
    metadata:
      labels: {sidecar.istio.io/inject: "true"}
    spec:
      restartPolicy: Never
      containers:
      - name: job
        image: ${baseImage('job.Dockerfile')}
        command: ["/bin/sh", "-c"]
        args: [${JSON.stringify(script)}]
`;

for (const code of [0, 3]) {
  test(`a plain Job, injected with the default image: the pod completes, exit ${code} kept, the sidecar told to quit`, async () => {
    const injected = await run(['--inject', '-'], { input: plainJob(`echo job ran; exit ${code}`) });
    assert.equal(injected.code, 0, injected.stderr);
    const spec = podSpecOf(parse(injected.stdout));
    assert.ok(spec !== undefined);
    const pod = await Pod.play(podman as Podman, `injected-${code}`, spec, ['--ready-after', '2']);
    assert.equal(await pod.exitCode('job'), code);
    assert.equal(await pod.exitCode('istio-proxy'), 0, 'the sidecar quit, so the pod completes');
    assert.deepEqual(await pod.diedCodes('install-istio-job-run'), [0]);
    const { stdout, stderr } = await pod.logs('job');
    assert.equal(stdout, 'job ran\n');
    assert.match(stderr, /proxy ready after/);
    assert.deepEqual(requests(await pod.sidecarEvents(), '/quitquitquit'), ['POST 200']);
  });
}
