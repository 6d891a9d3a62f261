// A pod on this machine: a network namespace shared by the sidecar stand-in on the real ports and the
// job container, where the wrapper runs as PID 1 with its default settings (as an ENTRYPOINT does).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { NODE, root, start } from '../support/process.ts';

interface Report {
  jobCode: number | null;
  stdout: string;
  stderr: string;
  sidecarCode: number | null;
  sidecarEvents: { event: string; path?: string; method?: string; status?: number | string; listener?: string }[];
}

function namespacesWork(): string | undefined {
  try {
    execFileSync('unshare', ['-n', '-p', '-f', '--mount-proc', 'true'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'needs root and unshare (network and PID namespaces)';
  }
}
const skip = namespacesWork();

async function pod(scenario: object): Promise<Report> {
  const running = start('unshare', ['-n', '--', NODE, join(root, 'test/support/pod.ts'), JSON.stringify(scenario)], { timeoutMs: 30_000 });
  running.process.stdin?.end();
  const result = await running.finished;
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as Report;
}

const quits = (report: Report) => report.sidecarEvents.filter((e) => e.event === 'request' && e.path === '/quitquitquit');

describe('a pod on this machine', { skip }, () => {
  test('the wrapper as PID 1 with its defaults: waits on 15021, runs the job, quits on 15020, the pod completes', async () => {
    const report = await pod({ command: ['sh', '-c', 'echo "ppid=$PPID"; exit 3'], readyAfter: 3, terminate: false });
    assert.equal(report.jobCode, 3);
    assert.match(report.stdout, /^ppid=1$/m, 'the job is a child of PID 1, the wrapper');
    const ready = report.sidecarEvents.filter((e) => e.event === 'request' && e.path === '/healthz/ready');
    assert.deepEqual(ready.map((e) => [e.listener, e.status]), [['envoy', 503], ['envoy', 503], ['envoy', 503], ['envoy', 200]]);
    assert.deepEqual(quits(report).map((e) => [e.method, e.status]), [['POST', 200]]);
    assert.equal(report.sidecarCode, 0);
    assert.ok(report.sidecarEvents.some((e) => e.event === 'exited'));
  });

  test("kubelet's TERM to PID 1 reaches the job; exit 143; the sidecar is told to quit", async () => {
    const report = await pod({ command: ['sh', '-c', 'echo ready; exec sleep 30'], readyAfter: 0, terminate: true });
    assert.equal(report.jobCode, 143);
    assert.deepEqual(quits(report).map((e) => e.status), [200]);
    assert.equal(report.sidecarCode, 0);
  });

  test('a missing command as PID 1: exit 127, and the sidecar still quits', async () => {
    const report = await pod({ command: ['no-such-command-istio-job-run'], readyAfter: 0, terminate: false });
    assert.equal(report.jobCode, 127);
    assert.deepEqual(quits(report).map((e) => e.status), [200]);
    assert.equal(report.sidecarCode, 0);
  });
});
