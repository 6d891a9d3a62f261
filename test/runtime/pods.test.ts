// Real pods in a real container runtime: podman plays pods made from docker/k8s's Job and CronJob pod
// templates, with the images built from docker/ as the README says, runc as the OCI runtime, the
// stand-in of istio-proxy as a classic sidecar container, and reads what happened from podman's records.
// Run by `npm run e2e:runtime` (needs root and Debian's podman runc catatonit iptables busybox-static).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Podman } from '../../scripts/podman.ts';
import { buildAllImages, Pod, podTemplate, requests, type Container, type PodSpec, type SidecarLogEvent } from '../support/runtime.ts';

// The runtime suite is run on purpose: where podman cannot run, it fails and says why, rather than skip.
const unavailable = Podman.unavailable();
const podman = unavailable === undefined ? Podman.create() : undefined;
const started = performance.now();

/** The pods of the suite run this many at a time: enough to keep it short, few enough that a small CI machine keeps up. */
const PARALLEL_PODS = 6;

/** A template with its job container changed: the command's args, its env, a restart policy, more volumes. */
function variant(manifest: 'job.yaml' | 'cronjob.yaml', edit: (spec: PodSpec, job: Container) => void = () => {}): PodSpec {
  const spec = podTemplate(manifest);
  edit(spec, spec.containers[0] as Container);
  return spec;
}
const withArgs = (manifest: 'job.yaml' | 'cronjob.yaml', args: string[]): PodSpec =>
  variant(manifest, (_, job) => {
    job.args = args;
  });

const play = (name: string, spec: PodSpec, sidecarArgs: string[] = []): Promise<Pod> => Pod.play(podman as Podman, name, spec, sidecarArgs);

/** The job container, and the sidecar once it has exited: both exit codes. */
async function codes(pod: Pod): Promise<{ job: number; sidecar: number }> {
  const job = await pod.exitCode('job');
  return { job, sidecar: await pod.exitCode('istio-proxy') };
}

/** The sidecar's own TERM and the quits, in the order it saw them. */
const stopOrder = (events: readonly SidecarLogEvent[]): string[] =>
  events
    .filter((e) => e.event === 'terminated' || e.path === '/quitquitquit')
    .map((e) => (e.event === 'terminated' ? 'TERM' : `quit ${e.status}`));

let control: Pod | undefined;

before(async () => {
  if (podman === undefined) throw new Error(`the runtime suite ${unavailable}`);
  await buildAllImages(podman);
  // The control: the job's own command without the wrapper. Nothing tells the sidecar, so the pod never ends.
  control = await play(
    'control',
    variant('job.yaml', (_, job) => {
      job.command = ['/app/task.sh'];
      delete job.args;
    }),
  );
});

