// --inject: each Job, CronJob and bare Pod of a file whose pods get a classic sidecar that nothing stops (the
// same reading as --check's `unwrapped`), or that --check advises --inject for, is rewritten the way the README's init-container pattern shows: an
// emptyDir, an init container that --installs istio-job-run into it, the job container's command prefixed with
// the installed wrapper and `--` (its args untouched), `--quit on-success` under OnFailure, and what the
// wrapper needs to find each sidecar: the downward-API status variable in a pod with Istio, the pod's
// annotations as a downward-API file in any other pod and for the injected kinds (their quit switched on where
// unset; set to anything else, the pod is refused), `--also` for a declared auth proxy.
// A script whose own quit works (--check's advice hand-rolled-quit) is rewritten the same way where the proof holds
// (hand-rolled.ts): the wrapper waits before the job and quits on every way out; else it is left, since it works.
// --inject --image-volume mounts the image read-only as an image volume instead (image-volume.ts): no copy.
// --inject --native instead only adds sidecar.istio.io/nativeSidecar: "true" to the pod template.
// Only insertions (edits.ts): the rest of the file stays byte for byte, and no node another place reaches
// through an alias is changed (that pod is refused, naming the anchor). A rewritten pod runs istio-job-run, so
// a second --inject leaves it as it is. What cannot be rewritten safely is refused, all of it named at once.

import type { Node, YAMLMap, YAMLSeq } from 'yaml';
import { DEFAULT_ANNOTATIONS_FILE, OPTIONS, STATUS_VARIABLE } from '../../config/options.ts';
import { STATUS_ANNOTATION } from '../../config/mode.ts';
import { PROGRAM } from '../../bundle/self.ts';
import { ENTRYPOINT_FLAG } from '../../config/tool-flags.ts';
import { ISTIO, readBoolFlag, readSetting, switchFlags } from '../../config/kinds.ts';
import type { Profile } from '../../config/profile.ts';
import { Editor, type Value, editable, sequenceOffset } from '../yaml/edits.ts';
import { type Pod, readPod } from '../pod/pod.ts';
import type { InjectedNamespaces, PodSidecar } from '../pod/sidecars.ts';
import { quitsOf, unstopped } from '../pod/stop.ts';
import type { Finding, InjectAction, InjectVerdict } from '../check/finding.ts';
import { check, RULE_SUMMARIES } from '../check/rules.ts';
import { handRolledAdvice, missingPrograms } from '../check/quits.ts';
import { get, isScalar, isSeq, items, lineOf, pairOf, type Source, text } from '../yaml/source.ts';
import { type Workload, workloads } from '../yaml/workloads.ts';
import { execArgsQuit, statusLost, foldedCommands, handQuits, type HandRolled, type ScalarEdit, takeOutHandRolled } from './hand-rolled.ts';
import { imageVolume, imageVolumeWrapper } from './image-volume.ts';
import { addNativeSidecars, planFor } from './native.ts';

interface InjectSettings {
  /** The image whose ENTRYPOINT is `istio-job-run --install` (docker/Dockerfile). */
  readonly image: string;
  readonly native: boolean;
  /** --wrapper: the wrapper even where the profile lets a native sidecar fix the pod. */
  readonly wrapper?: boolean;
  /** The cluster as stated; undefined: none (the wrapper, or --native's Istio annotation, as without a profile). */
  readonly profile?: Profile;
  /** The image mounted as an image volume, instead of an init container copying it into an emptyDir. */
  readonly imageVolume?: boolean;
  readonly namespaces?: InjectedNamespaces;
  readonly namespace?: string;
  /** The command of containers that write none (their image's ENTRYPOINT): container name -> words. */
  readonly entrypoints?: ReadonlyMap<string, readonly string[]>;
  /** Only what it would do with each pod: no text written. */
  readonly verdictsOnly?: boolean;
}

/** What it did with each pod, and the findings of --check on its lines (a pod it left as it is has none). */
type Injected = { readonly verdicts: ReadonlyMap<Finding, InjectVerdict> } & (
  | { readonly kind: 'done'; readonly text: string; readonly rewritten: readonly string[]; readonly notes: readonly string[] }
  | { readonly kind: 'refused'; readonly problems: readonly string[] }
);

/** What --inject does with a pod that has FINDING's error: its rule's row says (InjectAction). */
const actionOf = (finding: Finding): InjectAction | undefined => RULE_SUMMARIES[finding.rule].inject;

/** Whether a job container's script quits its sidecar itself (or is a folded block of commands). */
const rollsItsOwn = (container: Pod['jobs'][number]): boolean =>
  handQuits(container).length > 0 || foldedCommands(container) || container.scriptWrappers.some((wrapper) => wrapper.quits);

/**
 * Whether every sidecar a job's script quits is one the pod has (its template or its namespace shows it): a quit of
 * a sidecar the template declines stops nothing, and a wrapper would have nothing to stop.
 */
