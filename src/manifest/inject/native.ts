// --inject under a cluster profile, native sidecars first: where every node is 1.29+, a classic sidecar that
// nothing stops is made native by its own switch (Istio's annotation, Linkerd's GA key: the first key of the
// kind's `native` markers), or, for a container the pod declares (the auth proxies), by moving that container to
// the front of initContainers with restartPolicy: Always and a startupProbe on its readiness endpoint where it has
// one. The wrapper stays the fix where native cannot be (a node below 1.29, a kind with no native mode, a pod that
// opts out); --inject --wrapper asks for it anyway, --native refuses what native cannot fix.

import type { YAMLMap, YAMLSeq } from 'yaml';
import { readBoolFlag, type SidecarKind } from '../../config/kinds.ts';
import { type Profile, whyNotNative } from '../../config/profile.ts';
import type { Value } from '../yaml/edits.ts';
import { argvOf } from '../pod/containers.ts';
import type { Pod } from '../pod/pod.ts';
import type { PodSidecar } from '../pod/sidecars.ts';
import { get, isMap, isScalar, isSeq, pairOf, type Source, text } from '../yaml/source.ts';

/** What fixes a pod's classic sidecars that nothing stops: native switches and moves, or the wrapper, or nothing (why). */
export type Plan = { readonly fix: 'native' } | { readonly fix: 'wrapper' } | { readonly fix: 'refuse'; readonly why: readonly string[] };

/** The edits the native fix needs, made through the editor that guards a pod's edits. */
export interface NativeEditor {
  replace(edit: { readonly start: number; readonly end: number; readonly text: string }): void;
  prepend(seq: YAMLSeq, depth: number, values: readonly Value[]): void;
  addItem(owner: YAMLMap, depth: number, key: string, value: Value): void;
}

/** Why SIDECAR of POD cannot be made native under PROFILE; undefined when it can. */
function whyNot(pod: Pod, sidecar: PodSidecar, profile: Profile | undefined): string | undefined {
  const why = whyNotNative(sidecar.kind, profile);
  if (why !== undefined) return `${sidecar.why}: ${why}`;
  if (sidecar.container !== undefined) return undefined;
  const native = sidecar.kind.template.native;
  if (native === undefined) return `${sidecar.why}: its injector decides its form`;
  const set = native.keys.find((key) => pod.annotations.has(key));
  if (set !== undefined) return `${sidecar.why}: the pod sets ${set}: "${pod.annotations.get(set)?.value}"`;
  return undefined;
}

/**
 * How --inject fixes LEFT, the classic sidecars of POD that nothing stops: without a profile, as it always has
 * (the wrapper, or --native's Istio annotation); with one, native where each of them can be, else the wrapper
 * (--wrapper: always the wrapper; --native: native or refused).
 */
export function planFor(
  pod: Pod,
  left: readonly PodSidecar[],
  settings: { readonly profile?: Profile; readonly native: boolean; readonly wrapper?: boolean },
): Plan {
  const { profile } = settings;
  if (profile === undefined || settings.wrapper === true || left.length === 0) return { fix: 'wrapper' };
  const why = left.map((sidecar) => whyNot(pod, sidecar, profile)).filter((reason) => reason !== undefined);
  if (why.length === 0) return { fix: 'native' };
  if (!settings.native) return { fix: 'wrapper' };
  return { fix: 'refuse', why: why.map((reason) => `--native: ${reason}: only the wrapper stops it (leave out --native)`) };
}

/** Structural depths, as inject.ts orders insertions. */
const POD_LIST = 1;
const POD_SPEC = 0;

/**
 * The native fix of LEFT: the switch of each injected kind added to ANNOTATIONS (returned, for the caller to add
 * to the template), each declared container moved. Problems that stop it, each one line.
 */
export function addNativeSidecars(
  editor: NativeEditor,
  source: Source,
  pod: Pod,
  left: readonly PodSidecar[],
): { readonly annotations: Record<string, string>; readonly problems: readonly string[]; readonly moved: readonly string[] } {
  const annotations: Record<string, string> = {};
  const problems: string[] = [];
  const moved: string[] = [];
  const declared = left.filter((sidecar) => sidecar.container !== undefined);
  for (const sidecar of left) {
    const key = sidecar.kind.template.native?.keys[0];
    if (sidecar.container === undefined && key !== undefined) annotations[key] = 'true';
  }
  const podSpec = pod.workload.podSpec;
  const containers = get(podSpec, 'containers');
  const inits = get(podSpec, 'initContainers');
  if (declared.length > 0 && !isSeq(containers))
    return { annotations, moved, problems: ['its containers are not a list --inject can move a container out of: move it by hand'] };
  if (declared.length > 0 && inits !== undefined && !isSeq(inits) && !(isScalar(inits) && inits.value === null))
    return { annotations, moved, problems: ['initContainers of the pod is not a list'] };
  const values: Value[] = [];
  for (const sidecar of declared) {
    const node = sidecar.container as YAMLMap;
    const cut = (containers as YAMLSeq).flow === true ? flowItem(containers as YAMLSeq, node) : itemLines(source, node);
    const value = nativeContainer(node, sidecar);
    if (typeof cut === 'string' || typeof value === 'string') {
      problems.push(`${sidecar.why}: ${typeof cut === 'string' ? cut : value}`);
      continue;
    }
    values.push(value);
    moved.push(text(get(node, 'name')) ?? '(unnamed)');
    editor.replace({ ...cut, text: '' });
  }
  if (problems.length > 0 || values.length === 0) return { annotations, moved, problems };
  if (isSeq(inits) && inits.items.length > 0) editor.prepend(inits, POD_LIST, values);
  else for (const value of values) editor.addItem(podSpec as YAMLMap, POD_SPEC, 'initContainers', value);
  return { annotations, moved, problems };
}

