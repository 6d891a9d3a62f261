// Which sidecars a pod's pods will have: each kind recognised as its own injector recognises a pod (its markers,
// the namespace, its own settings), declared as a container, or shown by a script's quit of it (src/config/kinds.ts
// holds those facts); in which form, native or classic; whether its quit is switched on and on which port; and
// which sidecar each of a script's requests speaks to.

import type { Node, Pair, YAMLMap } from 'yaml';
import { resolveMode, STATUS_ANNOTATION } from '../../config/mode.ts';
import { INJECTED_NAMESPACES_FLAG } from '../../config/tool-flags.ts';
import {
  ISTIO,
  istioPort,
  type KindName,
  readBoolFlag,
  readFirst,
  readSetting,
  SIDECAR_KINDS,
  type SidecarKind,
  settingOn,
} from '../../config/kinds.ts';
import { installForm, type Profile } from '../../config/profile.ts';
import { LOOPBACK_QUIT } from '../script/requests.ts';
import { basename } from '../script/commands.ts';
import { get, items, text } from '../yaml/source.ts';
import { argvOf, programsOf, type RequestTarget } from './containers.ts';

/** Where the user says namespaces inject sidecars: kind -> namespaces ('*': every one). */
export type InjectedNamespaces = ReadonlyMap<KindName, ReadonlySet<string>>;

export interface PodSidecar {
  readonly kind: SidecarKind;
  readonly form: 'classic' | 'native';
  /** What shows it: "annotation linkerd.io/inject: enabled", "container cloud-sql-proxy". */
  readonly why: string;
  /** Why the profile's install gives it this form, where the pod does not say (src/config/profile.ts, installForm). */
  readonly formBy?: string;
  /** Known from the manifest (a marker, a container, the namespaces flag), or only from a script's request. */
  readonly known: boolean;
  /** Whether its quit endpoint answers: true, false, or undefined when only the cluster's defaults say. */
  readonly quitOn: boolean | undefined;
  /** The port of its quit listener in this pod. */
  readonly quitPort: number;
  /** Its declared container (the auth proxies). */
  readonly container?: YAMLMap;
  /** It has no quit endpoint at all (the Cloud SQL proxy v1). */
  readonly noQuit?: boolean;
  /** Its container runs under kubexit, which stops it when the job's container ends. */
  readonly kubexit?: boolean;
}

/** Envoy's own admin port: a quit there stops Envoy, not pilot-agent. */
export const ENVOY_ADMIN_PORT = istioPort('envoy-admin');

export type Strings = ReadonlyMap<string, { value: string; pair: Pair<Node, Node | null> }>;

/** What the template's own injection markers say of a kind: asked for (and what says so), declined, or nothing. */
function markedFor(kind: SidecarKind, annotations: Strings, labels: Strings): { asked?: boolean; why?: string } {
  const markers = kind.template;
  const inject = markers.inject;
  if (inject === undefined) return {};
  // The first key present decides, a label before an annotation, as the injectors read them (an empty value too).
  const decided =
    inject.labels.map((key) => ['label', key, labels.get(key)] as const).find(([, , found]) => found !== undefined) ??
    inject.annotations.map((key) => ['annotation', key, annotations.get(key)] as const).find(([, , found]) => found !== undefined);
  if (decided === undefined) return {};
  const [where, key, found] = decided;
  // Off, or a value the injector refuses the pod for: no pod runs with this sidecar.
  const setting = readSetting(inject.reading, found?.value);
  return { ...(setting === 'unset' ? {} : { asked: setting === 'on' }), why: `${where} ${key}: "${found?.value}"` };
}

/** Whether the template says the kind is not there: its injection declined, an init container only, ambient mode. */
export function declined(kind: SidecarKind, annotations: Strings, labels: Strings): boolean {
  const { initOnly, sidecarless } = kind.template;
  if (markedFor(kind, annotations, labels).asked === false) return true;
  if (initOnly !== undefined && settingOn(initOnly.reading, annotations.get(initOnly.annotation)?.value)) return true;
  return sidecarless !== undefined && labels.get(sidecarless.label)?.value === sidecarless.value;
}

/** An annotation of the sidecar's own settings (not one of its injection markers): the key, or undefined. */
function ownSetting(kind: SidecarKind, annotations: Strings): string | undefined {
  const domains = kind.template.settings ?? [];
  const markers = new Set(kind.template.inject?.annotations ?? []);
  return [...annotations.keys()].find((key) => {
    const domain = key.slice(0, key.indexOf('/'));
    return !markers.has(key) && domains.some((own) => domain === own || domain.endsWith(`.${own}`));
  });
}

/**
 * A sidecar its injector adds: the pod asks for it, is already injected, its namespace injects, or the template
 * sets the sidecar's own settings (the author expects it there: its namespace injects it).
 */