const quitsKnown = (pod: Pod): boolean =>
  pod.jobs.every((job) =>
    job.aimed.every((aimed) => aimed.what !== 'quit' || pod.sidecars.some((sidecar) => sidecar.kind === aimed.kind && sidecar.known)),
  );

/** What --inject says it did to a script it took a quit out of. */
function handRolledNotes(where: string, taken: Extract<HandRolled, { kind: 'rewritten' }>, onFailure: boolean, native = false): string[] {
  const notes: string[] = [];
  const by = native
    ? 'kubelet stops the native sidecar after the job'
    : `${PROGRAM} quits after the job ${onFailure ? 'succeeded (--quit on-success: OnFailure retries in the same pod)' : 'on every way out'}`;
  if (taken.lines.length > 0) notes.push(`${where}: took out the script's own quit (line ${[...new Set(taken.lines)].join(', ')}): ${by}`);
  for (const name of taken.folded)
    notes.push(`${where}: container ${name}'s folded script (>) written as a literal block (|) of the same lines`);
  for (const lost of taken.lost) notes.push(`${where}: ${lost}`);
  return notes;
}

/** The emptyDir, where the init container installs istio-job-run and the job container finds it. */
export const VOLUME = 'istio-job-run';
export const MOUNT_PATH = `/${PROGRAM}`;
export const INSTALLER = `install-${PROGRAM}`;
export const WRAPPER_PATH = `${MOUNT_PATH}/${PROGRAM}`;

/**
 * The file with each pod rewritten that needs it: a classic sidecar nothing stops, or an error of --check's that
 * advises --inject; a pod whose error a wrapper cannot fix is refused, saying why. READ: the file's pods and
 * findings, when read already.
 */
export function inject(
  source: Source,
  settings: InjectSettings,
  read: { readonly pods: readonly Pod[]; readonly findings: readonly Finding[] } = readFile(source, settings),
): Injected {
  const { pods, findings } = read;
  const run: FileRun = { source, settings, editor: new Editor(source), shared: sharedRanges(source), notes: [] };
  const problems: string[] = [];
  const rewritten: string[] = [];
  const verdicts = new Map<Finding, InjectVerdict>();
  const found = findingsOf(source, pods, findings);
  for (const [index, pod] of pods.entries()) {
    const { workload } = pod;
    const where = `${source.name}:${lineOf(source, workload.object)}: ${workload.kind} ${workload.name}`;
    const mine = found[index] ?? [];
    const outcome = injectPod(run, { pod, index, where, errors: mine.filter((finding) => finding.level === 'error') });
    // A pod left as it is has no verdict: its findings stand as --check gives them.
    if (outcome.kind === 'left') continue;
    if (outcome.kind === 'refused') problems.push(...outcome.why.map((problem) => `${where}: ${problem}`));
    else rewritten.push(`${workload.kind} ${workload.name}`);
    const verdict: InjectVerdict = outcome.kind === 'refused' ? { will: 'refuse', why: outcome.why.join('; ') } : { will: 'rewrite' };
    for (const finding of mine) verdicts.set(finding, verdict);
  }
  if (problems.length > 0) {
    // Nothing of a file is written while one of its pods is refused.
    const other: InjectVerdict = { will: 'refuse', why: `it writes nothing of this file while another pod is refused (${problems[0]})` };
    for (const [finding, verdict] of verdicts) if (verdict.will === 'rewrite') verdicts.set(finding, other);
    return { kind: 'refused', problems, verdicts };
  }
  return { kind: 'done', text: run.editor.changed ? run.editor.apply() : source.text, rewritten, notes: run.notes, verdicts };
}

/** What every pod of one file shares while --inject goes through them. */
interface FileRun {
  readonly source: Source;
  readonly settings: InjectSettings;
  /** The file's edits: each rewritten pod's, committed once the pod is known to be rewritten. */
  readonly editor: Editor;
  readonly shared: ReturnType<typeof sharedRanges>;
  /** What --inject says of the file, in order (a native move says its notes even of a pod then refused). */
  readonly notes: string[];
}

/** One pod of the file: where it is, its index among the file's pods, and --check's errors on its lines. */
interface PodAt {
  readonly pod: Pod;
  readonly index: number;
  readonly where: string;
  readonly errors: readonly Finding[];
}

/** What --inject did with one pod: rewrote it (into the file's editor), refused it, or left it as it is. */
type PodOutcome =
  | { readonly kind: 'rewritten' }
  | { readonly kind: 'refused'; readonly why: readonly string[] }
  | { readonly kind: 'left' };

const LEFT: PodOutcome = { kind: 'left' };
const refusal = (why: readonly string[]): PodOutcome => ({ kind: 'refused', why });

/** A pod left as it is, with a note saying why. */
function leftSaying(run: FileRun, at: PodAt, note: string): PodOutcome {
  run.notes.push(`${at.where}: left as it is: ${note}`);
  return LEFT;
}

