// A job container whose script quits its sidecar by hand: the quit taken out (unquit.ts), the script's scalar
// written back in its own style (a folded `>` block whose lines are commands as a literal `|` block with the same
// lines), and the result proven before anything is written: the file with the new script is read again, and the
// outcome model must find, for the job succeeding and failing, the original's sequences of the job's commands and
// requests less its quits (sequences.ts), no quit, and the job's status (0, and not 0; or 0 after a failure only
// where the original ended so too, a loss said once), so that the wrapper in front quits after the job on every way
// out and exits with its code. An `exit 0` after a quit goes only where the proof holds without it. Otherwise the
// pod is refused in one line naming what cannot be made safe.

import type { Scalar } from 'yaml';
import { QUIT_WORDS } from '../../config/kinds.ts';
import type { Profile } from '../../config/profile.ts';
import { argvOf, type ContainerFacts } from '../pod/containers.ts';
import { type Pod, readPod } from '../pod/pod.ts';
import type { InjectedNamespaces, PodSidecar } from '../pod/sidecars.ts';
import { quitsOf, unstopped } from '../pod/stop.ts';
import { statusLostToWrapper } from '../check/paths.ts';
import { basename } from '../script/commands.ts';
import { type Place, requestOf } from '../script/requests.ts';
import { isSeq, items } from '../yaml/source.ts';
import { parseSource, type Source } from '../yaml/source.ts';
import { workloads } from '../yaml/workloads.ts';
import { type Compared, compare, type Rewrite } from './sequences.ts';
import { type Cut, takeQuitsOut } from './unquit.ts';

/** Programs that are no job: a quitting wrapper that runs one of these only quits. */
const NO_JOB = new Set(['echo', 'printf', 'true', ':', 'sleep', 'exit', 'date']);

/** A scalar's text replaced in the file: START to END by TEXT. */
export interface ScalarEdit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

export type HandRolled =
  | {
      readonly kind: 'rewritten';
      readonly edits: readonly ScalarEdit[];
      /** The pod's classic sidecars that nothing stops once the quits are out: the wrapper's to stop. */
      readonly left: readonly PodSidecar[];
      /** What was taken out, for the notes: the file's lines of the quits. */
      readonly lines: readonly number[];
      readonly folded: readonly string[];
      /** Where a script still loses the job's status by itself, as it did before: a finding the rewrite keeps. */
      readonly lost: readonly string[];
    }
  | { readonly kind: 'refused'; readonly why: string };

