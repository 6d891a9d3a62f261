// Findings a team has accepted, left out of --check's output and exit code: by rule everywhere (--ignore RULE,
// ISTIO_JOB_RUN_IGNORE), by rule for one object (the istio-job-run.io/ignore annotation on it or its pod
// template), or one finding (a `# istio-job-run ignore=RULE` comment on its line or the line above, a YAML
// comment or one in the script).

import type { YAMLMap } from 'yaml';
import { PROGRAM } from '../../bundle/self.ts';
import { IGNORE_FLAG, IGNORE_VARIABLE } from '../../config/tool-flags.ts';
import { type Finding, RULE_SUMMARIES } from '../check/rules.ts';
import { getIn, isMap, items, type Source, text } from '../yaml/source.ts';
import { workloads } from '../yaml/workloads.ts';

export const IGNORE_ANNOTATION = 'istio-job-run.io/ignore';
export const IGNORE_COMMENT = `# ${PROGRAM} ignore=RULE[,RULE...]`;
const COMMENT = new RegExp(`#[ \\t]*${PROGRAM}[ \\t]+ignore=([^\\s#]*)`, 'g');

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
  for (const match of source.text.matchAll(COMMENT)) {
    const at = line(match.index);
    const listed = ruleList(match[1] ?? '', `${source.name}:${at}: # ${PROGRAM} ignore=`);
    warnings.push(...listed.warnings);
    comment.push({ from: at, to: at + 1, rules: listed.rules });
  }
  return { annotation, comment };
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
