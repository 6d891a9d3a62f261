// The Jobs, CronJobs and bare Pods of a file (a `kind: List`'s items too), each with its pod template; what
// their pods will have is read by pod.ts.

import type { Node, YAMLMap } from 'yaml';
import { get, getIn, isMap, items, type Source, text } from './source.ts';

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
