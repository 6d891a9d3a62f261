// Which sidecars the pod has, and where each listens: from the flags, the environment and the pod's
// annotations into a list. Pure: main reads the annotations file and hands its text in.

import { type Annotations, parseAnnotations } from './annotations.ts';
import { type ModeInputs, type ResolvedMode, resolveMode } from './mode.ts';
import { type AlsoEntry, type Options, port, STATUS_VARIABLE } from './options-table.ts';
import { kindNamed, type OtherKindName, type SidecarKind } from './sidecar-kinds.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** One sidecar to wait for (when it has a readiness URL) and to stop. */
export interface Sidecar {
  readonly kind: SidecarKind;
  /** Where it was found: a flag, a variable, the annotations file. */
  readonly from: string;
  readonly ready?: URL;
  readonly quit: readonly URL[];
}

export interface Note {
  readonly level: 'debug' | 'info' | 'warn';
  readonly message: string;
}

/** The annotations file as main found it: its text, or why it could not be read. */
export type AnnotationsFile = { readonly path: string; readonly text: string } | { readonly path: string; readonly error: string };

export interface DetectInputs {
  readonly options: Options;
  readonly env: Env;
  /** scuttle's ENVOY_ADMIN_API is set (scuttle.ts reads it). */
  readonly envoyAdmin: boolean;
  readonly annotations?: AnnotationsFile;
}

export interface Detection {
  /** The Istio sidecar's mode; `sidecars` has Istio first when it is classic. */
  readonly mode: ResolvedMode;
  readonly sidecars: readonly Sidecar[];
  readonly notes: readonly Note[];
  /** Usage errors (exit 125); the sidecars that did parse are still listed, so they are still told to quit. */
  readonly errors: readonly string[];
  /** A loopback URL to try once: if it answers, a sidecar seems to be there although the status says none. */
  readonly probe?: URL;
}

export const STATUS_ANNOTATION = 'sidecar.istio.io/status';
const STATUS_PORT = 15020;
const ALSO = '--also/ISTIO_JOB_RUN_ALSO';

export function detect(inputs: DetectInputs): Detection {
  const { options, env } = inputs;
  const errors: string[] = [];
  const notes: Note[] = [];
  let annotations: Annotations | undefined;
  const file = inputs.annotations;
  if (file !== undefined) {
    if ('error' in file) errors.push(`pod annotations ${JSON.stringify(file.path)}: ${file.error}`);
    else {
      annotations = parseAnnotations(file.text);
      for (const error of annotations.errors) errors.push(`pod annotations ${JSON.stringify(file.path)}: ${error}`);
    }
  }
  const where = file === undefined ? '' : file.path;

  const mode = resolveMode(options.sidecar, modeInputs(env, inputs.envoyAdmin, annotations, where));
  const sidecars: Sidecar[] = [];
  if (mode.mode === 'classic') {
    sidecars.push({
      kind: kindNamed('istio'),
      from: istioSource(options, env, inputs.envoyAdmin, annotations, where),
      ready: options.readyUrl,
      quit: options.quitUrls,
    });
  }
  const status = env[STATUS_VARIABLE];
  let probe: URL | undefined;
  if (options.sidecar === 'auto' && status !== undefined && status.trim() === '') {
    notes.push({
      level: 'info',
      message:
        `${STATUS_VARIABLE} is set but empty: the pod has no Istio sidecar injected, runs in ambient mode, or the ` +
        `variable's fieldPath names a missing annotation (a misspelled key such as metadata.annotations['sidecar.istio.io/stauts'] ` +
        `also reads as empty; the key is metadata.annotations['${STATUS_ANNOTATION}'])`,
    });
    if (env['KUBERNETES_SERVICE_HOST'] !== undefined) probe = new URL(`http://127.0.0.1:${STATUS_PORT}/`);
  }

  const explicit = new Set(options.also.map((entry) => entry.kind));
  if (annotations !== undefined) {
    for (const found of fromAnnotations(annotations.values, where)) {
      if ('note' in found) notes.push(found.note);
      else if ('error' in found) errors.push(found.error);
      else if (!explicit.has(found.kind.name as OtherKindName)) sidecars.push(found);
    }
  }
  for (const entry of options.also) sidecars.push(fromAlso(entry));
  return { mode, sidecars, notes, errors, ...(probe === undefined ? {} : { probe }) };
}

/** What mode.ts needs to know, read here once. */
export function modeInputs(env: Env, envoyAdmin: boolean, annotations?: Annotations, where = ''): ModeInputs {
  const variable = env[STATUS_VARIABLE];
  const annotation = annotations?.values.get(STATUS_ANNOTATION);
  const base = { envoyAdmin, inPod: env['KUBERNETES_SERVICE_HOST'] !== undefined };
  if (variable !== undefined) return { ...base, status: { value: variable, from: STATUS_VARIABLE } };
  if (annotation !== undefined) return { ...base, status: { value: annotation, from: `${STATUS_ANNOTATION} in ${where}` } };
  if (annotations !== undefined) return { ...base, annotationsWithoutStatus: where };
  return base;
}

function istioSource(options: Options, env: Env, envoyAdmin: boolean, annotations: Annotations | undefined, where: string): string {
  if (options.sidecar !== 'auto') return `--sidecar ${options.sidecar}`;
  if (env[STATUS_VARIABLE] !== undefined) return STATUS_VARIABLE;
  if (annotations?.values.has(STATUS_ANNOTATION) === true) return where;
  if (envoyAdmin) return 'ENVOY_ADMIN_API';
  return 'assumed in a pod';
}