/** A pod whose own quit works, left as it works because the wrapper cannot replace it (WHY). */
const leftWorking = (run: FileRun, at: PodAt, why: readonly string[]): PodOutcome =>
  leftSaying(run, at, `its own quit works, and the wrapper cannot replace it: ${[...new Set(why)].join('; ')}`);

/** One pod: left as it is where it needs nothing or works, refused where no rewrite fixes it, else rewritten. */
function injectPod(run: FileRun, at: PodAt): PodOutcome {
  const { pod, errors } = at;
  const wrapped = pod.jobs.find((container) => container.wrapper !== undefined);
  if (wrapped !== undefined && pod.sidecars.some((sidecar) => sidecar.form === 'classic'))
    return leftSaying(run, at, `container ${wrapped.name} already runs under ${wrapped.wrapper?.program}`);
  // --native without a profile: only Istio's annotation, nothing else touched.
  const legacyNative = run.settings.native && run.settings.profile === undefined;
  // What no wrapper changes (a script its own shell ends otherwise than bash would): the row says why.
  const refused = legacyNative ? undefined : errors.find((finding) => actionOf(finding) === 'refuse');
  if (refused !== undefined)
    return refusal([
      `--check finds ${refused.rule} on line ${refused.line}: ${RULE_SUMMARIES[refused.rule].refuses ?? 'a wrapper does not change it'}`,
    ]);
  const quits = ownQuits(run, at, legacyNative);
  return 'kind' in quits ? quits : rewritePod(run, at, quits, legacyNative);
}

/** What a pod's own quits leave to do: the sidecars nothing stops, and the edits that take its quits out. */
interface OwnQuits {
  readonly left: readonly PodSidecar[];
  readonly edits: readonly ScalarEdit[];
  readonly takenOut?: Extract<HandRolled, { kind: 'rewritten' }>;
  /** The script quits a sidecar itself, and that quit is to be taken out. */
  readonly handRolled: boolean;
  /** Its own quit works and --check finds no error: where the wrapper cannot replace it, the pod is left. */
  readonly worksOnly: boolean;
}

/**
 * The pod's own quits: a quit that works (--check's advice hand-rolled-quit, said or hidden by a warning on its
 * line), or one of a broken script, taken out where the proof holds; else the pod is left as it works, or refused.
 */
function ownQuits(run: FileRun, at: PodAt, legacyNative: boolean): OwnQuits | PodOutcome {
  const { pod, errors } = at;
  const broken = errors.some((finding) => actionOf(finding) === 'script');
  const works = !broken && !legacyNative && handRolledAdvice(pod).length > 0 && quitsKnown(pod);
  const worksOnly = works && errors.length === 0;
  let handRolled = (broken || works) && pod.jobs.some(rollsItsOwn);
  if (handRolled && !legacyNative) {
    const { settings } = run;
    const taken = takeOutHandRolled(run.source, pod, at.index, {
      namespaces: settings.namespaces ?? new Map(),
      namespace: settings.namespace,
      ...(settings.profile === undefined ? {} : { profile: settings.profile }),
    });
    if (taken.kind === 'refused' && worksOnly) return leftWorking(run, at, [taken.why]);
    if (taken.kind === 'refused' && !works) return refusal([taken.why]);
    if (taken.kind === 'rewritten') return { left: taken.left, edits: taken.edits, takenOut: taken, handRolled, worksOnly };
    handRolled = false;
  }
  if (!handRolled || legacyNative) {
    const scripted = errors.find((finding) => finding.advisesInject && actionOf(finding) !== 'setting');
    const cannot = scripted === undefined ? undefined : unfixable(pod, scripted);
    if (cannot !== undefined) return refusal([cannot]);
  }
  return { left: unstopped(pod, { brokenScriptsCount: false }), edits: [], handRolled, worksOnly };
}

/** The fix for the sidecars QUITS leaves: native first where the profile lets every one be native; else the wrapper. */
function rewritePod(run: FileRun, at: PodAt, quits: OwnQuits, legacyNative: boolean): PodOutcome {
  const { pod, errors } = at;
  const plan = planFor(pod, quits.left, run.settings);
  if (plan.fix === 'refuse') return quits.handRolled && quits.worksOnly ? leftWorking(run, at, plan.why) : refusal(plan.why);
  const nativeFix = legacyNative || plan.fix === 'native';
  const lost = quits.handRolled || nativeFix ? undefined : pod.jobs.map(statusLost).find((why) => why !== undefined);
  if (lost !== undefined && quits.left.length > 0) return refusal([lost]);
  if (quits.left.length === 0) {
    const other = errors[0];
    return other === undefined
      ? LEFT
      : leftSaying(run, at, `--check's ${other.rule} (line ${other.line}) is not for a wrapper to fix: see its advice`);
  }
  if (legacyNative && !quits.left.some((sidecar) => sidecar.kind === ISTIO)) return LEFT;
  // A wait whose program the image lacks never ends, and --inject takes out only quits.
  const hanging = nativeFix ? undefined : pod.jobs.flatMap(missingPrograms).find((found) => found.aimed.what === 'wait');
  if (hanging !== undefined)
    return refusal([
      `--check finds quit-program-missing on line ${hanging.aimed.line}: the script waits for the sidecar with ${hanging.program}, which ${hanging.image} lacks, so the wait never ends: take it out (${PROGRAM} waits itself), then --inject`,
    ]);
  return editPod(run, at, quits, legacyNative ? 'legacy-native' : plan.fix === 'native' ? 'native' : 'wrapper');
}

