// Findings a team has accepted, left out of --check's output and exit code: by rule everywhere (--ignore RULE,
// ISTIO_JOB_RUN_IGNORE), by rule for one object (the istio-job-run.io/ignore annotation on it or its pod
// template), or one finding (a `# istio-job-run ignore=RULE` comment on its line or the line above, a YAML
// comment or a comment of a container's script: never text inside a string or a value).

import type { Node, Pair, Scalar, YAMLMap } from 'yaml';
import { PROGRAM } from '../../bundle/self.ts';
import { IGNORE_FLAG, IGNORE_VARIABLE } from '../../config/tool-flags.ts';
import type { Finding } from '../check/finding.ts';
import { RULE_SUMMARIES } from '../check/rules.ts';
import { podScripts } from '../pod/containers.ts';
import { scriptComments } from '../script/shell.ts';
import { getIn, isMap, isScalar, isSeq, items, type Source, text } from '../yaml/source.ts';
import { workloads } from '../yaml/workloads.ts';

export const IGNORE_ANNOTATION = 'istio-job-run.io/ignore';
export const IGNORE_COMMENT = `# ${PROGRAM} ignore=RULE[,RULE...]`;
const COMMENT = new RegExp(`#[ \\t]*${PROGRAM}[ \\t]+ignore=([^\\s#]*)`, 'g');
const ONE_COMMENT = new RegExp(COMMENT.source);

/** What suppressed a finding, as the summary line names it. */
const BY = { flag: `${IGNORE_FLAG} or ${IGNORE_VARIABLE}`, annotation: IGNORE_ANNOTATION, comment: 'comment' } as const;
type By = keyof typeof BY;

const isRule = (id: string): boolean => Object.hasOwn(RULE_SUMMARIES, id);

/** The ids of a comma-separated list, each once, and a warning for each that is no rule. */
export function ruleList(raw: string, where: string): { readonly rules: readonly string[]; readonly warnings: readonly string[] } {
  const ids = [...new Set(raw.split(',').map((id) => id.trim()))].filter((id) => id !== '');
  return {
    rules: ids.filter(isRule),
    warnings: ids
      .filter((id) => !isRule(id))
      .map((id) => `${where}: ${JSON.stringify(id)} is not a rule of --check, ignored (the rules: ${PROGRAM} --check --help)`),
  };
}

/** A part of the file (lines FROM to TO) and the rules suppressed in it. */
interface Scope {
  readonly from: number;
  readonly to: number;
  readonly rules: readonly string[];
}

/** Every object of the file (a List's items too), with its pod template when it is a workload. */
function objects(source: Source): Map<YAMLMap, YAMLMap | undefined> {
  const found = new Map<YAMLMap, YAMLMap | undefined>();
  for (const document of source.documents) {
    const top = document.contents;
    for (const node of [top, ...items(getIn(top, ['items']))]) if (isMap(node)) found.set(node, undefined);
  }
  for (const workload of workloads(source)) found.set(workload.object, workload.template);
  return found;
}

/** The annotations' scopes (each object's lines) and the comments' (their own line and the next). */
function scopes(source: Source, warnings: string[]): { readonly annotation: Scope[]; readonly comment: Scope[] } {
  const line = (offset: number): number => source.lines.linePos(offset).line;
  const annotation: Scope[] = [];
  // Only a file that writes the annotation's key, or escapes something in a quoted key, can have it.
  const annotated = source.text.includes(IGNORE_ANNOTATION) || source.text.includes('\\');
  for (const [object, template] of annotated ? objects(source) : []) {
    for (const owner of template === undefined ? [object] : [object, template]) {
      const node = getIn(owner, ['metadata', 'annotations', IGNORE_ANNOTATION]);
      const value = text(node);
      if (value === undefined) continue;
      const listed = ruleList(value, `${source.name}:${line(node?.range?.[0] ?? 0)}: ${IGNORE_ANNOTATION}`);
      warnings.push(...listed.warnings);
      const [start = 0, , end = 0] = object.range ?? [];
      annotation.push({ from: line(start), to: line(end), rules: listed.rules });
    }
  }
  const comment: Scope[] = [];
  for (const { at, rules } of comments(source)) {
    const listed = ruleList(rules, `${source.name}:${at}: # ${PROGRAM} ignore=`);
    warnings.push(...listed.warnings);
    comment.push({ from: at, to: at + 1, rules: listed.rules });
  }
  return { annotation, comment };
}

/**
 * The suppression comments of the file, by line, each with its list of rules. Only where the text has one is
 * anything more read: a YAML comment is one outside the text of every scalar, where YAML starts a comment (after a
 * space, or first on its line); one inside a scalar counts only when the scalar is a container's script and the
 * shell reads a comment there.
 */