export function injected(
  kind: SidecarKind,
  annotations: Strings,
  labels: Strings,
  namespaces: InjectedNamespaces,
  namespace: string,
  profile: Profile | undefined,
): PodSidecar[] {
  const markers = kind.template;
  let { asked, why } = markedFor(kind, annotations, labels);
  if (asked === false) return [];
  if (asked === undefined && markers.revisionLabel !== undefined) {
    const revision = labels.get(markers.revisionLabel);
    if (revision !== undefined) {
      asked = true;
      why = `label ${markers.revisionLabel}: "${revision.value}"`;
    }
  }
  if (markers.injectedAnnotation !== undefined && annotations.has(markers.injectedAnnotation)) {
    if (kind === ISTIO) {
      const status = annotations.get(STATUS_ANNOTATION)?.value ?? '';
      const mode = resolveMode('auto', { status: { value: status, from: STATUS_ANNOTATION }, envoyAdmin: false, inPod: true });
      if (mode.mode === 'none') return [];
      return [sidecar(kind, mode.mode === 'native' ? 'native' : 'classic', `already injected (${STATUS_ANNOTATION})`, annotations)];
    }
    asked = true;
    why = `already injected (${markers.injectedAnnotation})`;
  }
  if (asked === undefined && declined(kind, annotations, labels)) return [];
  if (asked === undefined) {
    const set = namespaces.get(kind.name as KindName);
    if (set !== undefined && (set.has('*') || set.has(namespace))) {
      asked = true;
      why = `namespace ${namespace} injects it (${INJECTED_NAMESPACES_FLAG})`;
    }
  }
  const setting = asked === undefined ? ownSetting(kind, annotations) : undefined;
  if (setting !== undefined) {
    asked = true;
    why = `annotation ${setting}, its own setting: its namespace injects it`;
  }
  if (asked !== true || why === undefined) return [];
  if (markers.initOnly !== undefined && settingOn(markers.initOnly.reading, annotations.get(markers.initOnly.annotation)?.value)) return [];
  return [sidecar(kind, formOf(kind, annotations, profile), why, annotations)];
}

