// docker/: the images and the Kubernetes manifests agree with each other and with the bundle's layout,
// and their very commands run in roots built as the Dockerfiles describe (busybox standing in for the
// Alpine base: neither has glibc).

import assert from 'node:assert/strict';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parse } from 'yaml';
import { parseInvocation } from '../../src/config/parse.ts';
import { whyChrootsFail, inChroot, makeRoot } from '../support/chroot.ts';
import { root } from '../support/process.ts';

interface Dockerfile {
  readonly from: string;
  /** [source, destination] of ADD and COPY lines (their --flags, such as --from, left out). */
  readonly files: (readonly [string, string])[];
  readonly entrypoint: string[];
  readonly cmd: string[];
}

function readDockerfile(name: string): Dockerfile {
  const lines = readFileSync(join(root, 'docker', name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'));
  const field = (keyword: string): string[] => {
    const line = lines.find((candidate) => candidate.startsWith(`${keyword} `));
    return line === undefined ? [] : (JSON.parse(line.slice(keyword.length + 1)) as string[]);
  };
  return {
    from: lines.find((line) => line.startsWith('FROM '))?.slice(5) ?? '',
    files: lines
      .filter((line) => /^(ADD|COPY) /.test(line))
      .map((line) => {
        const [, source = '', destination = ''] = line.split(/\s+/).filter((word) => !word.startsWith('--'));
        return [source, destination] as const;
      }),
    entrypoint: field('ENTRYPOINT'),
    cmd: field('CMD'),
  };
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  volumeMounts?: { name: string; mountPath: string }[];
  env?: { name: string; valueFrom?: { fieldRef?: { fieldPath?: string } } }[];
}
interface PodSpec {
  restartPolicy: string;
  initContainers?: Container[];
  containers: Container[];
  volumes?: { name: string; emptyDir?: object }[];
}

const manifest = (name: string): { text: string; doc: Record<string, unknown> } => {
  const text = readFileSync(join(root, 'docker', 'k8s', name), 'utf8');
  return { text, doc: parse(text) as Record<string, unknown> };
};
const podOf = (doc: Record<string, unknown>): PodSpec => {
  const spec = doc['spec'] as { template?: { spec: PodSpec }; jobTemplate?: { spec: { template: { spec: PodSpec } } } };
  return spec.template?.spec ?? (spec.jobTemplate?.spec.template.spec as PodSpec);
};
const mountPath = (container: Container, volume: string): string =>
  container.volumeMounts?.find((mount) => mount.name === volume)?.mountPath ?? '';

/** The wrapper's part of a container's command line parses as a run, with its options valid. */
function assertRuns(argv: readonly string[], what: string): void {
  const invocation = parseInvocation(argv, {});
  assert.equal(invocation.kind, 'run', `${what}: ${JSON.stringify(invocation)}`);
}

function assertDownwardApi(container: Container): void {
  const status = container.env?.find((variable) => variable.name === 'ISTIO_JOB_RUN_SIDECAR_STATUS');
  assert.equal(status?.valueFrom?.fieldRef?.fieldPath, "metadata.annotations['sidecar.istio.io/status']", container.name);
}

/**
 * The commented OnFailure variant: `restartPolicy: OnFailure`, and a commented `command:`, `args:` or `env:`
 * for the container that, applied to it, makes the wrapper run with --quit on-success.
 */
function assertOnFailureVariant(text: string, entrypoint: readonly string[], container: Container): void {
  assert.match(text, /#\s+restartPolicy: OnFailure/);
  const [, field, value] = /^\s*#\s+(command|args|env): (\[.*\])/m.exec(text) ?? [];
  assert.ok(field !== undefined && value !== undefined, 'a commented command, args or env for OnFailure');
  const variant = { command: container.command ?? [...entrypoint], args: container.args ?? [], env: {} as Record<string, string> };
  if (field === 'env') {
    for (const { name, value: v } of parse(value) as { name: string; value: string }[]) variant.env[name] = v;
  } else {
    variant[field as 'command' | 'args'] = parse(value) as string[];
  }
  const invocation = parseInvocation([...variant.command, ...variant.args].slice(1), variant.env);
  assert.equal(invocation.kind, 'run', JSON.stringify(variant));
  assert.equal(invocation.kind === 'run' && invocation.options.quit, 'on-success', JSON.stringify(variant));
}

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-images-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe('the init-container pattern: docker/Dockerfile and docker/k8s/cronjob.yaml', () => {
  const image = readDockerfile('Dockerfile');
  const { text, doc } = manifest('cronjob.yaml');
  const pod = podOf(doc);
  const init = pod.initContainers?.[0] as Container;
  const job = pod.containers[0] as Container;
  const volume = pod.volumes?.find((candidate) => candidate.emptyDir !== undefined)?.name ?? '';
  const bundleDir = image.files[0]?.[1] ?? '';

  test('the image holds only the bundle, and its entrypoint installs it', () => {
    assert.equal(image.from, 'scratch');
    assert.equal(image.files.length, 1);
    assert.match(image.files[0]?.[0] ?? '', /^dist\/release\/istio-job-run-\$\{VERSION\}-linux-\$\{ARCH\}\.tar\.gz$/);
    assert.deepEqual(image.entrypoint, [`${bundleDir}istio-job-run`, '--install']);
  });

  test('the manifest: the init container installs into the emptyDir the job container runs from', () => {
    assert.equal(doc['kind'], 'CronJob');
    assert.equal(pod.restartPolicy, 'Never');
    assert.match(init.image, /^istio-job-run:/);
    assert.deepEqual(init.args, [mountPath(init, volume)]);
    assert.deepEqual(image.cmd, init.args, 'the image default and the manifest install to the same path');
    assert.notEqual(mountPath(job, volume), mountPath(init, volume), 'mounted elsewhere than installed, as it may be');
    assert.equal(job.command?.[0], `${mountPath(job, volume)}/istio-job-run`);
    assertRuns([...(job.command ?? []).slice(1), ...(job.args ?? [])], 'the job container');
    assertDownwardApi(job);
    assertOnFailureVariant(text, image.entrypoint, job);
  });

  test('both containers run as written: install in a root holding only the bundle, then the job from busybox', {
    skip: whyChrootsFail(),
  }, async () => {
    const emptyDir = join(scratch, 'emptydir');
    mkdirSync(emptyDir);
    const initRoot = makeRoot({ busybox: false });
    const jobRoot = makeRoot({ busybox: true });
    try {
      cpSync(join(root, 'dist', 'bundle'), join(initRoot.path, bundleDir), { recursive: true });
      const installed = await inChroot(initRoot, [...image.entrypoint, ...(init.args ?? [])], {
        mounts: [[emptyDir, mountPath(init, volume)]],
      }).finished;
      assert.equal(installed.code, 0, installed.stderr);
      const ran = await inChroot(jobRoot, [...(job.command ?? []), ...(job.args ?? [])], { mounts: [[emptyDir, mountPath(job, volume)]] })
        .finished;
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(ran.stdout, 'cleaning up\ndone\n');
    } finally {
      initRoot.remove();
      jobRoot.remove();
    }
  });
});

describe('the ENTRYPOINT pattern: docker/job.Dockerfile and docker/k8s/job.yaml', () => {
  const image = readDockerfile('job.Dockerfile');
  const { text, doc } = manifest('job.yaml');
  const pod = podOf(doc);
  const job = pod.containers[0] as Container;
  const [bundle, script] = image.files;

  test('the image: the bundle beside the entrypoint, the task where CMD and the manifest say', () => {
    assert.deepEqual(image.entrypoint, [`${bundle?.[1]}istio-job-run`, '--']);
    assert.deepEqual(image.cmd, [script?.[1]]);
    assert.equal(job.command, undefined, 'the manifest keeps the image entrypoint');
    assert.deepEqual(job.args, image.cmd);
  });

  test('the manifest: restartPolicy Never, the downward API, a commented OnFailure variant', () => {
    assert.equal(doc['kind'], 'Job');
    assert.equal(pod.restartPolicy, 'Never');
    assertRuns([...image.entrypoint.slice(1), ...(job.args ?? [])], 'the job container');
    assertDownwardApi(job);
    assertOnFailureVariant(text, image.entrypoint, job);
  });

  test('the container runs as written, in a root built as the Dockerfile says', { skip: whyChrootsFail() }, async () => {
    const jobRoot = makeRoot({ busybox: true });
    try {
      cpSync(join(root, 'dist', 'bundle'), join(jobRoot.path, bundle?.[1] ?? ''), { recursive: true });
      mkdirSync(join(jobRoot.path, 'app'));
      copyFileSync(join(root, script?.[0] ?? ''), join(jobRoot.path, script?.[1] ?? ''));
      const ran = await inChroot(jobRoot, [...image.entrypoint, ...(job.args ?? [])]).finished;
      assert.equal(ran.code, 0, ran.stderr);
      assert.match(ran.stdout, /^task: running as pid \d+ \(parent 1\)/m);
      assert.match(ran.stdout, /^task: done$/m);
    } finally {
      jobRoot.remove();
    }
  });
});
