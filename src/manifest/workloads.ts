// The Jobs, CronJobs and bare Pods of a file (a `kind: List`'s items too), each with its pod template, and what
// their pods will have: a classic Istio sidecar or not (the injector's annotations and labels, or the injection
// status mode.ts reads in a running pod), and whether a container runs istio-job-run or quits the proxy itself.

import { type Node, isMap, type YAMLMap } from 'yaml';
import { STATUS_ANNOTATION } from '../mode.ts';
import { PROXY_CONTAINER, resolveMode } from '../mode.ts';
import { ENVOY_ADMIN_VARIABLE, SPECS, STATUS_VARIABLE } from '../options-table.ts';
import { PROGRAM } from '../self.ts';
import { kindNamed } from '../sidecar-kinds.ts';
import { get, getIn, items, scalars, type Source, text } from './source.ts';

export const INJECT_KEY = 'sidecar.istio.io/inject';
export const NATIVE_ANNOTATION = 'sidecar.istio.io/nativeSidecar';
const REVISION_LABEL = 'istio.io/rev';
/** What every recipe that quits pilot-agent calls: the quit path without its slash. */
export const QUIT_PATH = kindNamed('istio').quit.path.slice(1);

type WorkloadKind = 'Job' | 'CronJob' | 'Pod';

export interface Workload {
  readonly source: Source;
  readonly kind: WorkloadKind;
  readonly name: string;
  /** The resource itself. */
  readonly object: YAMLMap;
  /** Where the pod's metadata and spec are: the Pod itself, or the (Cron)Job's pod template. */
  readonly template: YAMLMap;
  /** How messages name the template: spec.template, spec.jobTemplate.spec.template, or the Pod. */
  readonly templatePath: string;
  /** The Job's spec (podFailurePolicy, backoffLimitPerIndex); none for a bare Pod. */
  readonly jobSpec?: Node;
  readonly podSpec: YAMLMap;
  readonly restartPolicy: string | undefined;
}

/** Whether and how the pod gets a classic Istio sidecar, from its manifest alone. */
type Prospect =
  /** Its template asks for injection (or is already injected with a classic sidecar). */
  | { readonly kind: 'asked'; readonly why: string }
  /** Nothing in the template says: injection comes from the namespace, if it has it on. */
  | { readonly kind: 'maybe' }
  | { readonly kind: 'native'; readonly why: string }
  | { readonly kind: 'none'; readonly why: string };

const TEMPLATE_PATHS: Readonly<Record<string, readonly string[]>> = {
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
};

/** The workloads of every document, in the order written. */
export function workloads(source: Source): Workload[] {
  const found: Workload[] = [];
  for (const document of source.documents) collect(source, document.contents, found);
  return found;
}

function collect(source: Source, node: unknown, found: Workload[]): void {
  if (!isMap(node)) return;
  const kind = text(get(node, 'kind'));
  if (kind === 'List' || (kind?.endsWith('List') === true && get(node, 'items') !== undefined)) {
    for (const item of items(get(node, 'items'))) collect(source, item, found);
    return;
  }
  const name = text(getIn(node, ['metadata', 'name'])) ?? text(getIn(node, ['metadata', 'generateName'])) ?? '(unnamed)';
  if (kind === 'Pod') {
    const podSpec = get(node, 'spec');
    const restartPolicy = text(get(podSpec, 'restartPolicy'));
    // A Pod's default restartPolicy is Always: a server, which never completes, not a job.
    if (!isMap(podSpec) || (restartPolicy !== 'Never' && restartPolicy !== 'OnFailure')) return;
    found.push({ source, kind, name, object: node, template: node, templatePath: 'the Pod', podSpec, restartPolicy });
    return;
  }
  const path = kind === undefined ? undefined : TEMPLATE_PATHS[kind];
  if (path === undefined) return;
  const template = getIn(node, path);
  const podSpec = get(template, 'spec');
  if (!isMap(template) || !isMap(podSpec)) return;
  const jobSpec = kind === 'Job' ? get(node, 'spec') : getIn(node, ['spec', 'jobTemplate', 'spec']);
  found.push({
    source,
    kind: kind as WorkloadKind,
    name,
    object: node,
    template,
    templatePath: path.join('.'),
    ...(jobSpec === undefined ? {} : { jobSpec }),
    podSpec,
    restartPolicy: text(get(podSpec, 'restartPolicy')),
  });
}