/** A namespace's name (a DNS label), or * for every namespace. */
const NAMESPACE = /^(\*|[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)$/;

/** The kinds an injector adds, which a namespace can switch on: the kinds with injection markers. */
const INJECTED_KINDS = (SIDECAR_KINDS as readonly SidecarKind[])
  .filter((kind) => kind.template.inject !== undefined)
  .map((kind) => kind.name);

/** `[KIND=]NAMESPACE,...` (KIND istio when left out) added to MAP; a problem said in one line. */
export function addInjectedNamespaces(raw: string, map: Map<KindName, Set<string>>): string | undefined {
  for (const item of raw.split(',')) {
    const entry = item.trim();
    if (entry === '') continue;
    const [kind, namespace] = entry.includes('=') ? (entry.split('=', 2) as [string, string]) : [ISTIO.name, entry];
    if (!INJECTED_KINDS.includes(kind)) return `${JSON.stringify(kind)} is not a sidecar an injector adds (${INJECTED_KINDS.join(', ')})`;
    if (!NAMESPACE.test(namespace))
      return `${JSON.stringify(namespace)} is not a namespace name (lower-case letters, digits and -, or * for every one)`;
    const set = map.get(kind as KindName) ?? new Set<string>();
    set.add(namespace);
    map.set(kind as KindName, set);
  }
  return undefined;
}

/** The form of an injected sidecar: the pod's own annotation, on or off, beats the profile's install; neither: classic. */
export function formOf(
  kind: SidecarKind,
  annotations: ReadonlyMap<string, { value: string }>,
  profile: Profile | undefined,
): Pick<PodSidecar, 'form' | 'formBy'> {
  const native = kind.template.native;
  const setting = native === undefined ? 'unset' : readFirst(native.keys, native.reading, (key) => annotations.get(key)?.value);
  if (setting === 'on') return { form: 'native' };
  const install = profile === undefined || setting === 'off' ? undefined : installForm(kind, profile);
  return install === undefined ? { form: 'classic' } : { form: install.form, formBy: install.why };
}

/** Whether the pod switches the kind's quit on, from its annotations (undefined: the annotation's default holds). */
function quitOnByAnnotation(kind: SidecarKind, annotations: ReadonlyMap<string, { value: string }>): boolean | undefined {
  const quitSwitch = kind.template.quitSwitch;
  if (quitSwitch === 'always') return true;
  if (!('annotation' in quitSwitch)) return undefined;
  return settingOn(quitSwitch.reading, annotations.get(quitSwitch.annotation)?.value, quitSwitch.byDefault);
}

function portByAnnotation(kind: SidecarKind, annotations: ReadonlyMap<string, { value: string }>): number {
  const fallback = kind.listeners[kind.quit.listener]?.port ?? 0;
  const at = kind.template.quitPort;
  if (at === undefined || !('annotation' in at)) return fallback;
  const port = Number(annotations.get(at.annotation)?.value);
  return Number.isInteger(port) && port > 0 && port < 65_536 ? port : fallback;
}

function sidecar(
  kind: SidecarKind,
  form: 'classic' | 'native' | Pick<PodSidecar, 'form' | 'formBy'>,
  why: string,
  annotations: ReadonlyMap<string, { value: string }>,
  known = true,
): PodSidecar {
  const quitOn = quitOnByAnnotation(kind, annotations);
  const formed = typeof form === 'string' ? { form } : form;
  return { kind, ...formed, why, known, quitOn, quitPort: portByAnnotation(kind, annotations) };
}

/** A sidecar no marker shows, that a script waits for, or quits (SHOWN: then the pod has it). */
export function expected(
  kind: SidecarKind,
  annotations: Strings,
  shown?: RequestTarget,
  sharesProcesses = false,
  profile?: Profile,
): PodSidecar {
  const form = formOf(kind, annotations, profile);
  if (shown === undefined) return sidecar(kind, form, 'its script speaks to it', annotations, false);
  const { program } = shown.request;
  const why =
    shown.request.method !== 'SIGNAL'
      ? `its script quits it on line ${shown.line}, so its namespace injects it`
      : `its script signals ${program} on line ${shown.line}${sharesProcesses ? '' : ', which it cannot reach without shareProcessNamespace: true'}`;
  return sidecar(kind, form, why, annotations);
}

/** A container that may be a declared sidecar: native as an init container that always restarts, else classic. */
interface Candidate {
  readonly node: YAMLMap;
  readonly form: 'native' | 'classic';
  /** Its image's repository, the last part of its name. */
  readonly repository: string;
  readonly words: readonly string[];
  readonly programs: readonly string[];
}

/** The containers declared() looks at, each read once for every kind. */
export function sidecarCandidates(initContainers: readonly YAMLMap[], regular: readonly YAMLMap[]): Candidate[] {
  const candidates = [
    ...initContainers.filter((node) => text(get(node, 'restartPolicy')) === 'Always').map((node) => [node, 'native'] as const),
    ...regular.map((node) => [node, 'classic'] as const),
  ];
  return candidates.map(([node, form]) => {
    const image = text(get(node, 'image')) ?? '';
    const { words } = argvOf(node);
    return { node, form, repository: basename(image.replace(/[@:][^/]*$/, '')), words, programs: programsOf(words) };
  });
}

/** A sidecar container the user declares (the auth proxies), classic or native. */
export function declared(kind: SidecarKind, candidates: readonly Candidate[]): PodSidecar[] {
  const markers = kind.template.container;
  if (markers === undefined) return [];
  const found: PodSidecar[] = [];
  for (const { node, form, repository, words, programs } of candidates) {
    const program = programs.find((word) => markers.programs.includes(word));
    if (!markers.images.some((name) => repository.includes(name)) && program === undefined) continue;
    const quitSwitch = kind.template.quitSwitch;
    const flag = typeof quitSwitch === 'object' && 'flag' in quitSwitch ? quitSwitch.flag : undefined;
    const portFlag = kind.template.quitPort !== undefined && 'flag' in kind.template.quitPort ? kind.template.quitPort.flag : undefined;
    const portWord = portFlag === undefined ? undefined : words.findIndex((word) => word === portFlag || word.startsWith(`${portFlag}=`));
    const portText =
      portWord === undefined || portWord < 0
        ? undefined
        : (words[portWord] as string).includes('=')
          ? (words[portWord] as string).split('=')[1]
          : words[portWord + 1];
    // The release is the program's where the command names it, else the image's.
    const noQuit =
      program !== undefined
        ? (kind.template.noQuitPrograms ?? []).includes(program)
        : (kind.template.noQuitImages ?? []).includes(repository);
    const quitOn = flag === undefined ? true : readBoolFlag(words, flag) === 'on';
    found.push({
      kind,
      form,
      why: `container ${text(get(node, 'name')) ?? '(unnamed)'}`,
      known: true,
      quitOn: noQuit ? false : quitOn,
      quitPort: Number(portText) > 0 ? Number(portText) : (kind.listeners[kind.quit.listener]?.port ?? 0),
      container: node,
      ...(noQuit ? { noQuit } : {}),
      ...(programs.includes('kubexit') && items(get(node, 'env')).some((env) => text(get(env, 'name')) === 'KUBEXIT_DEATH_DEPS')
        ? { kubexit: true }
        : {}),
    });
  }
  return found;
}

/** Which sidecar a request speaks to, from its port and path (the pod's own ports first), or its program. */
export function aimedAt(aimed: RequestTarget, sidecars: readonly PodSidecar[], sharesProcesses: boolean): RequestTarget {
  const { request } = aimed;
  const kinds = SIDECAR_KINDS as readonly SidecarKind[];
  if (request.method === 'SIGNAL') {
    const kind = kinds.find((candidate) => candidate.template.processes.includes(basename(request.program ?? '')));
    // Without a shared process namespace the sidecar's processes are not there to signal: it stops nothing.
    if (kind === undefined) return { ...aimed, what: 'other' };
    return sharesProcesses ? { ...aimed, what: 'quit', kind } : { ...aimed, what: 'other', kind };
  }
  const portOf = (kind: SidecarKind, listener: number): number =>
    listener === kind.quit.listener
      ? (sidecars.find((sidecar) => sidecar.kind === kind)?.quitPort ?? kind.listeners[listener]?.port ?? 0)
      : (kind.listeners[listener]?.port ?? 0);
  const listed = request.variable === undefined ? undefined : kinds.find((kind) => kind.template.quitUrlsVariable === request.variable);
  if (listed !== undefined) return { ...aimed, what: 'quit', kind: listed };
  if (request.program === 'pilot-agent') {
    return request.path === ISTIO.ready?.path
      ? { ...aimed, what: 'wait', kind: ISTIO }
      : { ...aimed, what: 'quit', kind: ISTIO, envoyAdmin: true };
  }
  if (request.program !== undefined)
    return {
      ...aimed,
      what: 'quit',
      kind: kinds.find((kind) => kind.template.container?.programs.includes(request.program ?? '')) ?? ISTIO,
    };
  const path = request.path ?? '/';
  const port = request.port;
  if (path === ISTIO.quit.path && port === ENVOY_ADMIN_PORT) return heard({ ...aimed, what: 'quit', kind: ISTIO, envoyAdmin: true });
  for (const kind of kinds) {
    if (path === kind.quit.path && port === portOf(kind, kind.quit.listener)) return heard({ ...aimed, what: 'quit', kind });
  }
  for (const kind of kinds) {
    if (kind.ready === undefined) continue;
    const readyPorts = [portOf(kind, kind.ready.listener), ...(kind === ISTIO ? [portOf(kind, kind.quit.listener)] : [])];
    if (path === kind.ready.path && port !== undefined && readyPorts.includes(port)) return { ...aimed, what: 'wait', kind };
  }
  // The right path on another port: the kind of the pod's sidecars that has that path.
  // Not on another listener of a sidecar's: Envoy's health port answers a quit with 404.
  const meant = LOOPBACK_QUIT.test(path) && request.method !== 'HEAD';
  const otherListener = sidecars.find((sidecar) =>
    sidecar.kind.listeners.some((listener, index) => index !== sidecar.kind.quit.listener && listener.port === port),
  );
  if (otherListener !== undefined) {
    const listener = otherListener.kind.listeners.find((one) => one.port === port)?.name ?? '';
    return meant
      ? {
          ...aimed,
          what: 'other',
          kind: otherListener.kind,
          unheard: `port ${port} is the ${otherListener.kind.label}'s ${listener} listener, which has no ${path} (404)`,
        }
      : { ...aimed, what: 'other' };
  }
  const byPath = sidecars.find((sidecar) => sidecar.kind.quit.path === path);
  if (byPath !== undefined) return heard({ ...aimed, what: 'quit', kind: byPath.kind });
  // A quit's port whose sidecar serves another path there: it answers 404 (each sidecar matches its path exactly).
  const atPort = sidecars.find((sidecar) => sidecar.quitPort === port);
  if (meant && atPort !== undefined) {
    return {
      ...aimed,
      what: 'other',
      kind: atPort.kind,
      unheard: `the ${atPort.kind.label} has no ${path} on port ${port} (404): its quit is ${atPort.kind.quit.path}, exactly as written`,
    };
  }
  if (meant) return heard({ ...aimed, what: 'quit' });
  return { ...aimed, what: 'other' };
}

/** A quit as the sidecar hears it: none over a scheme other than http, nor from the pod's own address (403). */
function heard(target: RequestTarget): RequestTarget {
  const { scheme, podAddress } = target.request;
  const label = target.kind === undefined ? 'sidecar' : target.kind.label;
  if (scheme !== undefined && scheme !== 'http') {
    return { ...target, what: 'other', unheard: `it speaks ${scheme} to the ${label}, which serves plain HTTP: no quit is sent` };
  }
  if (podAddress === true) {
    return {
      ...target,
      what: 'other',
      unheard: `${target.request.host} is the pod's own address, not loopback, and the ${label} takes a quit from loopback only (403)`,
    };
  }
  return target;
}