/** The text of a block list's item (its `- ` line to the end of its last line), or why it cannot be cut out. */
function itemLines(source: Source, node: YAMLMap): { start: number; end: number } | string {
  const { text: all } = source;
  const [start = 0, end = start] = node.range ?? [];
  if (node.flow === true) return 'it is written as a flow map ({...}): move it by hand';
  const dash = all.lastIndexOf('-', start);
  const lineStart = all.lastIndexOf('\n', dash) + 1;
  if (dash < 0 || !/^[ \t]*$/.test(all.slice(lineStart, dash)) || !/^[ \t]*$/.test(all.slice(dash + 1, start)))
    return 'it does not start a line of its own (- name: ...): move it by hand';
  let last = end;
  while (last > start && /\s/.test(all[last - 1] ?? '')) last--;
  const lineEnd = all.indexOf('\n', last);
  return { start: lineStart, end: lineEnd < 0 ? all.length : lineEnd + 1 };
}

/** What stops a part of a container from being written again: said as why --inject cannot move it. */
class CannotWrite extends Error {}

/** The text of a flow list's item with the comma that parts it from its neighbour (the one after, or the one before). */
function flowItem(seq: YAMLSeq, node: YAMLMap): { start: number; end: number } | string {
  const at = seq.items.indexOf(node);
  const next = (seq.items[at + 1] as YAMLMap | undefined)?.range?.[0];
  const before = (seq.items[at - 1] as YAMLMap | undefined)?.range?.[1];
  const [start = 0, end = start] = node.range ?? [];
  if (next !== undefined) return { start, end: next };
  if (before !== undefined) return { start: before, end };
  return 'it is the only container: move it by hand';
}

/** A YAML node as a value --inject writes; throws CannotWrite for what it cannot write again (a null, an alias). */
function valueOf(node: unknown): Value {
  if (isScalar(node)) {
    const value = node.value;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
    throw new CannotWrite(`a value --inject cannot write again (${String(value)}): move it by hand`);
  }
  if (isSeq(node)) return node.items.map(valueOf);
  if (isMap(node)) {
    const map: Record<string, Value> = {};
    for (const pair of node.items) {
      if (!isScalar(pair.key)) throw new CannotWrite('a key --inject cannot write again: move it by hand');
      map[String(pair.key.value)] = valueOf(pair.value);
    }
    return map;
  }
  throw new CannotWrite('a part --inject cannot write again (an alias): move it by hand');
}

/** The flag's value among WORDS (`--flag=V` or `--flag V`), the last one given. */
function flagValue(words: readonly string[], flag: string): string | undefined {
  let found: string | undefined;
  words.forEach((word, at) => {
    if (word.startsWith(`${flag}=`)) found = word.slice(flag.length + 1);
    else if (word === flag) found = words[at + 1];
  });
  return found;
}

/** The auth proxy's readiness: /startup on its health port, with --health-check, where kubelet reaches it. */
const ANY_ADDRESS = ['0.0.0.0', '::', '[::]'];

/**
 * The declared container as a native sidecar: restartPolicy: Always, and where its release has a readiness
 * endpoint, the flags that serve it to kubelet (--health-check, --http-address 0.0.0.0) and a startupProbe on it.
 */
function nativeContainer(node: YAMLMap, sidecar: PodSidecar): Value | string {
  let container: Record<string, Value>;
  try {
    container = { ...(valueOf(node) as Record<string, Value>) };
  } catch (error) {
    if (error instanceof CannotWrite) return error.message;
    throw error;
  }
  if (pairOf(node, 'restartPolicy') === undefined) container.restartPolicy = 'Always';
  const probe = sidecar.noQuit === true ? undefined : startupProbe(sidecar.kind, node, container);
  if (probe !== undefined && container.startupProbe === undefined) container.startupProbe = probe;
  return container;
}

function startupProbe(kind: SidecarKind, node: YAMLMap, container: Record<string, Value>): Value | undefined {
  const ready = kind.ready;
  if (ready === undefined) return undefined;
  const { words } = argvOf(node);
  const address = flagValue(words, '--http-address');
  if (address !== undefined && !ANY_ADDRESS.includes(address)) return undefined;
  const readySwitch = kind.template.readySwitch?.flag;
  const readyOn = readySwitch === undefined ? 'on' : readBoolFlag(words, readySwitch);
  if (readyOn === 'off') return undefined;
  const added = [
    ...(readySwitch !== undefined && readyOn === 'unset' ? [readySwitch] : []),
    ...(address === undefined ? [`--http-address=${ANY_ADDRESS[0]}`] : []),
  ];
  // After the command's words or the image's ENTRYPOINT alike: args come last.
  if (added.length > 0) container.args = [...((container.args as readonly Value[] | undefined) ?? []), ...added];
  const port = Number(flagValue(words, '--http-port') ?? kind.listeners[ready.listener]?.port);
  return { httpGet: { path: ready.path, port }, periodSeconds: 1, failureThreshold: 60 };
}