/** The quits a container's script sends by hand: each quit's place in the script and its line in the file. */
export function handQuits(container: ContainerFacts): { place: Place; line: number }[] {
  const quits = container.aimed
    .filter((aimed) => aimed.what === 'quit' || (aimed.request.method === 'SIGNAL' && aimed.kind !== undefined))
    .map((aimed) => ({ place: aimed.request.place, line: aimed.line }));
  // A quitting wrapper that runs no job (`linkerd-await --shutdown echo done` after the job) is a quit too.
  for (const wrapper of container.scriptWrappers) {
    if (wrapper.quits && (wrapper.child === undefined || NO_JOB.has(basename(wrapper.child))))
      quits.push({ place: wrapper.place, line: wrapper.line });
  }
  const seen = new Set<string>();
  return quits.filter(({ place }) => {
    const key = `${place.row}:${place.column}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Whether a job container's script is a folded block whose joined lines are each a command: a literal block's lines. */
export function foldedCommands(container: ContainerFacts): boolean {
  const script = container.script;
  if (script === undefined || script.node.type !== 'BLOCK_FOLDED') return false;
  const joins = script.lines.rows.reduce((sum, row) => sum + Math.max(0, row.pieces.length - 1), 0);
  // No line joined, yet more than one row: its commands are kept apart by blank lines, which a literal block keeps too.
  return joins === script.joined.length && (joins > 0 || script.lines.rows.length > 1);
}

/** Where the pod is read: the namespaces' injection, the file's namespace, the cluster profile. */
interface HandRolledSettings {
  readonly namespaces: InjectedNamespaces;
  readonly namespace?: string | undefined;
  readonly profile?: Profile;
}

/**
 * POD's job containers with their hand-rolled quits taken out (and folded scripts made literal), proven; the
 * edits to make, or why not. NAMESPACES and NAMESPACE: as the pod was read.
 */
export function takeOutHandRolled(source: Source, pod: Pod, podIndex: number, settings: HandRolledSettings): HandRolled {
  // The `exit 0` after a quit that ends its body goes where the script then ends as it did; else it stays.
  const first = takeOut(source, pod, podIndex, settings, true);
  if (first.kind === 'rewritten') return first;
  const second = takeOut(source, pod, podIndex, settings, false);
  return second.kind === 'rewritten' ? second : first;
}

function takeOut(source: Source, pod: Pod, podIndex: number, settings: HandRolledSettings, exits: boolean): HandRolled {
  const edits: ScalarEdit[] = [];
  const rewrites = new Map<number, { readonly rewrite: Rewrite; readonly before: ContainerFacts }>();
  const lines: number[] = [];
  const folded: string[] = [];
  // A folded script of commands is read as the literal block it becomes: its quits are found there.
  const literals = pod.jobs.filter(foldedCommands);
  const asLiteral = literals.length === 0 ? pod : reread(source, podIndex, literals.flatMap(literalEdit), settings);
  if (typeof asLiteral === 'string') return { kind: 'refused', why: asLiteral };
  for (const [at, original] of pod.jobs.entries()) {
    const literal = literals.includes(original);
    const container = asLiteral.jobs[at] ?? original;
    const script = original.script;
    const quits = handQuits(container);
    const wrapper = container.scriptWrappers.find(
      (found) => found.quits && found.child !== undefined && !NO_JOB.has(basename(found.child)),
    );
    if (wrapper !== undefined)
      return {
        kind: 'refused',
        why: `container ${container.name}'s script runs ${wrapper.child} under ${wrapper.program} on line ${wrapper.line}, which quits too: take ${wrapper.program} out of the script by hand, then --inject`,
      };
    if (script === undefined || (quits.length === 0 && !literal)) continue;
    const block = blockOf(source, script.node, literal);
    if (script.node.type === 'BLOCK_FOLDED' && block === undefined)
      return {
        kind: 'refused',
        why: `container ${container.name}'s script is a folded block (>) that joins some of its lines on purpose: write it as a literal block (|) by hand`,
      };
    if (script.node.type === 'BLOCK_LITERAL' && block === undefined)
      return {
        kind: 'refused',
        why: `container ${container.name}'s script is a block scalar whose lines it cannot map: take the quit out by hand`,
      };
    const value = block?.value ?? String(script.node.value);
    const rowLine = (row: number): number => container.script?.lines.lineAt(row, 0) ?? 0;
    const places = quits.map((quit) => quit.place);
    const taken =
      quits.length === 0 ? ({ kind: 'rewritten', script: value, cuts: [] } as const) : takeQuitsOut(value, places, rowLine, true, exits);
    if (taken.kind === 'refused') return { kind: 'refused', why: `container ${container.name}: ${taken.why}` };
    rewrites.set(at, { rewrite: { before: value, after: taken.script, cuts: taken.cuts }, before: container });
    lines.push(...quits.map((quit) => quit.line));
    if (literal) folded.push(container.name);
    edits.push(...(block === undefined ? flowEdits(source, script.node, taken.cuts, taken.script) : blockEdits(block, taken.cuts)));
  }
  const proof = prove(source, podIndex, edits, settings, rewrites);
  if (typeof proof === 'string') return { kind: 'refused', why: proof };
  // The sidecars the wrapper stops: those nothing stops once the quits are out, and those only a quit showed.
  const kinds = new Set(asLiteral.sidecars.map((sidecar) => sidecar.kind));
  const after = new Set(proof.sidecars.map((sidecar) => sidecar.kind));
  const still = new Set(unstopped(proof, { brokenScriptsCount: false }).map((sidecar) => sidecar.kind));
  // The kinds whose quits were taken out: the script no longer stops them (the proof found no quit left).
  const taken = new Set(
    asLiteral.jobs.flatMap((job) => job.aimed.flatMap((aimed) => (aimed.what === 'quit' && aimed.kind !== undefined ? [aimed.kind] : []))),
  );
  const left = asLiteral.sidecars.filter(
    (sidecar) =>
      sidecar.form === 'classic' &&
      sidecar.kubexit !== true &&
      kinds.has(sidecar.kind) &&
      // Shown by the manifest and now stopped by nothing, or shown only by a quit taken out (its namespace injects
      // it), or by a wait the script keeps, beside a quit taken out.
      ((sidecar.known && still.has(sidecar.kind)) || !after.has(sidecar.kind) || taken.has(sidecar.kind)),
  );
  return { kind: 'rewritten', edits, left, lines, folded, lost: lostStatuses(proof, rewrites) };
}

/** EDITS in the order of the file. */
const sortEdits = (edits: readonly ScalarEdit[]): ScalarEdit[] => [...edits].sort((a, b) => a.start - b.start || a.end - b.end);

