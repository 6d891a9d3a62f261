// What a pod template shows, read once for every rule and for --inject: its sidecars (sidecars.ts) and what each
// container runs (containers.ts), joined: a script's quit or wait for a kind the manifest does not show adds that
// sidecar, and each of its requests is aimed at the pod's sidecars.

import type { Node, Pair } from 'yaml';
import { PROXY_CONTAINER } from '../../config/mode.ts';
import { kindNamed, SIDECAR_KINDS, type SidecarKind } from '../../config/kinds.ts';
import type { Profile } from '../../config/profile.ts';
import { entries, getIn, text } from '../yaml/source.ts';
import type { Workload } from '../yaml/workloads.ts';
import { wrapperKind } from '../script/programs.ts';
import { type ContainerFacts, containersOf, type RequestTarget, readContainer, sharesProcessesOf } from './containers.ts';
import {
  aimedAt,
  declared,
  declined,
  expected,
  type InjectedNamespaces,
  injected,
  type PodSidecar,
  sidecarCandidates,
} from './sidecars.ts';

export interface Pod {
  readonly workload: Workload;
  readonly sidecars: readonly PodSidecar[];
  readonly containers: readonly ContainerFacts[];
  /** The containers that are the job's: not a sidecar, not an init container. */
  readonly jobs: readonly ContainerFacts[];
  readonly annotations: ReadonlyMap<string, { readonly value: string; readonly pair: Pair<Node, Node | null> }>;
}

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
      // A wrapper made for one kind of sidecar (linkerd-await) says the pod has that sidecar.
      const kind = wrapperKind(wrapper.program);
      if (kind !== undefined && !sidecars.some((sidecar) => sidecar.kind.name === kind))
        sidecars.push(expected(kindNamed(kind), annotations, undefined, false, profile));
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

/** Whether a request runs on some way through its script, or in a trap on a signal. */
export const reached = (aimed: RequestTarget): boolean => {
  const { runs } = aimed.request;
  return runs.onSuccess || runs.onFailure || runs.trap !== undefined;
};

const shows = (aimed: RequestTarget): boolean => aimed.what === 'quit' || aimed.request.method === 'SIGNAL';