function comments(source: Source): { readonly at: number; readonly rules: string }[] {
  const found = [...source.text.matchAll(COMMENT)];
  if (found.length === 0) return [];
  const line = (offset: number): number => source.lines.linePos(offset).line;
  const holders = scalarsHolding(
    source,
    found.map((match) => match.index),
  );
  const listed: { at: number; rules: string }[] = [];
  const inScalars = new Set<Scalar>();
  for (const match of found) {
    const holder = holders.get(match.index);
    if (holder !== undefined) inScalars.add(holder);
    else if (startsComment(source.text, match.index)) listed.push({ at: line(match.index), rules: match[1] ?? '' });
  }
  if (inScalars.size === 0) return listed;
  const read = new Set<Scalar>();
  for (const script of workloads(source).flatMap(podScripts)) {
    if (!inScalars.has(script.node) || read.has(script.node)) continue;
    read.add(script.node);
    for (const { text: said, place } of scriptComments(String(script.node.value))) {
      const rules = ONE_COMMENT.exec(said)?.[1];
      if (rules === undefined) continue;
      listed.push({ at: script.lines.lineAt(place.row, place.column) ?? line(script.node.range?.[0] ?? 0), rules });
    }
  }
  return listed.sort((a, b) => a.at - b.at);
}

/** YAML starts a comment at a `#` first on its line or after a space or a tab. */
function startsComment(text: string, at: number): boolean {
  const before = text.charCodeAt(at - 1);
  return at === 0 || before === 32 || before === 9 || before === 10 || before === 13;
}

/**
 * The scalar whose text holds each of OFFSETS (a key's too), if any: a block scalar's text starts on the line after
 * its header, whose comment is YAML's. Every node is visited once.
 */
function scalarsHolding(source: Source, offsets: readonly number[]): Map<number, Scalar> {
  const held = new Map<number, Scalar>();
  const stack: unknown[] = source.documents.map((document) => document.contents);
  while (stack.length > 0) {
    const node = stack.pop();
    if (isScalar(node)) {
      const [start = 0, end = 0] = node.range ?? [];
      const newline = node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED' ? source.text.indexOf('\n', start) : start - 1;
      const from = newline < 0 || newline >= end ? end : newline + 1;
      // The offsets are in ascending order: the first at or after FROM, found by halves.
      let low = 0;
      for (let high = offsets.length; low < high; ) {
        const middle = (low + high) >> 1;
        if ((offsets[middle] as number) < from) low = middle + 1;
        else high = middle;
      }
      for (let i = low; i < offsets.length && (offsets[i] as number) < end; i++) held.set(offsets[i] as number, node);
    } else if (isMap(node)) {
      for (const pair of node.items as Pair<Node, Node | null>[]) stack.push(pair.key, pair.value);
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push(item);
    }
  }
  return held;
}

/** How many findings were suppressed, by what. */
export type Suppressed = Record<By, number>;
export const noneSuppressed = (): Suppressed => ({ flag: 0, annotation: 0, comment: 0 });

/** The findings of a file that nothing suppresses; the count of the others is added to SUPPRESSED. */
export function unsuppressed(
  source: Source,
  findings: readonly Finding[],
  ignored: ReadonlySet<string>,
  suppressed: Suppressed,
  warnings: string[],
): Finding[] {
  const { annotation, comment } = scopes(source, warnings);
  // The rules suppressed on each line: one lookup a finding, however many objects carry the annotation.
  const byLine = (list: readonly Scope[]): Map<number, string[]> => {
    const lines = new Map<number, string[]>();
    for (const scope of list) {
      for (let line = scope.from; line <= scope.to; line++) {
        const rules = lines.get(line);
        if (rules === undefined) lines.set(line, [...scope.rules]);
        else rules.push(...scope.rules);
      }
    }
    return lines;
  };
  const annotated = byLine(annotation);
  const commented = byLine(comment);
  const covers = (lines: ReadonlyMap<number, readonly string[]>, finding: Finding): boolean =>
    lines.get(finding.line)?.includes(finding.rule) === true;
  return findings.filter((finding) => {
    const by: By | undefined = ignored.has(finding.rule)
      ? 'flag'
      : covers(annotated, finding)
        ? 'annotation'
        : covers(commented, finding)
          ? 'comment'
          : undefined;
    if (by !== undefined) suppressed[by]++;
    return by === undefined;
  });
}

/** The summary line, when any finding was suppressed. */
export function suppressedLine(suppressed: Suppressed): string | undefined {
  const total = Object.values(suppressed).reduce((sum, count) => sum + count, 0);
  if (total === 0) return undefined;
  const parts = (Object.keys(BY) as By[]).filter((by) => suppressed[by] > 0).map((by) => `${suppressed[by]} by ${BY[by]}`);
  return `--check: ${total} ${total === 1 ? 'finding' : 'findings'} suppressed (${parts.join(', ')})`;
}