/** The file with EDITS made, read again: the pod at INDEX, or why its scripts are not safe behind a wrapper. */
function prove(
  source: Source,
  index: number,
  edits: readonly ScalarEdit[],
  settings: HandRolledSettings,
  rewrites: ReadonlyMap<number, { readonly rewrite: Rewrite; readonly before: ContainerFacts }>,
): Pod | string {
  const pod = reread(source, index, edits, settings);
  if (typeof pod === 'string') return pod;
  for (const [at, container] of pod.jobs.entries()) {
    const rewritten = rewrites.get(at);
    const compared = rewritten === undefined ? undefined : sameSequences(rewritten.rewrite, rewritten.before, container);
    if (typeof compared === 'string') return `container ${container.name}: ${compared}`;
    const why = unsafe(container, compared?.lostBefore === true);
    if (why !== undefined) return `container ${container.name}: ${why}`;
  }
  return pod;
}

/** Each rewritten script of POD that ends with 0 after the job failed (as its original did): where, for the note. */
function lostStatuses(pod: Pod, rewrites: ReadonlyMap<number, unknown>): string[] {
  return pod.jobs.flatMap((container, at) => {
    const script = container.script;
    const failed = script?.facts.outcome.failure.find((path) => path.failed && path.status === 0);
    if (!rewrites.has(at) || script === undefined || failed === undefined) return [];
    const line = failed.statusAt === undefined ? undefined : script.lines.lineAt(failed.statusAt.row, failed.statusAt.column);
    return [
      `container ${container.name}'s script still ends with 0 after the job failed${line === undefined ? '' : ` (line ${line}: ${failed.endText ?? 'its last command'})`}, ` +
        "as it did before, and the wrapper reports that 0: keep the job's status by hand (rc=$? right after the job, exit $rc)",
    ];
  });
}

/**
 * Why the rewritten script AFTER does not run what BEFORE ran, less its quits (sequences.ts), naming the line of
 * the original; or the comparison when it does.
 */
function sameSequences(rewrite: Rewrite, before: ContainerFacts, after: ContainerFacts): Extract<Compared, { kind: 'same' }> | string {
  const old = before.script?.facts.outcome;
  const now = after.script?.facts.outcome;
  if (old === undefined || now === undefined || rewrite.cuts.length === 0) return { kind: 'same', lostBefore: false };
  const compared = compare(rewrite, old, now);
  if (compared.kind === 'same') return compared;
  const row = rewrite.before.slice(0, compared.offset).split('\n').length - 1;
  const column = compared.offset - (rewrite.before.lastIndexOf('\n', compared.offset - 1) + 1);
  const line = before.script?.lines.lineAt(row, column) ?? '?';
  const text = (rewrite.before.slice(compared.offset).split('\n')[0] ?? '').trim();
  const shown = text.length > 50 ? `${text.slice(0, 47)}...` : text;
  const when = compared.world === 'success' ? 'after the job succeeded' : 'after the job failed';
  return compared.how === 'runs'
    ? `without its quit the script would also run line ${line} (${shown}) ${when}, which it did not before: take the quit out by hand`
    : `without its quit the script would no longer run line ${line} (${shown}) ${when}: take the quit out by hand`;
}

/** The `>` of a folded script made `|`. */
function literalEdit(container: ContainerFacts): ScalarEdit[] {
  const node = container.script?.node;
  const start = node?.range?.[0];
  return start === undefined ? [] : [{ start, end: start + 1, text: '|' }];
}

/** The file with EDITS made, read again: the pod at INDEX, or why it cannot be. */
function reread(source: Source, index: number, edits: readonly ScalarEdit[], settings: HandRolledSettings): Pod | string {
  let text = '';
  let from = 0;
  for (const edit of sortEdits(edits)) {
    text += source.text.slice(from, edit.start) + edit.text;
    from = edit.end;
  }
  text += source.text.slice(from);
  const parsed = parseSource(source.name, text);
  if ('error' in parsed) return `the rewritten file is not YAML (${parsed.error}): rewrite it by hand`;
  const workload = workloads(parsed)[index];
  if (workload === undefined) return 'the rewritten file has lost a workload: rewrite it by hand';
  return readPod(workload, settings.namespaces, settings.namespace, settings.profile);
}