/** The pod's edits, FIX's way: written into the file's editor when none is refused. */
function editPod(run: FileRun, at: PodAt, quits: OwnQuits, fix: 'legacy-native' | 'native' | 'wrapper'): PodOutcome {
  const { source } = run;
  const { pod, where } = at;
  const { workload } = pod;
  // Said only once the pod is rewritten: a pod left as it is, or refused, had nothing taken out.
  const takenNotes =
    quits.takenOut === undefined ? [] : handRolledNotes(where, quits.takenOut, workload.restartPolicy === 'OnFailure', fix !== 'wrapper');
  run.editor.seqOffset = sequenceOffset(source, pairOf(workload.podSpec, 'containers'));
  const guarded = new GuardedEditor(run.editor, run.shared, source);
  // A quit written as exec items after a program no shell runs never ran: it goes, and the wrapper quits.
  const execQuits = fix !== 'wrapper' || pod.jobs.length !== 1 ? [] : pod.jobs.flatMap((job) => execArgsQuit(source, job));
  if (execQuits.length > 0)
    takenNotes.push(
      `${where}: took out the quit written as exec items after the program (line ${source.lines.linePos(execQuits[0]?.start ?? 0).line}), which never ran`,
    );
  for (const edit of [...quits.edits, ...execQuits]) guarded.replace(edit);
  const refusals =
    fix === 'legacy-native'
      ? addNative(guarded, workload)
      : fix === 'native'
        ? makeNative(guarded, source, pod, quits.left, (note) => run.notes.push(`${where}: ${note}`))
        : addWrapper(guarded, pod, quits.left, run.settings);
  refusals.push(...guarded.refusals);
  if (refusals.length > 0 && quits.handRolled && quits.worksOnly) return leftWorking(run, at, refusals);
  if (refusals.length > 0) return refusal([...new Set(refusals)]);
  if (run.settings.verdictsOnly !== true) guarded.commit();
  run.notes.push(...takenNotes);
  return { kind: 'rewritten' };
}

/** Why a wrapper around the job's script cannot fix what FINDING says of it; undefined when it can. */
function unfixable(pod: Pod, finding: Finding): string | undefined {
  const quitting = pod.jobs.flatMap((job) => quitsOf(job).map((quit) => ({ job, quit })))[0];
  const found = `--check finds ${finding.rule} on line ${finding.line}`;
  if (quitting === undefined) return `${found}, which a wrapper around the script does not change: fix the script by hand`;
  return (
    `container ${quitting.job.name}'s script sends its own quit (line ${quitting.quit.line}) and ${found}: a wrapper around the ` +
    `script would leave that quit in it; take the quit out (${PROGRAM} quits on every way out), then --inject`
  );
}

/** Each workload's pod (its scripts parsed once), and --check's findings from them. */
function readFile(
  source: Source,
  settings: Pick<InjectSettings, 'namespaces' | 'namespace' | 'profile'>,
): { pods: Pod[]; findings: Finding[] } {
  const namespaces = settings.namespaces ?? new Map();
  const { namespace, profile } = settings;
  const pods = workloads(source).map((workload) => readPod(workload, namespaces, namespace, profile));
  const findings = check(
    source,
    { namespaces, ...(namespace === undefined ? {} : { namespace }), ...(profile === undefined ? {} : { profile }) },
    pods,
  );
  return { pods, findings };
}

/** The findings on the lines of each pod's workload (in the order written, none inside another), in one pass. */
function findingsOf(source: Source, pods: readonly Pod[], findings: readonly Finding[]): Finding[][] {
  const ranges = pods.map(({ workload }) => {
    const [start = 0, end = start] = workload.object.range ?? [];
    return { first: source.lines.linePos(start).line, last: source.lines.linePos(end).line, found: [] as Finding[] };
  });
  let at = 0;
  for (const finding of [...findings].sort((a, b) => a.line - b.line)) {
    while (at < ranges.length && (ranges[at]?.last ?? 0) < finding.line) at++;
    const range = ranges[at];
    if (range !== undefined && range.first <= finding.line) range.found.push(finding);
  }
  return ranges.map((range) => range.found);
}

