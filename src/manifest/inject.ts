// --inject: each Job, CronJob and bare Pod of a file that gets a classic Istio sidecar and does not run
// istio-job-run is rewritten the way the README's init-container pattern shows: an emptyDir, an init container
// that --installs istio-job-run into it, the job container's command prefixed with the installed wrapper and
// `--` (its args untouched), the downward-API status variable, and `--quit on-success` under OnFailure.
// --inject --native instead only adds sidecar.istio.io/nativeSidecar: "true" to the pod template.
// Only insertions (edits.ts): the rest of the file stays byte for byte. A rewritten pod runs istio-job-run, so
// a second --inject leaves it as it is. What cannot be rewritten safely is refused, all of it named at once.

import { isScalar, isSeq, type Node, type YAMLMap, type YAMLSeq } from 'yaml';
import { STATUS_ANNOTATION } from '../mode.ts';
import { OPTIONS, STATUS_VARIABLE } from '../options-table.ts';
import { PROGRAM } from '../self.ts';
import { Editor, type Value, editable, sequenceOffset } from './edits.ts';
import { get, items, lineOf, pairOf, type Source, text } from './source.ts';
import { jobContainers, NATIVE_ANNOTATION, prospect, quitsItself, runsWrapper, type Workload, workloads } from './workloads.ts';

interface InjectSettings {
  /** The image whose ENTRYPOINT is `istio-job-run --install` (docker/Dockerfile). */
  readonly image: string;
  readonly native: boolean;
}

type Injected =
  | { readonly kind: 'done'; readonly text: string; readonly rewritten: readonly string[] }
  | { readonly kind: 'refused'; readonly problems: readonly string[] };

/** The emptyDir, where the init container installs istio-job-run and the job container finds it. */
export const VOLUME = 'istio-job-run';
export const MOUNT_PATH = `/${PROGRAM}`;
export const INSTALLER = `install-${PROGRAM}`;
export const WRAPPER_PATH = `${MOUNT_PATH}/${PROGRAM}`;

/** Whether --inject rewrites the workload: it gets a classic sidecar, and nothing in it runs or quits one. */
function needsWrapper(workload: Workload): boolean {
  const outlook = prospect(workload).kind;
  if (outlook !== 'asked' && outlook !== 'maybe') return false;
  return !items(get(workload.podSpec, 'containers')).some((container) => runsWrapper(container) || quitsItself(container));
}

export function inject(source: Source, settings: InjectSettings): Injected {
  const editor = new Editor(source);
  const problems: string[] = [];
  const rewritten: string[] = [];
  for (const workload of workloads(source)) {
    if (!needsWrapper(workload)) continue;
    const where = `${source.name}:${lineOf(source, workload.object)}: ${workload.kind} ${workload.name}`;
    editor.seqOffset = sequenceOffset(source, pairOf(workload.podSpec, 'containers'));
    const found = settings.native ? addNative(editor, workload) : addWrapper(editor, workload, settings.image);
    if (found.length > 0) problems.push(...found.map((problem) => `${where}: ${problem}`));
    else rewritten.push(`${workload.kind} ${workload.name}`);
  }
  if (problems.length > 0) return { kind: 'refused', problems };
  return { kind: 'done', text: editor.changed ? editor.apply() : source.text, rewritten };
}

/** The structural depths the editor orders insertions at one place by. */
const DEPTH = { podSpec: 0, podList: 1, container: 2, containerList: 3, template: 0, metadata: 1, annotations: 2 } as const;

function addNative(editor: Editor, workload: Workload): string[] {
  const metadataPair = pairOf(workload.template, 'metadata');
  const metadata = metadataPair?.value;
  const annotations = get(metadata, 'annotations');
  const present = text(get(annotations, NATIVE_ANNOTATION));
  if (present !== undefined) {
    return [
      `its pod template sets ${NATIVE_ANNOTATION}: "${present}": remove that to let --inject --native set "true", or leave out --native`,
    ];
  }
  const value = { [NATIVE_ANNOTATION]: 'true' };
  if (metadataPair === undefined) {
    editor.addPair(workload.template, DEPTH.template, 'metadata', { annotations: value }, pairOf(workload.template, 'spec'));
  } else if (pairOf(metadata, 'annotations') === undefined && editable(metadata)) {
    editor.addPair(metadata as YAMLMap, DEPTH.metadata, 'annotations', value);
  } else if (editable(annotations) && !isSeq(annotations)) {
    editor.addPair(annotations, DEPTH.annotations, NATIVE_ANNOTATION, 'true');
  } else {
    return ['its pod template metadata is not a map of annotations --inject can add to: add the annotation by hand'];
  }
  return [];
}

