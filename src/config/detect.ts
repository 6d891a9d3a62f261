// Which sidecars the pod has, and where each listens: from the options, the environment and the pod's
// annotations (each kind's own rule, in kinds.ts) into a list. Pure: configuration.ts reads the file
// and resolves the mode, and hands both in.

import { errorMessage } from '../errors.ts';
import { type ResolvedMode, STATUS_ANNOTATION } from './mode.ts';
import { ENVOY_ADMIN_VARIABLE, type Options, STATUS_VARIABLE } from './options.ts';
import {
  endpointUrl,
  ISTIO,
  istioPort,
  kindNamed,
  type PodAnnotations,
  type QuitTarget,
  SIDECAR_KINDS,
  type SidecarKind,
} from './kinds.ts';
import { type AlsoEntry, PartialError, port, spacedUrls } from './values.ts';
import { listenerKey } from '../http/listener.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** One sidecar to wait for (when it has a readiness URL) and to stop. */
export interface Sidecar {
  readonly kind: SidecarKind;
  /** Where it was found: a flag, a variable, the annotations file. */
  readonly from: string;
  readonly ready?: URL;
  /** Each with the kind whose rules read its answers (the Istio list can hold other sidecars' endpoints). */
  readonly quit: readonly QuitTarget[];
}

export interface Note {
  readonly level: 'debug' | 'info' | 'warn';
  readonly message: string;
}

export interface DetectInputs {
  readonly options: Options;
  readonly env: Env;
  /** The Istio sidecar's mode, resolved once. */
  readonly mode: ResolvedMode;
  /** scuttle's ENVOY_ADMIN_API is set. */
  readonly envoyAdmin: boolean;
  /** The annotations file that was read, and where it is. */
  readonly annotations?: { readonly path: string; readonly values: ReadonlyMap<string, string> };
}

export interface Detection {
  /** Istio first when it is classic. */
  readonly sidecars: readonly Sidecar[];
  readonly notes: readonly Note[];
  /** Usage errors (exit 125); the sidecars that did parse are still listed, so they are still told to quit. */
  readonly errors: readonly string[];
  /** A loopback URL to try once: if it answers, a sidecar seems to be there although the status says none. */
  readonly probe?: URL;
}

const STATUS_PORT = istioPort('status');
const ALSO = '--also/ISTIO_JOB_RUN_ALSO';

export function detect(inputs: DetectInputs): Detection {
  const { options, env, annotations } = inputs;
  const errors: string[] = [];
  const notes: Note[] = [];
  const sidecars: Sidecar[] = [];
  if (inputs.mode.mode === 'classic') {
    sidecars.push({ kind: ISTIO, from: istioSource(inputs), ready: options.readyUrl, quit: options.quitUrls });
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

  if (annotations !== undefined) {
    const { values, path } = annotations;
    const pod: PodAnnotations = {
      get: (key) => values.get(key),
      is: (key, value) => values.get(key)?.trim().toLowerCase() === value,
    };
    const named = new Set<string>(options.also.map((entry) => entry.kind));
    const kinds: readonly SidecarKind[] = SIDECAR_KINDS;
    for (const kind of kinds) {
      const finding = kind.fromAnnotations?.(pod);
      if (finding === undefined) continue;
      if (finding.kind === 'note') {
        notes.push({ level: finding.level, message: finding.message });
        continue;
      }
      const raw = finding.portAnnotation === undefined ? undefined : values.get(finding.portAnnotation);
      let ports: number[];
      try {
        ports = raw === undefined ? [] : [port(raw)];
      } catch (error) {
        errors.push(`pod annotations ${JSON.stringify(path)}: ${finding.portAnnotation}: ${errorMessage(error)}`);
        continue;
      }
      // --also names this kind: its ports win over the file's.
      if (!named.has(kind.name)) sidecars.push(build(kind, path, ports, finding.paths));
    }
  }
  for (const entry of options.also) sidecars.push(fromAlso(entry));
  fromVariables(env, sidecars, notes, errors);
  return { sidecars, notes, errors, ...(probe === undefined ? {} : { probe }) };
}

function istioSource({ options, env, envoyAdmin, annotations }: DetectInputs): string {
  if (options.sidecar !== 'auto') return `--sidecar ${options.sidecar}`;
  if (env[STATUS_VARIABLE] !== undefined) return STATUS_VARIABLE;
  if (annotations?.values.has(STATUS_ANNOTATION) === true) return annotations.path;
  if (envoyAdmin) return ENVOY_ADMIN_VARIABLE;
  return 'assumed in a pod';
}

const loopback = (portNumber: number, path: string): URL => new URL(`http://127.0.0.1:${portNumber}${path}`);

/** A sidecar of a kind on the given ports (the kind's defaults for those not given), with these paths. */
function build(kind: SidecarKind, from: string, ports: readonly number[], paths: { ready?: string; quit?: string } = {}): Sidecar {
  const portOf = (listener: number): number => ports[listener] ?? kind.listeners[listener]?.port ?? 0;
  const ready = kind.ready === undefined ? undefined : loopback(portOf(kind.ready.listener), paths.ready ?? kind.ready.path);
  const quit = loopback(portOf(kind.quit.listener), paths.quit ?? kind.quit.path);
  return { kind, from, quit: [{ url: quit, kind }], ...(ready === undefined ? {} : { ready }) };
}

function fromAlso(entry: AlsoEntry): Sidecar {
  return build(kindNamed(entry.kind), ALSO, entry.ports);
}

/**
 * The kinds whose operator hands the job container its quit URLs in a variable (the Cloud SQL proxy operator's
 * CSQL_PROXY_QUIT_URLS, kinds.ts): each URL a quit of that kind, nothing to wait for (the variable says only where
 * each proxy quits). A URL another sidecar found already quits (the same listener and path) is quit once.
 */
function fromVariables(env: Env, sidecars: Sidecar[], notes: Note[], errors: string[]): void {
  const quitting = new Set(sidecars.flatMap((sidecar) => sidecar.quit.map(({ url }) => quitKey(url))));
  for (const kind of SIDECAR_KINDS as readonly SidecarKind[]) {
    const variable = kind.template.quitUrlsVariable;
    const raw = variable === undefined ? undefined : env[variable];
    if (variable === undefined || raw === undefined) continue;
    let urls: readonly URL[];
    try {
      urls = spacedUrls(endpointUrl(kind, kind.quit), kind.label)(raw);
    } catch (error) {
      errors.push(`${variable}: ${errorMessage(error)}`);
      urls = error instanceof PartialError ? (error.partial as URL[]) : [];
    }
    if (raw.trim() === '') notes.push({ level: 'info', message: `${variable} is set but empty: no ${kind.label} to stop` });
    const quit = urls.filter((url) => !quitting.has(quitKey(url))).map((url) => ({ url, kind }));
    if (quit.length > 0) sidecars.push({ kind, from: variable, quit });
  }
}

/** A quit's identity: its listener (loopback names one host) and path. */
const quitKey = (url: URL): string => `${listenerKey(url)}${url.pathname}${url.search}`;

/** The one info line: every sidecar found, and where from. */
export function describeSidecars(sidecars: readonly Sidecar[]): string {
  if (sidecars.length === 0) return 'sidecars: none to wait for or stop';
  return `sidecars: ${sidecars.map((sidecar) => `${sidecar.kind.name} (from ${sidecar.from})`).join(', ')}`;
}
