// Real pods for the runtime suite (test/runtime/): podman (scripts/podman.ts, state private to the run)
// plays `kind: Pod` manifests made from the pod templates of docker/k8s/*.yaml, with the images built
// from docker/ as the README says, a busybox stand-in for the base image the Dockerfiles name, and the
// project's stand-in of istio-proxy (test/support/sidecar-main.ts) as the classic sidecar container.
// What a pod did is read from podman's own records: inspect (exit codes, restarts, security settings),
// events (init containers, which podman removes once they ran) and logs.

import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { parse, stringify } from 'yaml';
import { buildImage, type Podman } from '../../scripts/podman.ts';
import { version } from '../../scripts/build.ts';
import { BUSYBOX } from './chroot.ts';
import { NODE, root, start, type Running } from './process.ts';

/** The sidecar's status annotation of a classic pod, short enough for podman (63 characters at most). */
export const CLASSIC_STATUS = JSON.stringify({ initContainers: ['istio-init'], containers: ['istio-proxy'] });
export const SIDECAR_IMAGE = 'localhost/istio-proxy-standin:test';
const SIDECAR_FILES = ['sidecar-main.ts', 'sidecar.ts'];

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  securityContext?: Record<string, unknown>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}
export interface PodSpec {
  restartPolicy: string;
  shareProcessNamespace?: boolean;
  securityContext?: Record<string, unknown>;
  volumes?: { name: string; emptyDir?: object; image?: { reference: string; pullPolicy?: string } }[];
  initContainers?: Container[];
  containers: Container[];
}

/** The pod spec of a CronJob, Job or Pod, or of a fragment of one (an object with containers). */
export function podSpecOf(doc: unknown): PodSpec | undefined {
  for (const path of [['spec', 'jobTemplate', 'spec', 'template', 'spec'], ['spec', 'template', 'spec'], ['spec'], []]) {
    const spec = path.reduce<unknown>(
      (node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
      doc,
    );
    if (spec !== null && typeof spec === 'object' && Array.isArray((spec as PodSpec).containers)) return spec as PodSpec;
  }
  return undefined;
}

/** The pod template of a Job or CronJob manifest in docker/k8s/, as written. */
export function podTemplate(manifest: string): PodSpec {
  const spec = podSpecOf(parse(readFileSync(join(root, 'docker', 'k8s', manifest), 'utf8')));
  if (spec === undefined) throw new Error(`docker/k8s/${manifest}: no pod template`);
  return spec;
}

/** The last FROM of a Dockerfile in docker/: the base image the runtime suite stands in for. */
export function baseImage(dockerfile: string): string {
  const froms = readFileSync(join(root, 'docker', dockerfile), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('FROM '));
  return (froms.at(-1) ?? '').slice(5).split(/\s+/)[0] ?? '';
}

/** Builds a FROM-scratch image of a folder's tree (as one tar layer) under a tag. */
async function imageOfTree(podman: Podman, tree: string, tag: string, config: string[]): Promise<void> {
  const context = `${tree}.context`;
  mkdirSync(context);
  execFileSync('tar', ['-C', tree, '-cf', join(context, 'rootfs.tar'), '.']);
  writeFileSync(join(context, 'Containerfile'), ['FROM scratch', 'ADD rootfs.tar /', ...config, ''].join('\n'));
  await podman.ok(['build', '--pull=never', '-q', '-t', tag, context], { timeoutS: 300 });
}

/** The base image stand-in: busybox-static and its applets, nothing else, with Alpine's PATH. */
export async function buildBaseStandIn(podman: Podman, tag: string): Promise<void> {
  const tree = join(podman.dir, 'base');
  mkdirSync(join(tree, 'bin'), { recursive: true });
  mkdirSync(join(tree, 'tmp'));
  copyFileSync(BUSYBOX, join(tree, 'bin', 'busybox'));
  for (const applet of execFileSync(BUSYBOX, ['--list'], { encoding: 'utf8' }).split('\n')) {
    if (applet !== '' && applet !== 'busybox') symlinkSync('busybox', join(tree, 'bin', applet));
  }
  await imageOfTree(podman, tree, tag, ['ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin']);
}

/**
 * The istio-proxy stand-in: the pinned Node with the libraries `ldd` lists (at the paths it lists them), and
 * the stand-in's TypeScript, which that Node runs as it is.
 */
export async function buildSidecarStandIn(podman: Podman): Promise<void> {
  const tree = join(podman.dir, 'sidecar');
  const copy = (from: string, to: string): void => {
    mkdirSync(dirname(join(tree, to)), { recursive: true });
    copyFileSync(from, join(tree, to));
  };
  copy(NODE, '/usr/local/bin/node');
  for (const [, library] of execFileSync('ldd', [NODE], { encoding: 'utf8' }).matchAll(/(\/\S+) \(0x/g)) {
    if (library !== undefined) copy(library, library);
  }
  for (const file of SIDECAR_FILES) copy(join(root, 'test', 'support', file), `/sidecar/${file}`);
  writeFileSync(join(tree, 'sidecar', 'package.json'), '{"type":"module"}\n');
  await imageOfTree(podman, tree, SIDECAR_IMAGE, ['ENTRYPOINT ["/usr/local/bin/node", "/sidecar/sidecar-main.ts"]']);
}

/** Every image the pods use: the stand-ins first, then docker/'s two images for this machine's architecture. */
export async function buildAllImages(podman: Podman): Promise<void> {
  await Promise.all([buildBaseStandIn(podman, baseImage('job.Dockerfile')), buildSidecarStandIn(podman)]);
  await buildImage(podman, { dockerfile: 'Dockerfile', tag: `istio-job-run:${version}`, arch: process.arch as 'x64' | 'arm64' });
  await buildImage(podman, { dockerfile: 'job.Dockerfile', tag: `example-job:${version}` });
}

/**
 * A `kind: Pod` from a template: the classic sidecar's status annotation, the stand-in as the istio-proxy
 * container (with the flags of sidecar-main.ts), and KUBERNETES_SERVICE_HOST, which podman does not inject.
 */
export function podManifest(name: string, spec: PodSpec, sidecarArgs: readonly string[] | undefined): string {
  const job = spec.containers[0] as Container;
  job.env = [{ name: 'KUBERNETES_SERVICE_HOST', value: '10.96.0.1' }, ...(job.env ?? [])];
  if (sidecarArgs !== undefined) {
    spec.containers.push({ name: 'istio-proxy', image: SIDECAR_IMAGE, args: ['--ports', 'real', ...sidecarArgs] });
  }
  return stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, annotations: { 'sidecar.istio.io/status': CLASSIC_STATUS } },
    spec,
  });
}

