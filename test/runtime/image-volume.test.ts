// The image-volume form in a real runtime: the istio-job-run image itself mounted into the job container (podman's
// `--mount type=image`, what kubelet asks containerd or CRI-O for), nothing installed or copied. Pods from
// docker/k8s/cronjob-image-volume.yaml and from --inject --image-volume's output, with the stand-in of istio-proxy as
// the classic sidecar: the job runs under the wrapper as a non-root UID on a read-only root, its exit code is kept
// and the sidecar is stopped. Run by `npm run e2e:runtime` (needs root and Debian's podman runc catatonit iptables
// busybox-static).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { Podman } from '../../scripts/podman.ts';
import { run } from '../support/process.ts';
import { baseImage, buildAllImages, Pod, podSpecOf, podTemplate, requests } from '../support/runtime.ts';

const MANIFEST = 'cronjob-image-volume.yaml';
const unavailable = Podman.unavailable();
const podman = unavailable === undefined ? Podman.create('istio-job-run-image-volume-') : undefined;

before(async () => {
  if (podman === undefined) throw new Error(`the runtime suite ${unavailable}`);
  await buildAllImages(podman);
});
after(async () => {
  await podman?.remove();
});

/** The job ended with CODE and told the sidecar to quit once, so the sidecar ended with 0 and the pod completes. */
async function completed(pod: Pod, code: number): Promise<void> {
  assert.equal(await pod.exitCode('job'), code, "the job's exit code, kept");
  assert.equal(await pod.exitCode('istio-proxy'), 0, 'the sidecar quit, so the pod completes');
  assert.deepEqual(requests(await pod.sidecarEvents(), '/quitquitquit'), ['POST 200']);
}

const start = (name: string, spec = podTemplate(MANIFEST), sidecarArgs = ['--ready-after', '2']): Promise<Pod> =>
  Pod.run(podman as Podman, name, spec, sidecarArgs);

describe(`docker/k8s/${MANIFEST} in podman: the wrapper from the image, nothing copied`, { concurrency: 3 }, () => {
  test('as written: the job runs under the wrapper, exit 0, the sidecar quits', async () => {
    const pod = await start('iv-as-written');
    await completed(pod, 0);
    const { stdout, stderr } = await pod.logs('job');
    assert.equal(stdout, 'cleaning up\ndone\n');
    assert.match(stderr, /proxy ready after/);
  });

  test('restricted: its runAsUser, a read-only root and a read-only image mount, no capabilities, seccomp', async () => {
    const probe = [
      'id -u',
      'touch /probe 2>/dev/null && echo root=writable || echo root=read-only',
      'touch /istio-job-run/probe 2>/dev/null && echo image=writable || echo image=read-only',
      "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status | tr -d '\\t'",
      'exit 3',
    ].join('; ');
    const spec = podTemplate(MANIFEST);
    const job = spec.containers[0];
    assert.ok(job !== undefined);
    job.args = ['/bin/sh', '-c', probe];
    const pod = await start('iv-restricted', spec);
    await completed(pod, 3);
    const uid = String((job.securityContext as { runAsUser: number }).runAsUser);
    assert.deepEqual((await pod.logs('job')).stdout.trim().split('\n'), [
      uid,
      'root=read-only',
      'image=read-only',
      'CapEff:0000000000000000',
      'NoNewPrivs:1',
      'Seccomp:2',
    ]);
    const inspected = await pod.inspect('job');
    assert.equal(inspected.HostConfig.ReadonlyRootfs, true);
    assert.equal(inspected.HostConfig.Memory, 128 * 1024 * 1024);
  });

  test('--inject --image-volume of a plain Job: the pod completes, exit 7 kept, the sidecar told to quit', async () => {
    const plain = [
      'apiVersion: batch/v1',
      'kind: Job',
      'metadata: {name: plain}',
      'spec:',
      '  template:',
      '    metadata:',
      '      labels: {sidecar.istio.io/inject: "true"}',
      '    spec:',
      '      restartPolicy: Never',
      '      containers:',
      '      - name: job',
      `        image: ${baseImage('job.Dockerfile')}`,
      '        command: ["/bin/sh", "-c"]',
      '        args: ["echo job ran; exit 7"]',
      '',
    ].join('\n');
    const injected = await run(['--inject', '--image-volume', '-'], { input: plain });
    assert.equal(injected.code, 0, injected.stderr);
    const spec = podSpecOf(parse(injected.stdout));
    assert.ok(spec !== undefined);
    assert.equal(spec.initContainers, undefined, 'no init container');
    const pod = await start('iv-injected', spec);
    await completed(pod, 7);
    assert.equal((await pod.logs('job')).stdout, 'job ran\n');
  });
});