/** Why a job container's script, behind a wrapper, would not end with the job's status or would quit itself. */
function unsafe(container: ContainerFacts, lostBefore = false): string | undefined {
  const script = container.script;
  if (script === undefined) return undefined;
  const { facts } = script;
  if (facts.syntaxError !== undefined) return `without its quit the shell would reject the script near "${facts.syntaxError.near}"`;
  const construct = facts.constructs?.changes === true ? facts.constructs.found[0] : undefined;
  if (construct !== undefined)
    return `its shell reads line ${script.lines.lineAt(construct.place.row, construct.place.column) ?? '?'} (${construct.id}) otherwise than bash, which changes how it ends (--check's bashism-under-sh): run it with bash or write the POSIX form, then --inject`;
  const left = [...quitsOf(container).map((quit) => quit.line), ...handQuits(container).map((quit) => quit.line)];
  if (left.length > 0) return `a quit on line ${left[0]} stays in its script (one it cannot take out safely): take it out by hand`;
  const { outcome } = facts;
  const unknown = outcome.unknown.failure ?? outcome.unknown.success;
  const lost = [...outcome.success, ...outcome.failure].find((path) => path.unknown !== undefined)?.unknown;
  if (unknown !== undefined || lost !== undefined)
    return `what its script ends with cannot be known (${unknown ?? lost}), so the wrapper could report the wrong status: take the quit out by hand`;
  const line = (path: (typeof outcome.success)[number]): string =>
    path.statusAt === undefined
      ? ''
      : ` (line ${script.lines.lineAt(path.statusAt.row, path.statusAt.column) ?? '?'}: ${path.endText ?? 'its last command'})`;
  const failed = lostBefore ? undefined : outcome.failure.find((path) => path.failed && path.status === 0);
  if (failed !== undefined)
    return `without its quit the script still ends with 0 after the job failed${line(failed)}, and the wrapper would report a success: keep the job's status by hand`;
  // Also where the shell ends before the job runs (a construct its sh lacks, an unset variable under set -u).
  const succeeded = outcome.success.find((path) => path.status !== 0);
  if (succeeded !== undefined)
    return `without its quit the script ends with ${succeeded.status ?? 'an unknown status'} ${succeeded.worked ? 'after the job succeeded' : 'before the job runs'}${line(succeeded)}`;
  return undefined;
}

/**
 * Why a job container's script, quitting nothing itself, cannot have the wrapper in front: known to its end, it
 * still ends with 0 after the job failed (a pipeline without pipefail, an echo after the job), which the wrapper
 * would report as a success.
 */
export function statusLost(container: ContainerFacts): string | undefined {
  const script = container.script;
  const failed = statusLostToWrapper(container);
  if (script === undefined || failed === undefined) return undefined;
  const at = failed.statusAt === undefined ? undefined : script.lines.lineAt(failed.statusAt.row, failed.statusAt.column);
  return (
    `container ${container.name}'s script ends with 0 after the job failed${at === undefined ? '' : ` (line ${at}: ${failed.endText ?? 'its last command'})`}, ` +
    "which the wrapper would report as a success: keep the job's status by hand (set -o pipefail before a pipeline, rc=$? right after the job and exit $rc)"
  );
}

/** A block scalar read line by line: where each of its rows starts in the file, their text, its value as literal lines. */
interface Block {
  /** Where the `>` of a folded block is, to become `|`; undefined: a literal block. */
  readonly indicator?: number;
  readonly indent: number;
  readonly rows: readonly { readonly start: number; readonly text: string }[];
  readonly value: string;
}

/** The block scalar NODE (a folded one as the literal block of its lines); undefined: a flow scalar, or one read otherwise. */
function blockOf(source: Source, node: Scalar, literal: boolean): Block | undefined {
  if (node.type !== 'BLOCK_LITERAL' && node.type !== 'BLOCK_FOLDED') return undefined;
  const [start = 0, end = start] = node.range ?? [];
  const text = source.text;
  const headerEnd = text.indexOf('\n', start);
  if (headerEnd < 0 || headerEnd >= end) return undefined;
  const header = text.slice(start, headerEnd);
  const raw = text.slice(headerEnd + 1, end).split('\n');
  const explicit = /^[|>][+-]?(\d)|^[|>]\d/.exec(header);
  const firstText = raw.find((line) => line.replace(/\r$/, '').trim() !== '') ?? '';
  const indent = explicit === null ? firstText.length - firstText.trimStart().length : Number(explicit[1] ?? header[1]);
  const rows: { start: number; text: string }[] = [];
  let at = headerEnd + 1;
  for (const line of raw) {
    rows.push({ start: at, text: line.replace(/\r$/, '').slice(indent) });
    at += line.length + 1;
  }
  if (node.type === 'BLOCK_LITERAL' || !literal) {
    // The value as YAML gives it, whose rows must be the file's: anything else (tabs, odd indentation) is not cut.
    const value = String(node.value);
    const lines = value.split('\n');
    if (lines.some((line, row) => row < lines.length - 1 && rows[row]?.text !== line)) return undefined;
    return { indent, rows, value };
  }
  const value = `${rows
    .map((row) => row.text)
    .join('\n')
    .replace(/\n+$/, '')}\n`;
  return { indicator: start + header.indexOf('>'), indent, rows, value };
}