/** --check's findings of SOURCE, each that advises --inject with what --inject does with its pod (none: it leaves it). */
export function advised(source: Source, settings: Pick<InjectSettings, 'namespaces' | 'namespace' | 'profile'>): Finding[] {
  const read = readFile(source, settings);
  const { findings } = read;
  if (!findings.some((finding) => finding.advisesInject)) return findings;
  const result = inject(source, { image: PROGRAM, native: false, verdictsOnly: true, ...settings }, read);
  return findings.map((finding) => {
    const verdict = result.verdicts.get(finding);
    return !finding.advisesInject || verdict === undefined ? finding : { ...finding, inject: verdict };
  });
}

/** The text ranges of anchored nodes that an alias refers to: changing one changes every place that uses it. */
function sharedRanges(source: Source): { start: number; end: number; anchor: string; line: number }[] {
  return source.aliased.map((node) => ({
    start: node.range?.[0] ?? 0,
    end: node.range?.[2] ?? 0,
    anchor: (node as { anchor?: string }).anchor ?? '?',
    line: lineOf(source, node),
  }));
}

/**
 * The editor, held back until a pod's edits are all known to be safe: an edit inside a node another place
 * reaches through an alias is refused, naming the anchor, and nothing of that pod is written.
 */
class GuardedEditor {
  readonly refusals: string[] = [];
  readonly #pending: (() => void)[] = [];
  readonly editor: Editor;
  readonly shared: readonly { start: number; end: number; anchor: string; line: number }[];
  readonly source: Source;
  constructor(editor: Editor, shared: readonly { start: number; end: number; anchor: string; line: number }[], source: Source) {
    this.editor = editor;
    this.shared = shared;
    this.source = source;
  }