const loopback = (portNumber: number, path: string): URL => new URL(`http://127.0.0.1:${portNumber}${path}`);

/** A sidecar of a kind on the given ports (the kind's defaults for those not given), with these paths. */
function build(kind: SidecarKind, from: string, ports: readonly number[], paths: { ready?: string; quit?: string } = {}): Sidecar {
  const portOf = (listener: number): number => ports[listener] ?? kind.listeners[listener]?.port ?? 0;
  const ready = kind.ready === undefined ? undefined : loopback(portOf(kind.ready.listener), paths.ready ?? kind.ready.path);
  const quit = loopback(portOf(kind.quit.listener), paths.quit ?? kind.quit.path);
  return { kind, from, quit: [quit], ...(ready === undefined ? {} : { ready }) };
}

function fromAlso(entry: AlsoEntry): Sidecar {
  return build(kindNamed(entry.kind), ALSO, entry.ports);
}

type Found = Sidecar | { readonly note: Note } | { readonly error: string };

const LINKERD_NATIVE = ['config.alpha.linkerd.io', 'config.beta.linkerd.io', 'config.linkerd.io'].map(
  (prefix) => `${prefix}/proxy-enable-native-sidecar`,
);

/** The rules per sidecar kind, each from how its injector marks a pod (the README's Sidecars section). */
function fromAnnotations(values: ReadonlyMap<string, string>, where: string): Found[] {
  const found: Found[] = [];
  const is = (key: string, value: string): boolean => values.get(key)?.trim().toLowerCase() === value;
  const portFrom = (key: string): number[] | string => {
    const raw = values.get(key);
    if (raw === undefined) return [];
    try {
      return [port(raw)];
    } catch (error) {
      return `pod annotations ${JSON.stringify(where)}: ${key}: ${(error as Error).message}`;
    }
  };
  const add = (name: OtherKindName, ports: number[] | string, paths: { ready?: string; quit?: string } = {}): void => {
    if (typeof ports === 'string') found.push({ error: ports });
    else found.push(build(kindNamed(name), where, ports, paths));
  };

  if (values.has('linkerd.io/proxy-version')) {
    const native = LINKERD_NATIVE.find((key) => is(key, 'true'));
    if (native !== undefined) {
      found.push({ note: { level: 'info', message: `linkerd-proxy is a native sidecar (${native}: "true"): leaving it to Kubernetes` } });
    } else if (is('config.linkerd.io/proxy-admin-shutdown', 'enabled')) {
      add('linkerd', []);
    } else {
      found.push({
        note: {
          level: 'warn',
          message:
            'the pod has a linkerd-proxy whose shutdown endpoint is not enabled: the pod will not complete after the job. ' +
            'Set the pod annotation config.linkerd.io/proxy-admin-shutdown: enabled (or make it a native sidecar ' +
            'with config.linkerd.io/proxy-enable-native-sidecar: "true")',
        },
      });
    }
  }

  if (is('vault.hashicorp.com/agent-inject-status', 'injected')) {
    if (is('vault.hashicorp.com/agent-pre-populate-only', 'true')) {
      found.push({ note: { level: 'debug', message: 'vault-agent is pre-populate only: no sidecar to stop' } });
    } else if (is('vault.hashicorp.com/agent-enable-quit', 'true')) {
      add('vault-agent', portFrom('vault.hashicorp.com/agent-cache-listener-port'));
    } else {
      found.push({
        note: {
          level: 'warn',
          message:
            'the pod has a vault-agent sidecar without its quit endpoint: the pod will not complete after the job. ' +
            'Set the pod annotation vault.hashicorp.com/agent-enable-quit: "true" (or ' +
            'vault.hashicorp.com/agent-pre-populate-only: "true" when the job needs no renewal)',
        },
      });
    }
  }

  if (is('dapr.io/enabled', 'true')) add('dapr', portFrom('dapr.io/http-port'));

  if (is('consul.hashicorp.com/connect-inject-status', 'injected')) {
    const lifecycle = 'consul.hashicorp.com/enable-sidecar-proxy-lifecycle';
    if (is(lifecycle, 'false')) {
      found.push({ note: { level: 'info', message: `consul-dataplane has ${lifecycle}: "false": leaving it alone` } });
    } else {
      const prefix = 'consul.hashicorp.com/sidecar-proxy-lifecycle-graceful';
      const paths = {
        ...pathFrom(values.get(`${prefix}-startup-path`), 'ready'),
        ...pathFrom(values.get(`${prefix}-shutdown-path`), 'quit'),
      };
      add('consul-dataplane', portFrom(`${prefix}-port`), paths);
    }
  }
  return found;
}

const pathFrom = (raw: string | undefined, key: 'ready' | 'quit'): { ready?: string; quit?: string } =>
  raw === undefined || raw.trim() === '' ? {} : { [key]: raw.startsWith('/') ? raw : `/${raw}` };

/** The one info line: every sidecar found, and where from. */
export function describeSidecars(sidecars: readonly Sidecar[]): string {
  if (sidecars.length === 0) return 'sidecars: none to wait for or stop';
  return `sidecars: ${sidecars.map((sidecar) => `${sidecar.kind.name} (from ${sidecar.from})`).join(', ')}`;
}
