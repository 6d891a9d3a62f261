// What a pod template shows, read once for every rule and for --inject: which sidecars its pods will have
// (each kind recognised as its own injector recognises a pod, or by its own settings or a script's quit of it:
// src/config/kinds.ts holds those facts), in which form, whether their quit is switched on; what each container
// runs (a wrapper, a shell script read by src/manifest/script/shell.ts) and which of the script's requests quit
// or wait for which sidecar.

import type { Node, Pair, Scalar, YAMLMap } from 'yaml';
import { PROGRAM } from '../../bundle/self.ts';
import { PROXY_CONTAINER, resolveMode, STATUS_ANNOTATION } from '../../config/mode.ts';
import type { Options } from '../../config/options.ts';
import { INJECTED_NAMESPACES_FLAG } from '../../config/tool-flags.ts';
import {
  ISTIO,
  istioPort,
  type KindName,
  kindNamed,
  readBoolFlag,
  readFirst,
  readSetting,
  SIDECAR_KINDS,
  type SidecarKind,
  settingOn,
} from '../../config/kinds.ts';
import { installForm, type Profile } from '../../config/profile.ts';
import { LOOPBACK_QUIT, type Request } from '../script/requests.ts';
import { basename, innerCommand, readWrapper, shellScript } from '../script/commands.ts';
import { commandStart, INITS, SIDECAR_FRONTS, wrapperStops as tableStops } from '../script/programs.ts';
import { busyboxWget, type Dialect, dialectOfProgram, shOfImage } from '../script/dialect.ts';
import { readScript, type Runs, type ScriptFacts, type ShellOptions, WRAPPERS } from '../script/shell.ts';
import {
  entries,
  get,
  getIn,
  isMap,
  isScalar,
  items,
  lineOf,
  lineText,
  pairOf,
  type Source,
  text,
  type ValueLines,
  valueLines,
} from '../yaml/source.ts';

import type { Workload } from '../yaml/workloads.ts';

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

/** A request of a script and its target: the sidecar it speaks to, and what it asks of it. */
export interface RequestTarget {
  readonly request: Request & { readonly id: number; readonly runs: Runs };
  /** other: a request to loopback that is neither a known endpoint nor says quit. */
  readonly what: 'quit' | 'wait' | 'other';
  /**
   * The kind it speaks to (a signal to its process too, which reaches it only across a shared process namespace);
   * undefined: a quit of some sidecar (a loopback path that says quit, kill, shutdown).
   */
  readonly kind?: SidecarKind;
  /** A quit sent to Envoy's own admin port. */
  readonly envoyAdmin?: boolean;
  /**
   * Why the sidecar it is aimed at does not act on what is meant as a quit (then `what` is other): a path it
   * answers 404, a scheme other than the plain HTTP it serves, the pod's own address instead of loopback.
   */
  readonly unheard?: string;
  readonly line: number;
}

export interface ContainerFacts {
  readonly node: YAMLMap;
  readonly name: string;
  readonly init: boolean;
  /** The wrapper its command starts with, and the kinds it stops. */
  readonly wrapper?: {
    readonly program: string;
    readonly stops: readonly KindName[] | 'all';
    /** istio-job-run's options, as its own parser reads them. */
    readonly options?: Options;
    readonly child?: string;
  };
  readonly script?: {
    readonly node: Scalar;
    readonly facts: ScriptFacts;
    readonly lines: ValueLines;
    /** A folded block scalar that joined commands into one line: the line of each joined command. */
    readonly joined: readonly number[];
    /** The shell that runs it, and whether the image said what its sh is (false: dash assumed). */
    readonly shell: { readonly dialect: Dialect; readonly program: string; readonly image: string; readonly imageKnown: boolean };
    /** What the script was read with: its shell's options, and the environment it starts with (whether that is all). */
    readonly read: { readonly options: ShellOptions; readonly env: ReadonlyMap<string, string | undefined>; readonly closed: boolean };
  };
  readonly aimed: readonly RequestTarget[];
  /** The script's wrappers (linkerd-await --shutdown ...), with their lines. */
  readonly scriptWrappers: readonly (ScriptFacts['wrappers'][number] & { readonly line: number })[];
}

