// A pod on this machine (test/support/kubelet.ts): a network namespace shared by the sidecar stand-in on
// the real ports and the job container, where the wrapper runs as PID 1 with its default settings, as an
// ENTRYPOINT does.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PodSpec } from '../support/kubelet.ts';
import { podsUnavailable, simulatePod } from '../support/pods.ts';
import { WRAPPER } from '../support/process.ts';

const CLASSIC = JSON.stringify({ initContainers: ['istio-init'], containers: ['istio-proxy'] });

function pod(command: string[], overrides: Partial<PodSpec> = {}): PodSpec {
  return {
    sidecar: { kind: 'classic', flags: ['--ready-after', '3'] },
    job: { argv: [WRAPPER, '--', ...command], env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', ISTIO_JOB_RUN_SIDECAR_STATUS: CLASSIC } },
    restartPolicy: 'Never',
    backoffLimit: 0,
    graceMs: 2_000,
    hangAfterMs: 10_000,
    ...overrides,
  };
}

describe('a pod on this machine', { skip: podsUnavailable() }, () => {
  test('the wrapper as PID 1 with its defaults: waits on 15021, runs the job, quits on 15020, the pod completes', async () => {
    const result = await simulatePod(pod(['sh', '-c', 'echo "ppid=$PPID"; exit 3']));
    assert.equal(result.phase, 'Failed');
    assert.equal(result.job.runs.at(-1)?.code, 3);
    assert.match(result.job.output, /^ppid=1$/m, 'the job is a child of PID 1, the wrapper');
    const ready = result.sidecar.events.filter((e) => e.event === 'request' && e.path === '/healthz/ready');
    assert.deepEqual(
      ready.map((e) => [e.listener, e.status]),
      [
        ['envoy', 503],
        ['envoy', 503],
        ['envoy', 503],
        ['envoy', 200],
      ],
    );
    const quits = result.sidecar.events.filter((e) => e.event === 'request' && e.path === '/quitquitquit');
    assert.deepEqual(
      quits.map((e) => [e.method, e.status]),
      [['POST', 200]],
    );
    assert.equal(result.sidecar.runs.at(-1)?.code, 0);
  });

  test("kubelet's TERM to PID 1 reaches the job: exit 143, the sidecar told to quit", async () => {
    const result = await simulatePod(
      pod(['sh', '-c', 'echo running; exec sleep 30'], {
        sidecar: { kind: 'classic', flags: ['--term-drain-ms', '1000'] },
        terminate: { onJobLine: 'running' },
      }),
    );
    assert.equal(result.job.runs.at(-1)?.code, 143);
    assert.ok(result.sidecar.events.some((e) => e.path === '/quitquitquit' && e.status === 200));
    assert.equal(result.phase, 'Failed');
  });

  test('a job that succeeds: the pod Succeeded', async () => {
    const result = await simulatePod(pod(['true']));
    assert.equal(result.phase, 'Succeeded');
  });

  test('without the wrapper the same pod hangs: the simulator tells a hang', async () => {
    const spec = pod([]);
    const result = await simulatePod({ ...spec, job: { ...spec.job, argv: ['true'] }, hangAfterMs: 1_500 });
    assert.equal(result.phase, 'Running');
    assert.equal(result.job.runs.at(-1)?.code, 0);
  });
});
