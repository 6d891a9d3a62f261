// Whether the pod's Istio sidecar is classic, native or absent: `auto` resolved once, from what the pod says
// about itself. Pure: what was read (configuration.ts reads it) in, the mode and why out.

import { ENVOY_ADMIN_VARIABLE, type SidecarMode, type SidecarSetting, STATUS_VARIABLE } from './options.ts';

export const PROXY_CONTAINER = 'istio-proxy';
/** The annotation Istio's injector writes; STATUS_VARIABLE is filled from it. */
export const STATUS_ANNOTATION = 'sidecar.istio.io/status';

type Env = Readonly<Record<string, string | undefined>>;

export interface ModeInputs {
  /** The injection status (sidecar.istio.io/status) and where it was read: the variable, or the annotations file. */
  readonly status?: { readonly value: string; readonly from: string };
  /** An annotations file that was read and holds no sidecar.istio.io/status: no Istio injection. */
  readonly annotationsWithoutStatus?: string;
  /** scuttle's ENVOY_ADMIN_API is set. */
  readonly envoyAdmin: boolean;
  /** KUBERNETES_SERVICE_HOST is set. */
  readonly inPod: boolean;
}

export interface ResolvedMode {
  readonly mode: SidecarMode;
  /** Why this mode: shown at debug level, or at info when it is a guess worth knowing. */
  readonly reason: string;
  readonly level: 'debug' | 'info' | 'warn';
}

/** What resolveMode needs to know: the status variable, the annotations file (its values, and where it is). */
export function modeInputs(
  env: Env,
  envoyAdmin: boolean,
  annotations?: { readonly path: string; readonly values: ReadonlyMap<string, string> },
): ModeInputs {
  const variable = env[STATUS_VARIABLE];
  const annotation = annotations?.values.get(STATUS_ANNOTATION);
  const base = { envoyAdmin, inPod: env['KUBERNETES_SERVICE_HOST'] !== undefined };
  if (variable !== undefined) return { ...base, status: { value: variable, from: STATUS_VARIABLE } };
  if (annotations === undefined) return base;
  if (annotation !== undefined) return { ...base, status: { value: annotation, from: `${STATUS_ANNOTATION} in ${annotations.path}` } };
  return { ...base, annotationsWithoutStatus: annotations.path };
}

/**
 * Resolves `auto` once: from the pod's injection status, else from scuttle's ENVOY_ADMIN_API (an Envoy to wait
 * for and quit, even outside Kubernetes), else from whether this is a pod at all. The status wins over
 * ENVOY_ADMIN_API: it is what the pod really has, and quitting a native sidecar harms the job.
 */
export function resolveMode(setting: SidecarSetting, inputs: ModeInputs): ResolvedMode {
  if (setting !== 'auto') return { mode: setting, reason: `sidecar mode ${setting} (set explicitly)`, level: 'debug' };

  const { status, envoyAdmin: admin, inPod } = inputs;
  if (status !== undefined) {
    const resolved = fromStatus(status.value, status.from);
    if (!admin || resolved.mode === 'classic') return resolved;
    // The manifest still says scuttle; say once why its Envoy is neither waited for nor told to quit.
    return {
      ...resolved,
      reason: `${resolved.reason}; ${ENVOY_ADMIN_VARIABLE} (scuttle) does not make it classic`,
      level: 'info',
    };
  }
  if (inputs.annotationsWithoutStatus !== undefined && !admin) {
    return {
      mode: 'none',
      reason: `${inputs.annotationsWithoutStatus} has no ${STATUS_ANNOTATION}: no Istio sidecar was injected`,
      level: 'debug',
    };
  }
  if (admin) {
    return {
      mode: 'classic',
      reason: `${ENVOY_ADMIN_VARIABLE} is set (scuttle)${inPod ? '' : ', though not in a Kubernetes pod'}: assuming a classic sidecar`,
      level: inPod ? 'debug' : 'info',
    };
  }
  if (!inPod) {
    return {
      mode: 'none',
      reason: 'not in a Kubernetes pod (KUBERNETES_SERVICE_HOST is unset): running the command without a sidecar',
      level: 'info',
    };
  }
  return { mode: 'classic', reason: `in a pod without ${STATUS_VARIABLE}: assuming a classic sidecar`, level: 'debug' };
}

function fromStatus(status: string, from: string): ResolvedMode {
  if (status.trim() === '') {
    return { mode: 'none', reason: `${from} is empty: the pod has no injected sidecar`, level: 'debug' };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(status);
  } catch {
    return unreadable(status, from, 'it is not JSON');
  }
  if (listsProxy(parsed, 'initContainers')) {
    return { mode: 'native', reason: `${PROXY_CONTAINER} is a native sidecar (listed under initContainers)`, level: 'debug' };
  }
  if (listsProxy(parsed, 'containers')) {
    return { mode: 'classic', reason: `${PROXY_CONTAINER} is a classic sidecar (listed under containers)`, level: 'debug' };
  }
  return unreadable(status, from, `it lists no ${PROXY_CONTAINER} container`);
}

function listsProxy(status: unknown, key: 'initContainers' | 'containers'): boolean {
  if (typeof status !== 'object' || status === null) return false;
  const list: unknown = key in status ? Reflect.get(status, key) : undefined;
  return Array.isArray(list) && list.includes(PROXY_CONTAINER);
}

function unreadable(status: string, from: string, why: string): ResolvedMode {
  const shown = status.length > 120 ? `${status.slice(0, 117)}...` : status;
  return {
    mode: 'classic',
    reason: `cannot read ${from} (${why}): ${JSON.stringify(shown)}; assuming a classic sidecar`,
    level: 'warn',
  };
}