after(async () => {
  await podman?.remove();
  process.stderr.write(`runtime suite: ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
});

describe('pods from docker/k8s in podman, with runc', { concurrency: PARALLEL_PODS }, () => {
  test('job.yaml as written: the task runs under the wrapper as PID 1, exit 0, the sidecar quits', async () => {
    const pod = await play('as-written', podTemplate('job.yaml'), ['--ready-after', '3']);
    assert.deepEqual(await codes(pod), { job: 0, sidecar: 0 });
    const { stdout, stderr } = await pod.logs('job');
    assert.match(stdout, /^task: running as pid \d+ \(parent 1\)/m, 'the task is a child of PID 1, the wrapper');
    assert.match(stderr, /proxy ready after/);
    const events = await pod.sidecarEvents();
    assert.deepEqual(requests(events, '/healthz/ready'), ['GET 503', 'GET 503', 'GET 503', 'GET 200']);
    assert.deepEqual(requests(events, '/quitquitquit'), ['POST 200']);
  });

  for (const [code, args] of [
    [3, ['/bin/sh', '-c', 'exit 3']],
    [137, ['/bin/sh', '-c', 'kill -KILL $$']],
    [127, ['/no/such/command']],
    [126, ['/app']],
  ] as const) {
    test(`exit ${code}: the job container ends with it, the sidecar quits`, async () => {
      const pod = await play(`exit-${code}`, withArgs('job.yaml', [...args]));
      assert.deepEqual(await codes(pod), { job: code, sidecar: 0 });
      assert.deepEqual(requests(await pod.sidecarEvents(), '/quitquitquit'), ['POST 200']);
    });
  }

  test('the proxy turns ready late: the command starts only after the first 200', async () => {
    const pod = await play('ready-late', withArgs('job.yaml', ['/bin/sh', '-c', 'echo started']), ['--ready-after-ms', '3000']);
    assert.deepEqual(await codes(pod), { job: 0, sidecar: 0 });
    const ready = requests(await pod.sidecarEvents(), '/healthz/ready');
    assert.ok(ready.length >= 2 && ready.slice(0, -1).every((r) => r === 'GET 503') && ready.at(-1) === 'GET 200', ready.join(', '));
    assert.equal((await pod.logs('job')).stdout, 'started\n');
  });

  test('a readiness timeout: exit 125, the command never runs, the sidecar is told to quit', async () => {
    const spec = variant('job.yaml', (_, job) => {
      job.args = ['/bin/sh', '-c', 'echo started'];
      job.env = [...(job.env ?? []), { name: 'ISTIO_JOB_RUN_READY_TIMEOUT', value: '2s' }];
    });
    const pod = await play('ready-timeout', spec, ['--never-ready']);
    assert.deepEqual(await codes(pod), { job: 125, sidecar: 0 });
    assert.equal((await pod.logs('job')).stdout, '');
    assert.deepEqual(requests(await pod.sidecarEvents(), '/quitquitquit'), ['POST 200']);
  });

  // podman, like kubelet, sends TERM to every container of the pod at once: the sidecar may get its TERM
  // before or after the wrapper's quit, so the stand-in drains on TERM (still answering a quit) and the order
  // between the two is reported, not asserted.
  test('pod stop while the job runs: TERM reaches the job (143), then the quit is acknowledged', async (t) => {
    const pod = await play('stop-running', withArgs('job.yaml', ['/bin/sh', '-c', 'echo running; exec sleep 60']), [
      '--term-drain-ms',
      '5000',
    ]);
    const logs = pod.follow('job');
    await logs.line(/^running$/, 'stdout');
    await pod.stop(20);
    assert.deepEqual(await codes(pod), { job: 143, sidecar: 0 });
    const events = await pod.sidecarEvents();
    assert.deepEqual(requests(events, '/quitquitquit'), ['POST 200']);
    t.diagnostic(`the sidecar saw: ${stopOrder(events).join(', ')}`);
    await logs.finished;
  });

  test('pod stop while the wrapper waits: 143 without running the command, then the quit is acknowledged', async (t) => {
    const pod = await play('stop-waiting', withArgs('job.yaml', ['/bin/sh', '-c', 'echo started']), [
      '--never-ready',
      '--term-drain-ms',
      '5000',
    ]);
    const sidecar = pod.follow('istio-proxy');
    await sidecar.line(/"path":"\/healthz\/ready"/, 'stdout');
    await pod.stop(20);
    assert.deepEqual(await codes(pod), { job: 143, sidecar: 0 });
    assert.equal((await pod.logs('job')).stdout, '', 'the command never ran');
    const events = await pod.sidecarEvents();
    assert.deepEqual(requests(events, '/quitquitquit'), ['POST 200']);
    t.diagnostic(`the sidecar saw: ${stopOrder(events).join(', ')}`);
    await sidecar.finished;
  });

  test('signals sent with podman kill reach the job, each once, in order', async () => {
    const sent = ['HUP', 'INT', 'QUIT', 'USR1', 'USR2', 'WINCH', 'ALRM'];
    const script = [
      ...sent.map((s) => `trap 'echo got ${s}' ${s}`),
      "trap 'echo got TERM; exit 7' TERM",
      'echo ready',
      'while :; do sleep 1 & wait $!; done',
    ].join('\n');
    const pod = await play('signals', withArgs('job.yaml', ['/bin/sh', '-c', script]));
    const logs = pod.follow('job');
    await logs.line(/^ready$/, 'stdout');
    const got = (): string[] =>
      logs
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('got '));
    for (const [i, signal] of [...sent, 'TERM'].entries()) {
      await (podman as Podman).ok(['kill', '--signal', signal, 'signals-job']);
      await logs.until(() => got().length > i, `the job's line for ${signal}`);
    }
    assert.deepEqual(await codes(pod), { job: 7, sidecar: 0 });
    assert.deepEqual(
      got(),
      [...sent, 'TERM'].map((s) => `got ${s}`),
    );
    await logs.finished;
  });

  test('OnFailure with --quit on-success: the failed run keeps the proxy, the restarted run succeeds and quits it', async () => {
    const spec = variant('cronjob.yaml', (pod, job) => {
      pod.restartPolicy = 'OnFailure';
      // The manifest's commented OnFailure command.
      job.command = ['/opt/tools/istio-job-run', '--quit', 'on-success', '--'];
      job.args = [
        '/bin/sh',
        '-c',
        'if [ -e /state/failed-once ]; then echo second run; else touch /state/failed-once; echo first run; exit 1; fi',
      ];
      pod.volumes = [...(pod.volumes ?? []), { name: 'state', emptyDir: {} }];
      job.volumeMounts = [...(job.volumeMounts ?? []), { name: 'state', mountPath: '/state' }];
    });
    const pod = await play('on-failure', spec);
    assert.equal(await pod.exitCode('istio-proxy'), 0);
    assert.equal(await pod.exitCode('job'), 0);
    const job = await pod.inspect('job');
    assert.equal(job.RestartCount, 1, 'podman restarted the failed job container once');
    assert.equal((await pod.logs('job')).stdout, 'first run\nsecond run\n');
    assert.deepEqual(requests(await pod.sidecarEvents(), '/quitquitquit'), ['POST 200'], 'one quit, after the success');
  });

  test('shareProcessNamespace: the pause process is PID 1, the job sees the sidecar, and the pod still completes', async () => {
    const spec = variant('job.yaml', (pod, job) => {
      pod.shareProcessNamespace = true;
      job.args = [
        '/bin/sh',
        '-c',
        'echo "pid1=$(cat /proc/1/comm) ppid1=$([ $PPID = 1 ] && echo yes || echo no)"; cat /proc/[0-9]*/comm | sort -u | tr "\\n" " "',
      ];
    });
    const pod = await play('share-pid', spec);
    assert.deepEqual(await codes(pod), { job: 0, sidecar: 0 });
    const { stdout } = await pod.logs('job');
    assert.match(stdout, /^pid1=\S+ ppid1=no$/m, 'the wrapper is not PID 1 here');
    assert.doesNotMatch(stdout, /^pid1=istio-job-run/m);
    assert.match(stdout, /\bnode\b/, "the sidecar's process is visible from the job");
  });

  test('cronjob.yaml as written: the init container installs as its image user, the job runs as another, restricted', async () => {
    const pod = await play('cron-as-written', podTemplate('cronjob.yaml'));
    assert.deepEqual(await codes(pod), { job: 0, sidecar: 0 });
    assert.deepEqual(await pod.diedCodes('install-istio-job-run'), [0]);
    assert.equal((await pod.logs('job')).stdout, 'cleaning up\ndone\n');
  });

  test('the installer copies the bundle within 24 MiB: its page cache is reclaimed under the limit', async () => {
    const spec = variant('cronjob.yaml', (pod) => {
      const installer = pod.initContainers?.[0] as Container;
      installer.resources = { requests: { memory: '24Mi' }, limits: { memory: '24Mi' } };
    });
    const pod = await play('install-24mi', spec);
    assert.deepEqual(await codes(pod), { job: 0, sidecar: 0 });
    assert.deepEqual(await pod.diedCodes('install-istio-job-run'), [0]);
  });

  test('the restricted security context as podman applies it: UIDs, read-only root, no capabilities, seccomp', async () => {
    const probe = [
      'id -u',
      'stat -c "tools=%u" /opt/tools/istio-job-run',
      'touch /probe 2>/dev/null && echo root=writable || echo root=read-only',
      "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status | tr -d '\\t'",
    ].join('; ');
    const pod = await play('restricted', withArgs('cronjob.yaml', ['/bin/sh', '-c', probe]));
    assert.deepEqual(await codes(pod), { job: 0, sidecar: 0 });
    const template = podTemplate('cronjob.yaml');
    const jobUid = String((template.containers[0]?.securityContext as { runAsUser: number } | undefined)?.runAsUser);
    const { stdout } = await pod.logs('job');
    assert.deepEqual(
      stdout.trim().split('\n'),
      [jobUid, 'tools=65532', 'root=read-only', 'CapEff:0000000000000000', 'NoNewPrivs:1', 'Seccomp:2'],
      'the job as its runAsUser; the bundle installed by the image user 65532; no write, no capability, no new privileges, a seccomp filter',
    );
    const job = await pod.inspect('job');
    assert.equal(job.HostConfig.ReadonlyRootfs, true);
    assert.deepEqual(job.EffectiveCaps ?? [], []);
    assert.ok(job.HostConfig.SecurityOpt?.includes('no-new-privileges'), String(job.HostConfig.SecurityOpt));
    assert.equal(job.HostConfig.Memory, 128 * 1024 * 1024, "the manifest's memory limit");
  });

  test('memory: what the wrapper and its job use in their container; its anonymous memory fits the request as written', async (t) => {
    const measure =
      "grep -E '^(total_rss|total_cache) ' /sys/fs/cgroup/memory/memory.stat; echo max_usage $(cat /sys/fs/cgroup/memory/memory.max_usage_in_bytes)";
    const pod = await play('memory', withArgs('job.yaml', ['/bin/sh', '-c', measure]), ['--ready-after', '3']);
    assert.deepEqual(await codes(pod), { job: 0, sidecar: 0 });
    const figures = Object.fromEntries(
      (await pod.logs('job')).stdout
        .trim()
        .split('\n')
        .map((line) => {
          const [key = '', value = ''] = line.split(' ');
          return [key, Number(value) / 1_048_576];
        }),
    );
    t.diagnostic(`job container (wrapper in classic mode + sh): ${JSON.stringify(figures)} MiB`);
    const request = Number.parseInt(podTemplate('job.yaml').containers[0]?.resources?.requests?.['memory'] ?? '', 10);
    assert.ok(
      (figures['total_rss'] ?? Number.NaN) < request,
      `the anonymous memory fits the request of ${request} MiB: ${JSON.stringify(figures)}`,
    );
  });
});

describe('the control pod, without the wrapper', () => {
  test('its job ended long ago with exit 0, and its sidecar still runs: the pod never completes', async () => {
    const pod = control as Pod;
    assert.equal(await pod.exitCode('job'), 0);
    const sidecar = await pod.inspect('istio-proxy');
    assert.equal(sidecar.State.Running, true, `the sidecar is ${sidecar.State.Status}`);
    assert.deepEqual(requests(await pod.sidecarEvents(), '/quitquitquit'), []);
  });
});