function addWrapper(editor: Editor, workload: Workload, image: string): string[] {
  const { podSpec } = workload;
  const containers = jobContainers(workload);
  if (containers.length !== 1) {
    const names = containers.map((container) => text(get(container, 'name')) ?? '(unnamed)').join(', ');
    return [
      containers.length === 0
        ? 'its pod has no container to wrap'
        : `its pod has ${containers.length} job containers (${names}): the first to end would stop the proxy for the others. ` +
          'Wrap the one that ends last by hand (istio-job-run -- its command), or make the proxy a native sidecar (--inject --native)',
    ];
  }
  const container = containers[0] as YAMLMap;
  const name = text(get(container, 'name')) ?? '(unnamed)';
  const problems: string[] = [];
  const command = get(container, 'command');
  if (command === undefined) {
    problems.push(
      `container ${name} has no command, so its image's ENTRYPOINT runs, which the manifest does not show: ` +
        'set command to that ENTRYPOINT (args stay as they are) and run --inject again, or use --inject --native',
    );
  } else if (!isSeq(command) || !command.items.every((item) => isScalar(item))) {
    problems.push(`container ${name}: its command is not a list of strings --inject can prefix: write it as one`);
  }
  const lists: [Node, string, Node | undefined][] = [
    [podSpec, 'volumes', get(podSpec, 'volumes')],
    [podSpec, 'initContainers', get(podSpec, 'initContainers')],
    [container, 'volumeMounts', get(container, 'volumeMounts')],
    [container, 'env', get(container, 'env')],
  ];
  for (const [owner, key, list] of lists) {
    if (pairOf(owner, key) !== undefined && !isSeq(list))
      problems.push(`${key} of ${owner === podSpec ? 'the pod' : `container ${name}`} is not a list`);
  }
  const named = (list: Node | undefined, key: string, value: string): boolean => items(list).some((item) => text(get(item, key)) === value);
  if (named(get(podSpec, 'volumes'), 'name', VOLUME)) problems.push(`the pod already has a volume named ${VOLUME}: rename it`);
  if (named(get(podSpec, 'initContainers'), 'name', INSTALLER)) problems.push(`the pod already has an init container named ${INSTALLER}`);
  if (named(get(container, 'volumeMounts'), 'mountPath', MOUNT_PATH))
    problems.push(`container ${name} already mounts something at ${MOUNT_PATH}`);
  if (problems.length > 0) return problems;

  const prefix = [WRAPPER_PATH, ...(workload.restartPolicy === 'OnFailure' ? [`--${OPTIONS.quit.flag}`, 'on-success'] : []), '--'];
  editor.prepend(command as YAMLSeq, DEPTH.containerList, prefix);
  addToList(editor, container, DEPTH.container, 'volumeMounts', { name: VOLUME, mountPath: MOUNT_PATH, readOnly: true });
  addToList(editor, container, DEPTH.container, 'env', {
    name: STATUS_VARIABLE,
    valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${STATUS_ANNOTATION}']` } },
  });
  addToList(editor, podSpec, DEPTH.podSpec, 'volumes', { name: VOLUME, emptyDir: {} });
  addToList(editor, podSpec, DEPTH.podSpec, 'initContainers', installer(image));
  return [];
}

/** An item appended to the list under KEY, or the key added with a list of it. */
function addToList(editor: Editor, owner: YAMLMap, depth: number, key: string, value: Value): void {
  const list = get(owner, key);
  if (isSeq(list)) editor.append(list, depth + 1, value);
  else editor.addPair(owner, depth, key, [value]);
}

/**
 * The init container of the README's pattern: the image's ENTRYPOINT is `istio-job-run --install`, its argument
 * the emptyDir; restricted as docker/k8s/cronjob.yaml's, with its memory (the copy is page cache).
 */
function installer(image: string): Value {
  return {
    name: INSTALLER,
    image,
    args: [MOUNT_PATH],
    volumeMounts: [{ name: VOLUME, mountPath: MOUNT_PATH }],
    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
    resources: { requests: { memory: '32Mi' }, limits: { memory: '64Mi' } },
  };
}