/** The offset in the file of INDEX of a block's value: its row's start, past the indentation, and its column. */
function fileOffset(block: Block, value: string, index: number, wholeLine: boolean): number {
  const row = value.slice(0, index).split('\n').length - 1;
  const column = index - (value.lastIndexOf('\n', index - 1) + 1);
  const start = block.rows[row]?.start ?? block.rows.at(-1)?.start ?? 0;
  return wholeLine && column === 0 ? start : start + block.indent + column;
}

/** The edits of a block scalar for CUTS of its value (whole rows cut from the line's start), and `>` made `|`. */
function blockEdits(block: Block, cuts: readonly Cut[]): ScalarEdit[] {
  const edits: ScalarEdit[] = block.indicator === undefined ? [] : [{ start: block.indicator, end: block.indicator + 1, text: '|' }];
  for (const cut of cuts) {
    const whole =
      cut.text === '' &&
      (cut.start === 0 || block.value[cut.start - 1] === '\n') &&
      (cut.end >= block.value.length || block.value[cut.end - 1] === '\n');
    const start = fileOffset(block, block.value, cut.start, whole);
    const end =
      cut.end >= block.value.length && whole ? (block.rows.at(-1)?.start ?? start) : fileOffset(block, block.value, cut.end, whole);
    edits.push({ start, end, text: cut.text });
  }
  return edits;
}

/** The edit of a flow scalar holding SCRIPT: cut in place where its text is its value, else written out as JSON. */
function flowEdits(source: Source, node: Scalar, cuts: readonly Cut[], script: string): ScalarEdit[] {
  const [start = 0, end = start] = node.range ?? [];
  const raw = source.text.slice(start, end);
  const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
  const inner = quoted ? raw.slice(1, -1) : raw;
  if (inner === String(node.value)) {
    const base = start + (quoted ? 1 : 0);
    return cuts.map((cut) => ({ start: base + cut.start, end: base + cut.end, text: cut.text }));
  }
  return [{ start, end, text: JSON.stringify(script) }];
}

/** The words a shell reads as a list's operators: in exec args they are only arguments. */
const OPERATORS = new Set(['&&', '||', ';', '&']);

/**
 * A quit written as more exec items after a program that no shell runs (`["/app/migrate", "&&", "curl", "-X",
 * "POST", ".../quitquitquit"]`): the program gets them as its arguments and the quit never runs. The items from the
 * operator on go, where they are the list's last and one request a sidecar's quit would be; the edits, or none.
 */
export function execArgsQuit(source: Source, container: ContainerFacts): ScalarEdit[] {
  if (container.script !== undefined) return [];
  const { words, nodes } = argvOf(container.node);
  const at = words.findIndex((word, index) => index > 0 && OPERATORS.has(word));
  if (at < 0 || requestOf(words.slice(at + 1), { row: 0, column: 0 }, new Map()) === undefined) return [];
  const quit = new RegExp(`(${QUIT_WORDS.join('|')})`, 'i');
  if (!words.slice(at + 1).some((word) => quit.test(word))) return [];
  const first = nodes[at];
  const last = nodes.at(-1);
  const before = nodes[at - 1];
  const seq = [container.node.get('command', true), container.node.get('args', true)].find(
    (list) => isSeq(list) && items(list).includes(first as never),
  );
  if (first === undefined || last === undefined || before === undefined || !isSeq(seq) || !items(seq).includes(last as never)) return [];
  const end = last.range?.[1] ?? 0;
  if (seq.flow === true) {
    // From the end of the item before (in this list, or the list's opening bracket) to the end of the last.
    const from = items(seq).includes(before as never) ? (before.range?.[1] ?? 0) : source.text.indexOf('[', seq.range?.[0] ?? 0) + 1;
    return [{ start: from, end, text: '' }];
  }
  // Block items: their whole lines.
  const start = source.text.lastIndexOf('\n', (first.range?.[0] ?? 0) - 1) + 1;
  const lineEnd = source.text.indexOf('\n', end);
  return [{ start, end: lineEnd < 0 ? source.text.length : lineEnd + 1, text: '' }];
}