export interface Pod {
  readonly workload: Workload;
  readonly sidecars: readonly PodSidecar[];
  readonly containers: readonly ContainerFacts[];
  /** The containers that are the job's: not a sidecar, not an init container. */
  readonly jobs: readonly ContainerFacts[];
  readonly annotations: ReadonlyMap<string, { readonly value: string; readonly pair: Pair<Node, Node | null> }>;
}

/** Envoy's own admin port: a quit there stops Envoy, not pilot-agent. */
export const ENVOY_ADMIN_PORT = istioPort('envoy-admin');

const stringMap = (node: unknown): Map<string, { value: string; pair: Pair<Node, Node | null> }> =>
  new Map(
    entries(node).flatMap(([key, value, pair]) => {
      const string = text(value);
      return string === undefined ? [] : [[key, { value: string, pair }]];
    }),
  );

/**
 * The pod of a workload, read for the rules and --inject; PROFILE: the cluster as stated, which gives the form of an
 * injected sidecar the pod does not choose (undefined: classic, as the manifest alone shows).
 */
export function readPod(workload: Workload, namespaces: InjectedNamespaces, namespace: string | undefined, profile?: Profile): Pod {
  const annotations = stringMap(getIn(workload.template, ['metadata', 'annotations']));
  const labels = stringMap(getIn(workload.template, ['metadata', 'labels']));
  const { initContainers, regular } = containersOf(workload);
  const podNamespace = text(getIn(workload.object, ['metadata', 'namespace'])) ?? namespace ?? 'default';

  const sidecars: PodSidecar[] = [];
  const candidates = sidecarCandidates(initContainers, regular);
  for (const kind of SIDECAR_KINDS as readonly SidecarKind[]) {
    sidecars.push(...injected(kind, annotations, labels, namespaces, podNamespace, profile));
    sidecars.push(...declared(kind, candidates));
  }
  const sidecarNodes = new Set(sidecars.flatMap((sidecar) => (sidecar.container === undefined ? [] : [sidecar.container])));
  const sharesProcesses = sharesProcessesOf(workload);
  const containers = [
    ...initContainers.map((node) => readContainer(workload.source, node, true, sharesProcesses)),
    ...regular.map((node) => readContainer(workload.source, node, false, sharesProcesses)),
  ];
  const jobs = containers.filter((container) => !container.init && container.name !== PROXY_CONTAINER && !sidecarNodes.has(container.node));
  // A script that quits or waits for a kind the manifest does not show: the author expects that sidecar.
  const known = containers.map((container) => ({
    ...container,
    aimed: container.aimed.map((aimed) => aimedAt(aimed, sidecars, sharesProcesses)),
  }));
  // A quit of a kind's endpoint or process shows that sidecar (its namespace injects it); a wait only expects it.
  // A quit no way through its script reaches (after an if whose every branch exits) still shows what its author
  // expects, where the script reaches no quit at all.
  const aims = known.flatMap((container) =>
    container.aimed.filter((aimed) => reached(aimed) || !container.aimed.some((other) => other.what === 'quit' && reached(other))),
  );
  for (const aimed of [...aims.filter(shows), ...aims.filter((aimed) => !shows(aimed))]) {
    if (aimed.kind === undefined || sidecars.some((sidecar) => sidecar.kind === aimed.kind)) continue;
    const shown = shows(aimed) && !declined(aimed.kind, annotations, labels);
    sidecars.push(expected(aimed.kind, annotations, shown ? aimed : undefined, sharesProcesses, profile));
  }
  for (const container of known) {
    for (const wrapper of [...container.scriptWrappers, ...(container.wrapper === undefined ? [] : [container.wrapper])]) {
      if (wrapper.program === 'linkerd-await' && !sidecars.some((sidecar) => sidecar.kind.name === 'linkerd'))
        sidecars.push(expected(kindNamed('linkerd'), annotations, undefined, false, profile));
    }
  }
  const resolved = containers.map((container) => ({
    ...container,
    aimed: container.aimed.map((aimed) => aimedAt(aimed, sidecars, sharesProcesses)),
  }));
  return {
    workload,
    sidecars,
    containers: resolved,
    jobs: resolved.filter((container) => jobs.some((job) => job.node === container.node)),
    annotations,
  };
}