  #check(node: Node): boolean {
    const start = node.range?.[0] ?? 0;
    const hit = this.shared.find((range) => start >= range.start && start < range.end);
    if (hit === undefined) return true;
    this.refusals.push(
      `line ${lineOf(this.source, node)} is inside &${hit.anchor} (line ${hit.line}), which an alias uses elsewhere: ` +
        'changing it would change every place that uses it; write that part out in this pod, or rewrite it by hand',
    );
    return false;
  }

  /** A script's text replaced (--inject taking its quit out): refused inside a node an alias reaches, as any edit. */
  replace(edit: ScalarEdit): void {
    const hit = this.shared.find((range) => edit.start >= range.start && edit.start < range.end);
    if (hit !== undefined) {
      this.refusals.push(
        `line ${this.source.lines.linePos(edit.start).line} is inside &${hit.anchor} (line ${hit.line}), which an alias uses elsewhere: ` +
          'changing it would change every place that uses it; write that part out in this pod, or rewrite it by hand',
      );
      return;
    }
    this.#pending.push(() => this.editor.replace(edit.start, edit.end, edit.text));
  }
  prepend(seq: YAMLSeq, depth: number, values: readonly Value[]): void {
    if (this.#check(seq)) this.#pending.push(() => this.editor.prepend(seq, depth, values));
  }
  append(seq: YAMLSeq, depth: number, value: Value): void {
    if (this.#check(seq)) this.#pending.push(() => this.editor.append(seq, depth, value));
  }
  addPair(map: YAMLMap, depth: number, key: string, value: Value, before?: Parameters<Editor['addPair']>[4]): void {
    if (this.#check(map)) this.#pending.push(() => this.editor.addPair(map, depth, key, value, before));
  }
  /** VALUE for the list under KEY of OWNER: appended to it, or all of a key's new items as the key's list (in place of an empty one). */
  addItem(owner: YAMLMap, depth: number, key: string, value: Value): void {
    const list = get(owner, key);
    if (isSeq(list)) return this.append(list, depth + 1, value);
    const gathered = this.#lists.find((entry) => entry.owner === owner && entry.key === key);
    if (gathered !== undefined) gathered.values.push(value);
    else this.#lists.push({ owner, depth, key, values: [value] });
  }
  readonly #lists: { owner: YAMLMap; depth: number; key: string; values: Value[] }[] = [];
  commit(): void {
    for (const { owner, depth, key, values } of this.#lists) {
      const pair = pairOf(owner, key);
      if (pair !== undefined && emptyValue(pair.value)) {
        if (this.#check(owner)) this.#pending.push(() => this.editor.fillPair(pair, depth, key, values));
      } else this.addPair(owner, depth, key, values);
    }
    for (const edit of this.#pending) edit();
  }
}

/** A key written with no value (`volumes:`), which Kubernetes reads as an empty list. */
const emptyValue = (node: unknown): boolean =>
  node === null || node === undefined || (isScalar(node) && node.value === null && text(node) === undefined);

/** The structural depths the editor orders insertions at one place by. */
const DEPTH = { podSpec: 0, podList: 1, container: 2, containerList: 3, template: 0, metadata: 1, annotations: 2 } as const;

export const NATIVE_ANNOTATION = ISTIO.template.native?.keys[0] ?? '';

/** The profile's native fix of LEFT (native.ts): each switch set, each declared container moved, and said. */
function makeNative(editor: GuardedEditor, source: Source, pod: Pod, left: readonly PodSidecar[], note: (line: string) => void): string[] {
  const done = addNativeSidecars(editor, source, pod, left);
  if (done.problems.length > 0) return [...done.problems];
  const switches = Object.entries(done.annotations);
  if (switches.length > 0) addAnnotations(editor, pod.workload, done.annotations);
  for (const [key] of switches) note(`set ${key}: "true": its sidecar runs native (kubelet stops it after the job)`);
  for (const name of done.moved)
    note(`moved container ${name} to initContainers with restartPolicy: Always: a native sidecar, which kubelet stops after the job`);
  return [];
}

function addNative(editor: GuardedEditor, workload: Workload): string[] {
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
    editor.addPair(annotations as YAMLMap, DEPTH.annotations, NATIVE_ANNOTATION, 'true');
  } else {
    return ['its pod template metadata is not a map of annotations --inject can add to: add the annotation by hand'];
  }
  return [];
}

/** The downward-API volume of the pod's annotations, where the wrapper reads the injected sidecars. */
export const PODINFO_VOLUME = `${PROGRAM}-podinfo`;
export const PODINFO_DIR = DEFAULT_ANNOTATIONS_FILE.slice(0, DEFAULT_ANNOTATIONS_FILE.lastIndexOf('/'));
const PODINFO_FILE = DEFAULT_ANNOTATIONS_FILE.slice(PODINFO_DIR.length + 1);

/** What the wrapper is given to find its sidecars: Istio's status variable, or the pod's annotations as a file. */
export const STATUS_ENV: Value = {
  name: STATUS_VARIABLE,
  valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${STATUS_ANNOTATION}']` } },
};
export const PODINFO_MOUNT: Value = { name: PODINFO_VOLUME, mountPath: PODINFO_DIR, readOnly: true };
export const PODINFO_VOLUME_ITEM: Value = {
  name: PODINFO_VOLUME,
  downwardAPI: { items: [{ path: PODINFO_FILE, fieldRef: { fieldPath: 'metadata.annotations' } }] },
};
/** The job container's mount of the wrapper's volume. */
export const WRAPPER_MOUNT: Value = { name: VOLUME, mountPath: MOUNT_PATH, readOnly: true };

function addWrapper(editor: GuardedEditor, pod: Pod, left: readonly PodSidecar[], settings: InjectSettings): string[] {
  const { workload } = pod;
  const { podSpec } = workload;
  const container = wrappedContainer(pod);
  if (typeof container === 'string') return [container];
  const name = text(get(container, 'name')) ?? '(unnamed)';
  const problems: string[] = [];
  const commandWrong = commandProblem(container, name, left, settings);
  if (commandWrong !== undefined) problems.push(commandWrong);
  problems.push(...listProblems(podSpec, container, name, settings));
  for (const sidecar of left) {
    if (sidecar.noQuit === true)
      problems.push(
        `${sidecar.why} runs a release of the ${sidecar.kind.label} without a quit endpoint: move to its v2 image (--quitquitquit), or make it a native sidecar`,
      );
  }
  const viaAnnotations = left.filter(
    (sidecar) => sidecar.kind !== ISTIO && sidecar.container === undefined && sidecar.kind.fromAnnotations !== undefined,
  );
  const switches = quitSwitches(pod, viaAnnotations, problems);
  const flags = proxyFlags(left, problems);
  // Istio's status variable in a pod with Istio; elsewhere the annotations file says which sidecars it has.
  const istio = pod.sidecars.some((sidecar) => sidecar.kind === ISTIO);
  const podinfo = viaAnnotations.length > 0 || !istio;
  const mountsPodinfo = items(get(container, 'volumeMounts')).some((mount) => text(get(mount, 'mountPath')) === PODINFO_DIR);
  if (podinfo && !mountsPodinfo && named(get(podSpec, 'volumes'), 'name', PODINFO_VOLUME))
    problems.push(`the pod already has a volume named ${PODINFO_VOLUME}: rename it`);
  if (problems.length > 0) return problems;
  writeWrapper(editor, workload, container, settings, {
    prefix: wrapperPrefix(workload, left, settings),
    entrypoint: settings.entrypoints?.get(name),
    istio,
    podinfo: podinfo && !mountsPodinfo,
    flags,
    switches,
  });
  return [];
}

/** The one job container the wrapper goes in front of, or why there is none to wrap. */
function wrappedContainer(pod: Pod): YAMLMap | string {
  const containers = pod.jobs.map((job) => job.node);
  if (containers.length === 1) return containers[0] as YAMLMap;
  const names = containers.map((container) => text(get(container, 'name')) ?? '(unnamed)').join(', ');
  return containers.length === 0
    ? 'its pod has no container to wrap'
    : `its pod has ${containers.length} job containers (${names}): the first to end would stop the sidecar for the others. ` +
        'Wrap the one that ends last by hand (istio-job-run -- its command), or make the sidecar a native one';
}

/** Why the container's command cannot take the wrapper in front: none and no --entrypoint, not a list, or both. */
function commandProblem(container: YAMLMap, name: string, left: readonly PodSidecar[], settings: InjectSettings): string | undefined {
  const command = get(container, 'command');
  const entrypoint = settings.entrypoints?.get(name);
  if (command === undefined && entrypoint === undefined) {
    return (
      `container ${name} has no command, so its image's ENTRYPOINT runs, which the manifest does not show: ` +
      `give it with ${ENTRYPOINT_FLAG} ${name}=ENTRYPOINT (the words of the image's ENTRYPOINT; args stay as they are)` +
      (left.some((sidecar) => sidecar.kind === ISTIO) ? ', or use --inject --native' : '')
    );
  }
  if (command !== undefined && (!isSeq(command) || !command.items.every((item) => isScalar(item))))
    return `container ${name}: its command is not a list of strings --inject can prefix: write it as one`;
  if (command !== undefined && entrypoint !== undefined)
    return `container ${name} has a command already: ${ENTRYPOINT_FLAG} ${name}=... is for a container without one`;
  return undefined;
}

/** Whether an item of LIST has KEY set to VALUE. */
const named = (list: Node | undefined, key: string, value: string): boolean => items(list).some((item) => text(get(item, key)) === value);

/** What in the pod's lists stands in the way of the wrapper's items: a key that is not a list, a name or path it takes. */
function listProblems(podSpec: YAMLMap, container: YAMLMap, name: string, settings: InjectSettings): string[] {
  const problems: string[] = [];
  const lists: [Node, string, Node | undefined][] = [
    [podSpec, 'volumes', get(podSpec, 'volumes')],
    [podSpec, 'initContainers', get(podSpec, 'initContainers')],
    [container, 'volumeMounts', get(container, 'volumeMounts')],
    [container, 'env', get(container, 'env')],
  ];
  for (const [owner, key, list] of lists) {
    if (pairOf(owner, key) !== undefined && !isSeq(list) && !emptyValue(list))
      problems.push(`${key} of ${owner === podSpec ? 'the pod' : `container ${name}`} is not a list`);
  }
  if (named(get(podSpec, 'volumes'), 'name', VOLUME)) problems.push(`the pod already has a volume named ${VOLUME}: rename it`);
  if (settings.imageVolume !== true && named(get(podSpec, 'initContainers'), 'name', INSTALLER))
    problems.push(`the pod already has an init container named ${INSTALLER}`);
  if (named(get(container, 'volumeMounts'), 'mountPath', MOUNT_PATH))
    problems.push(`container ${name} already mounts something at ${MOUNT_PATH}`);
  return problems;
}

/**
 * The quit of an injected kind that the pod leaves off: the annotations that switch it on where the template does
 * not set them; where it sets one off, why, added to PROBLEMS.
 */
function quitSwitches(pod: Pod, viaAnnotations: readonly PodSidecar[], problems: string[]): (readonly [string, string])[] {
  const switches: (readonly [string, string])[] = [];
  for (const sidecar of viaAnnotations) {
    const quitSwitch = sidecar.kind.template.quitSwitch;
    if (typeof quitSwitch !== 'object' || !('annotation' in quitSwitch)) continue;
    const { annotation, reading, byDefault } = quitSwitch;
    const set = pod.annotations.get(annotation)?.value;
    const setting = readSetting(reading, set);
    if (setting === 'on' || (setting === 'unset' && byDefault)) continue;
    const on = reading.on[0] ?? 'true';
    if (set === undefined) switches.push([annotation, on]);
    else
      problems.push(
        `its pod template sets ${annotation}: "${set}", which does not switch the ${sidecar.kind.label}'s quit endpoint on ` +
          `(on is ${reading.on.map((value) => `"${value}"`).join(', ')}): set it to "${on}" and run --inject again`,
      );
  }
  return switches;
}

/**
 * The auth proxies answer readiness only with --health-check, and a quit only with --quitquitquit: each flag to add
 * where unset; where a container sets one off, why, added to PROBLEMS.
 */
function proxyFlags(left: readonly PodSidecar[], problems: string[]): [YAMLSeq, string][] {
  const flags: [YAMLSeq, string][] = [];
  for (const sidecar of left) {
    const args = get(sidecar.container, 'args');
    if (sidecar.container === undefined || !isSeq(args)) continue;
    const words = items(args).map((item) => text(item) ?? '');
    for (const flag of switchFlags(sidecar.kind)) {
      const setting = readBoolFlag(words, flag);
      if (setting === 'unset') flags.push([args, flag]);
      else if (setting !== 'on')
        problems.push(
          `${sidecar.why} runs with ${words.filter((word) => word.startsWith(`${flag}=`)).at(-1)}, which leaves ${flag} off: ` +
            `write ${flag} instead and run --inject again`,
        );
    }
  }
  return flags;
}

/** The wrapper's words in front of the job's command: --quit on-success under OnFailure, --also for the declared auth proxies. */
function wrapperPrefix(workload: Workload, left: readonly PodSidecar[], settings: InjectSettings): string[] {
  // --also for the declared auth proxies, with their ports when the pod moves them.
  const also = left
    .filter((sidecar) => sidecar.container !== undefined)
    .map((sidecar) => {
      const ports = sidecar.kind.listeners.map((listener, index) =>
        index === sidecar.kind.quit.listener ? sidecar.quitPort : listener.port,
      );
      const moved = ports.some((port, index) => port !== sidecar.kind.listeners[index]?.port);
      return moved ? [sidecar.kind.name, ...ports].join(':') : sidecar.kind.name;
    });
  return [
    settings.imageVolume === true ? imageVolumeWrapper(MOUNT_PATH) : WRAPPER_PATH,
    ...(workload.restartPolicy === 'OnFailure' ? [`--${OPTIONS.quit.flag}`, 'on-success'] : []),
    ...also.flatMap((entry) => [`--${OPTIONS.also.flag}`, entry]),
    '--',
  ];
}

/** The wrapper written into the pod: its words in front of the command, its volume and installer, and what it reads. */
function writeWrapper(
  editor: GuardedEditor,
  workload: Workload,
  container: YAMLMap,
  settings: InjectSettings,
  plan: {
    readonly prefix: readonly string[];
    /** The words of --entrypoint, for a container without a command. */
    readonly entrypoint: readonly string[] | undefined;
    readonly istio: boolean;
    /** The annotations file to mount. */
    readonly podinfo: boolean;
    readonly flags: readonly [YAMLSeq, string][];
    readonly switches: readonly (readonly [string, string])[];
  },
): void {
  const { podSpec } = workload;
  const command = get(container, 'command');
  if (command !== undefined) editor.prepend(command as YAMLSeq, DEPTH.containerList, plan.prefix);
  else editor.addPair(container, DEPTH.container, 'command', [...plan.prefix, ...(plan.entrypoint ?? [])]);
  addToList(editor, container, DEPTH.container, 'volumeMounts', WRAPPER_MOUNT);
  if (plan.istio) addToList(editor, container, DEPTH.container, 'env', STATUS_ENV);
  addToList(
    editor,
    podSpec,
    DEPTH.podSpec,
    'volumes',
    settings.imageVolume === true ? imageVolume(VOLUME, settings.image) : { name: VOLUME, emptyDir: {} },
  );
  if (plan.podinfo) {
    addToList(editor, container, DEPTH.container, 'volumeMounts', PODINFO_MOUNT);
    addToList(editor, podSpec, DEPTH.podSpec, 'volumes', PODINFO_VOLUME_ITEM);
  }
  if (settings.imageVolume !== true) addToList(editor, podSpec, DEPTH.podSpec, 'initContainers', installer(settings.image));
  for (const [args, flag] of plan.flags) editor.append(args, DEPTH.containerList, flag);
  if (plan.switches.length > 0) addAnnotations(editor, workload, Object.fromEntries(plan.switches));
}

/** Annotations added to the pod template (its metadata or annotations map made where missing). */
function addAnnotations(editor: GuardedEditor, workload: Workload, values: Record<string, string>): void {
  const metadataPair = pairOf(workload.template, 'metadata');
  const metadata = metadataPair?.value;
  const annotations = get(metadata, 'annotations');
  if (metadataPair === undefined)
    editor.addPair(workload.template, DEPTH.template, 'metadata', { annotations: values }, pairOf(workload.template, 'spec'));
  else if (pairOf(metadata, 'annotations') === undefined && editable(metadata))
    editor.addPair(metadata as YAMLMap, DEPTH.metadata, 'annotations', values);
  else if (editable(annotations) && !isSeq(annotations)) {
    for (const [key, value] of Object.entries(values)) editor.addPair(annotations as YAMLMap, DEPTH.annotations, key, value);
  }
}

/** An item appended to the list under KEY, or the key added with a list of it (items of one key gathered first). */
function addToList(editor: GuardedEditor, owner: YAMLMap, depth: number, key: string, value: Value): void {
  editor.addItem(owner, depth, key, value);
}

/**
 * The init container of the README's pattern: the image's ENTRYPOINT is `istio-job-run --install`, its argument
 * the emptyDir; restricted as docker/k8s/cronjob.yaml's, with its memory (the copy is page cache).
 */
export function installer(image: string): Value {
  return {
    name: INSTALLER,
    image,
    args: [MOUNT_PATH],
    volumeMounts: [{ name: VOLUME, mountPath: MOUNT_PATH }],
    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
    resources: { requests: { memory: '32Mi' }, limits: { memory: '64Mi' } },
  };
}