/** The pod template's annotation or label. */
const annotation = (workload: Workload, key: string): string | undefined =>
  text(get(getIn(workload.template, ['metadata', 'annotations']), key));
const label = (workload: Workload, key: string): string | undefined => text(get(getIn(workload.template, ['metadata', 'labels']), key));

/**
 * What Istio's injector will do with the pod, as far as the manifest tells: the pod's own inject label (which
 * beats the annotation), the injection status of an already injected manifest, the per-pod native switch.
 */
export function prospect(workload: Workload): Prospect {
  const labelled = label(workload, INJECT_KEY);
  const annotated = annotation(workload, INJECT_KEY);
  const inject = labelled ?? annotated;
  const where = labelled === undefined ? 'annotation' : 'label';
  if (inject !== undefined && inject.toLowerCase() !== 'true') return { kind: 'none', why: `${where} ${INJECT_KEY}: "${inject}"` };
  const status = annotation(workload, STATUS_ANNOTATION);
  if (status !== undefined) {
    const mode = resolveMode('auto', { status: { value: status, from: STATUS_ANNOTATION }, envoyAdmin: false, inPod: true });
    if (mode.mode === 'native') return { kind: 'native', why: mode.reason };
    if (mode.mode === 'none') return { kind: 'none', why: mode.reason };
    return { kind: 'asked', why: `already injected (${STATUS_ANNOTATION})` };
  }
  if (annotation(workload, NATIVE_ANNOTATION)?.toLowerCase() === 'true') {
    return { kind: 'native', why: `${NATIVE_ANNOTATION}: "true"` };
  }
  if (inject !== undefined) return { kind: 'asked', why: `${where} ${INJECT_KEY}: "${inject}"` };
  const revision = label(workload, REVISION_LABEL);
  if (revision !== undefined) return { kind: 'asked', why: `label ${REVISION_LABEL}: "${revision}"` };
  return { kind: 'maybe' };
}

/** The pod's containers that are the job's: every container but a declared istio-proxy overlay. */
export const jobContainers = (workload: Workload): YAMLMap[] =>
  items(get(workload.podSpec, 'containers')).filter(
    (container): container is YAMLMap => isMap(container) && text(get(container, 'name')) !== PROXY_CONTAINER,
  );

/** The container's command and args, as written (non-strings left out). */
export function argv(container: Node): { command: string[]; args: string[] } {
  const strings = (node: Node | undefined): string[] =>
    items(node)
      .map(text)
      .filter((value): value is string => value !== undefined);
  return { command: strings(get(container, 'command')), args: strings(get(container, 'args')) };
}

const envNames = (container: Node): string[] =>
  items(get(container, 'env'))
    .map((entry) => text(get(entry, 'name')))
    .filter((name): name is string => name !== undefined);

/** The variables only istio-job-run reads. */
const WRAPPER_VARIABLES = new Set([STATUS_VARIABLE, ...SPECS.map(([, spec]) => spec.env)]);

/** The last path segment of a word: /opt/tools/istio-job-run -> istio-job-run. */
const basename = (word: string): string => word.slice(word.lastIndexOf('/') + 1);

/**
 * Whether the container runs istio-job-run: in its command, in a script of its command, or as its image's
 * ENTRYPOINT, which the manifest shows only by the variables set for the wrapper.
 */
export function runsWrapper(container: Node): boolean {
  const { command, args } = argv(container);
  const words = [...command, ...args].flatMap((arg) => arg.split(/[\s;&|()`"']+/));
  if (words.some((word) => basename(word) === PROGRAM)) return true;
  return envNames(container).some((name) => WRAPPER_VARIABLES.has(name));
}

/** Whether the container tells the proxy to quit by itself: a script that calls quitquitquit, or scuttle. */
export function quitsItself(container: Node): boolean {
  const { command, args } = argv(container);
  return [...command, ...args].some((arg) => arg.includes(QUIT_PATH)) || envNames(container).includes(ENVOY_ADMIN_VARIABLE);
}

/** Every string of a container's command, args, env values and lifecycle hooks, with its node. */
export function* containerStrings(container: Node): Generator<{ readonly value: string; readonly node: Node }> {
  for (const key of ['command', 'args', 'env', 'lifecycle']) yield* scalars(get(container, key));
}