/** `podman create`'s flags for what a container of a pod manifest sets (the subset the runtime suite's pods use). */
function runFlags(container: Container, pod: { metadata: { annotations: Record<string, string> }; spec: PodSpec }): string[] {
  const flags: string[] = [];
  const context = (container.securityContext ?? {}) as {
    runAsUser?: number;
    runAsGroup?: number;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
  if (context.runAsUser !== undefined) flags.push('--user', `${context.runAsUser}:${context.runAsGroup ?? context.runAsUser}`);
  if (context.readOnlyRootFilesystem === true) flags.push('--read-only');
  if (context.allowPrivilegeEscalation === false) flags.push('--security-opt', 'no-new-privileges');
  for (const capability of context.capabilities?.drop ?? []) flags.push('--cap-drop', capability);
  const memory = container.resources?.limits?.['memory'];
  if (memory !== undefined) flags.push('--memory', memory.replace(/Mi$/, 'm'));
  for (const { name, value, valueFrom } of container.env ?? []) {
    const annotation = /^metadata\.annotations\['(.+)'\]$/.exec(
      (valueFrom as { fieldRef?: { fieldPath?: string } } | undefined)?.fieldRef?.fieldPath ?? '',
    )?.[1];
    flags.push('--env', `${name}=${annotation === undefined ? (value ?? '') : (pod.metadata.annotations[annotation] ?? '')}`);
  }
  for (const mount of container.volumeMounts ?? []) {
    const image = pod.spec.volumes?.find((volume) => volume.name === mount.name)?.image;
    if (image === undefined) throw new Error(`volume ${mount.name}: Pod.run mounts image volumes only`);
    flags.push('--mount', `type=image,source=${image.reference},destination=${mount.mountPath}`);
  }
  if (container.command !== undefined) flags.push('--entrypoint', JSON.stringify(container.command));
  return flags;
}

/** The container's record, as `podman inspect` gives it. */
export interface Inspected {
  State: { Running: boolean; ExitCode: number; Status: string };
  RestartCount: number;
  Config: { User: string };
  EffectiveCaps: string[] | null;
  HostConfig: { ReadonlyRootfs: boolean; SecurityOpt: string[] | null; Memory: number; MemoryReservation: number };
}

/** A pod played from a manifest, and the ways to read what happened in it. */
export class Pod {
  readonly name: string;
  readonly #podman: Podman;

  private constructor(podman: Podman, name: string) {
    this.#podman = podman;
    this.name = name;
  }

  static async play(podman: Podman, name: string, spec: PodSpec, sidecarArgs?: readonly string[]): Promise<Pod> {
    const file = join(podman.dir, `${name}.yaml`);
    writeFileSync(file, podManifest(name, spec, sidecarArgs));
    await podman.ok(['kube', 'play', file], { timeoutS: 120 });
    return new Pod(podman, name);
  }

  /**
   * A pod with image volumes, which `kube play` 4.3 cannot play: the pod made by `pod create`, each container of
   * podManifest's by `create` with its image volumes as `--mount type=image`, its security context and memory
   * limit as flags and its downward-API annotations as values, then all started together as kube play does.
   */
  static async run(podman: Podman, name: string, spec: PodSpec, sidecarArgs?: readonly string[]): Promise<Pod> {
    const manifest = parse(podManifest(name, spec, sidecarArgs)) as { metadata: { annotations: Record<string, string> }; spec: PodSpec };
    if ((manifest.spec.initContainers ?? []).length > 0) throw new Error(`${name}: Pod.run runs no init containers: use Pod.play`);
    await podman.ok(['pod', 'create', '--name', name]);
    for (const container of manifest.spec.containers) {
      await podman.ok([
        'create',
        '--pod',
        name,
        '--name',
        `${name}-${container.name}`,
        ...runFlags(container, manifest),
        container.image,
        ...(container.args ?? []),
      ]);
    }
    await podman.ok(['pod', 'start', name], { timeoutS: 120 });
    return new Pod(podman, name);
  }

  /** The exit code, once the container has exited (bounded). */
  async exitCode(container: string, timeoutS = 90): Promise<number> {
    const out = await this.#podman.ok(['wait', `${this.name}-${container}`], { timeoutS });
    return Number(out.trim());
  }

  async inspect(container: string): Promise<Inspected> {
    return (JSON.parse(await this.#podman.ok(['inspect', `${this.name}-${container}`])) as Inspected[])[0] as Inspected;
  }

  async logs(container: string): Promise<{ stdout: string; stderr: string }> {
    const result = await this.#podman.run(['logs', `${this.name}-${container}`]);
    return { stdout: result.stdout, stderr: result.stderr };
  }

  /** The container's output as it comes (`podman logs -f`), to wait on a line. */
  follow(container: string, timeoutS = 90): Running {
    const command = this.#podman.command(['logs', '-f', `${this.name}-${container}`], timeoutS);
    const running = start(command.file, command.args, { env: command.env, timeoutMs: (timeoutS + 10) * 1000 });
    running.process.stdin?.end();
    return running;
  }

  /** Exit codes podman recorded for a container ("died" events), e.g. an init container it has removed. */
  async diedCodes(container: string): Promise<number[]> {
    const out = await this.#podman.ok([
      'events',
      '--stream=false',
      '--filter',
      `container=${this.name}-${container}`,
      '--filter',
      'event=died',
      '--format',
      '{{.ContainerExitCode}}',
    ]);
    return out.split('\n').filter(Boolean).map(Number);
  }

  /** The sidecar stand-in's JSON events (its stdout). */
  async sidecarEvents(): Promise<SidecarLogEvent[]> {
    const { stdout } = await this.logs('istio-proxy');
    return stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as SidecarLogEvent);
  }

  async stop(timeoutS: number): Promise<void> {
    await this.#podman.ok(['pod', 'stop', '-t', String(timeoutS), this.name], { timeoutS: timeoutS + 60 });
  }
}

export interface SidecarLogEvent {
  readonly event: string;
  readonly mono: number;
  readonly listener?: string;
  readonly method?: string;
  readonly path?: string;
  readonly status?: number | string;
}

/** The requests the stand-in answered, as [method path status]. */
export const requests = (events: readonly SidecarLogEvent[], path: string): string[] =>
  events.filter((e) => e.event === 'request' && e.path === path).map((e) => `${e.method} ${e.status}`);