type Strings = ReadonlyMap<string, { value: string; pair: Pair<Node, Node | null> }>;

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
function declined(kind: SidecarKind, annotations: Strings, labels: Strings): boolean {
  const { initOnly, sidecarless } = kind.template;
  if (markedFor(kind, annotations, labels).asked === false) return true;
  if (initOnly !== undefined && settingOn(initOnly.reading, annotations.get(initOnly.annotation)?.value)) return true;
  return (
    sidecarless !== undefined &&
    [labels, annotations].some((map) => map.get(sidecarless.key)?.value.trim().toLowerCase() === sidecarless.value)
  );
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
function injected(
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

/** Whether a request runs on some way through its script, or in a trap on a signal. */
export const reached = (aimed: RequestTarget): boolean => {
  const { runs } = aimed.request;
  return runs.onSuccess || runs.onFailure || runs.trap !== undefined;
};

const shows = (aimed: RequestTarget): boolean => aimed.what === 'quit' || aimed.request.method === 'SIGNAL';

/** A sidecar no marker shows, that a script waits for, or quits (SHOWN: then the pod has it). */
function expected(kind: SidecarKind, annotations: Strings, shown?: RequestTarget, sharesProcesses = false, profile?: Profile): PodSidecar {
  const form = formOf(kind, annotations, profile);
  if (shown === undefined) return sidecar(kind, form, 'its script speaks to it', annotations, false);
  const { program } = shown.request;
  const why =
    shown.request.method !== 'SIGNAL'
      ? `its script quits it on line ${shown.line}, so its namespace injects it`
      : `its script signals ${program} on line ${shown.line}${sharesProcesses ? '' : ', which it cannot reach without shareProcessNamespace: true'}`;
  return sidecar(kind, form, why, annotations);
}

/** The words a container runs: its command, then its args. */
export function argvOf(container: Node): { words: string[]; nodes: Node[] } {
  const nodes = [...items(get(container, 'command')), ...items(get(container, 'args'))].filter((node) => isScalar(node));
  return { words: nodes.map((node) => text(node) ?? ''), nodes };
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
function sidecarCandidates(initContainers: readonly YAMLMap[], regular: readonly YAMLMap[]): Candidate[] {
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
function declared(kind: SidecarKind, candidates: readonly Candidate[]): PodSidecar[] {
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

/** A pod's init containers and its containers. */
function containersOf(workload: Workload): { readonly initContainers: YAMLMap[]; readonly regular: YAMLMap[] } {
  return {
    initContainers: items(get(workload.podSpec, 'initContainers')).filter(isMap) as YAMLMap[],
    regular: items(get(workload.podSpec, 'containers')).filter(isMap) as YAMLMap[],
  };
}

/** The scripts of a pod's containers (`sh -c SCRIPT`, init containers' too): each node, and where its lines come from. */
export function podScripts(workload: Workload): NonNullable<ContainerFacts['script']>[] {
  const { initContainers, regular } = containersOf(workload);
  return [
    ...initContainers.map((node) => readContainer(workload.source, node, true, sharesProcessesOf(workload)).script),
    ...regular.map((node) => readContainer(workload.source, node, false, sharesProcessesOf(workload)).script),
  ].filter((script) => script !== undefined);
}

/** The programs a command runs: its first word, and the command of an init or kubexit in front of it. */
function programsOf(words: readonly string[]): string[] {
  const programs: string[] = [];
  for (let at = 0; at < words.length && programs.length < 4; ) {
    const program = basename(words[at] as string);
    programs.push(program);
    if (!SIDECAR_FRONTS.has(program)) break;
    at += 1 + (commandStart(program, words.slice(at + 1)) ?? 0);
  }
  return programs;
}

/** Whether a workload's pods share one process namespace (shareProcessNamespace: true). */
const sharesProcessesOf = (workload: Workload): boolean => text(get(workload.podSpec, 'shareProcessNamespace')) === 'true';

/** A container's command read: its wrapper, and the script of its shell (SHARES: the pod shares its processes). */
function readContainer(source: Source, node: YAMLMap, init: boolean, shares: boolean): ContainerFacts {
  const name = text(get(node, 'name')) ?? '(unnamed)';
  const { words, nodes } = argvOf(node);
  let at = 0;
  let wrapper: ContainerFacts['wrapper'];
  // tini -e 143 -- sh -c ..., then a wrapper, then the shell.
  for (let guard = 0; guard < 8 && at < words.length; guard++) {
    const program = basename(words[at] as string);
    if (INITS.has(program)) {
      at += 1 + (commandStart(program, words.slice(at + 1)) ?? 0);
    } else if ((WRAPPERS as readonly string[]).includes(program)) {
      const rest = words.slice(at + 1);
      const reading = readWrapper(program, rest, Object.fromEntries(containerEnv(node)));
      const child = reading.child === undefined ? words.length : at + 1 + reading.child;
      wrapper = {
        program,
        stops: wrapperStops(program, rest, reading.options, node),
        ...(reading.options === undefined ? {} : { options: reading.options }),
        ...(words[child] === undefined ? {} : { child: words[child] as string }),
      };
      at = child;
    } else break;
  }
  // `timeout 60 sh -c`, `env A=1 bash -c`, `exec sh -c`: the shell behind the programs that run their arguments.
  at = words.length - innerCommand(words.slice(at), (word) => word).words.length;
  let script: ContainerFacts['script'];
  const shell = shellScript(words.slice(at));
  const scriptNode = shell === undefined ? undefined : nodes[at + shell.at];
  if (shell !== undefined && scriptNode !== undefined && isScalar(scriptNode) && typeof scriptNode.value === 'string') {
    const lines = valueLines(source, scriptNode);
    const image = text(get(node, 'image')) ?? '';
    const sh = shOfImage(image);
    const viaBusybox = basename(words[at - 1] ?? '') === 'busybox' || basename(words[at] ?? '') === 'busybox';
    const program = basename(words[at + (basename(words[at] ?? '') === 'busybox' ? 1 : 0)] ?? '');
    const dialect = dialectOfProgram(program, sh.dialect, viaBusybox) ?? 'bash';
    const options: ShellOptions = {
      errexit: shell.errexit,
      pipefail: shell.pipefail,
      nounset: shell.nounset,
      dialect,
      sh: sh.dialect,
      sharesProcesses: shares,
    };
    const [env, closed] = scriptEnv(node);
    script = {
      node: scriptNode,
      facts: readScript(scriptNode.value, options, env, closed),
      read: { options, env, closed },
      shell: {
        dialect,
        program: viaBusybox ? `busybox ${program}` : program,
        image,
        imageKnown: sh.known || program !== 'sh' || viaBusybox,
      },
      lines,
      joined: scriptNode.type === 'BLOCK_FOLDED' ? joinedCommands(lines, source) : [],
    };
  }
  const lineAt = (row: number, column: number): number =>
    script === undefined
      ? lineOf(source, pairOf(node, 'command') ?? node)
      : (script.lines.lineAt(row, column) ?? lineOf(source, script.node));
  const aimed: RequestTarget[] = [];
  // busybox's wget, an Alpine image's, rejects GNU wget's options: it exits 1 and sends nothing.
  const busybox = script !== undefined && busyboxWget(script.shell.image, String(script.node.value));
  for (const request of script?.facts.requests ?? []) {
    const line = lineAt(request.place.row, request.place.column);
    const rejected = busybox && request.gnuOnly !== undefined && request.rejected === undefined ? { rejected: request.gnuOnly } : {};
    aimed.push({ request: { ...request, ...rejected }, what: 'quit', line });
  }
  const scriptWrappers = (script?.facts.wrappers ?? []).map((found) => ({ ...found, line: lineAt(found.place.row, found.place.column) }));
  return {
    node,
    name,
    init,
    ...(wrapper === undefined ? {} : { wrapper }),
    ...(script === undefined ? {} : { script }),
    aimed,
    scriptWrappers,
  };
}

/** The container's environment variables whose values the manifest gives. */
function containerEnv(container: Node): Map<string, string> {
  const env = new Map<string, string>();
  for (const entry of items(get(container, 'env'))) {
    const name = text(get(entry, 'name'));
    const value = text(get(entry, 'value'));
    if (name !== undefined && value !== undefined) env.set(name, value);
  }
  return env;
}

/**
 * The environment a container's script starts with, as far as the manifest says: each variable of its `env`, with
 * its value or (valueFrom) undefined, the pod setting it at run time; and whether that is all (no envFrom).
 */
function scriptEnv(container: Node): [Map<string, string | undefined>, boolean] {
  const env = new Map<string, string | undefined>();
  for (const entry of items(get(container, 'env'))) {
    const name = text(get(entry, 'name'));
    if (name !== undefined) env.set(name, get(entry, 'valueFrom') === undefined ? (text(get(entry, 'value')) ?? '') : undefined);
  }
  return [env, get(container, 'envFrom') === undefined];
}

/** The lines of a folded block scalar that YAML joined onto the line before, each starting what reads as a new command. */
function joinedCommands(lines: ValueLines, source: Source): number[] {
  const joined: number[] = [];
  for (const { pieces } of lines.rows) {
    for (let i = 1; i < pieces.length; i++) {
      const previous = lineText(source, pieces[i - 1]?.line ?? 1).trimEnd();
      const current = lineText(source, pieces[i]?.line ?? 1).trim();
      if (current.startsWith('-') || /(\\|&&|\|\||\||;|\(|\{)$/.test(previous)) continue;
      joined.push(pieces[i]?.line ?? 0);
    }
  }
  return joined;
}

/** Which kinds a wrapper at the start of a command stops. */
function wrapperStops(
  program: string,
  args: readonly string[],
  options: Options | undefined,
  container: Node,
): readonly KindName[] | 'all' {
  if (program !== PROGRAM) return tableStops(program, args);
  // istio-job-run: Istio unless --sidecar none, the kinds of --also, and those of the pod's annotations file.
  if (options === undefined) return [];
  const stops: KindName[] = [];
  if (options.sidecar !== 'none') stops.push('istio');
  for (const entry of options.also) stops.push(entry.kind);
  const mounts = items(get(container, 'volumeMounts')).map((mount) => text(get(mount, 'mountPath')) ?? '');
  if (mounts.some((path) => path !== '' && options.podAnnotations.startsWith(`${path.replace(/\/$/, '')}/`))) {
    for (const kind of SIDECAR_KINDS as readonly SidecarKind[]) if (kind.fromAnnotations !== undefined) stops.push(kind.name as KindName);
  }
  return stops;
}

/** Which sidecar a request speaks to, from its port and path (the pod's own ports first), or its program. */
function aimedAt(aimed: RequestTarget, sidecars: readonly PodSidecar[], sharesProcesses: boolean): RequestTarget {
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
