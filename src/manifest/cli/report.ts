// --check's output: the findings as text lines, one JSON array or a SARIF 2.1.0 log (what code scanning in CI
// reads), and the failure threshold that turns the findings left into the exit code. The formats, the JSON fields
// and the levels are tables of src/config/tool-flags.ts, beside the flags that choose them.

import { PROGRAM } from '../../bundle/self.ts';
import { type Finding, insteadSaid, said } from '../check/finding.ts';
import { type Level, RULE_SUMMARIES, type RuleId } from '../check/rules.ts';
import { type JSON_FIELDS, LEVELS, type Threshold } from '../../config/tool-flags.ts';

const RANK: readonly string[] = Object.keys(LEVELS);

/** Whether a finding at LEVEL fails the check under THRESHOLD. */
export const fails = (level: Level, threshold: Threshold): boolean =>
  threshold !== 'none' && RANK.indexOf(level) <= RANK.indexOf(threshold);

/** A finding and the file it is in, as the output names it. */
export interface Located extends Finding {
  readonly file: string;
}

type JsonFinding = { readonly [field in keyof typeof JSON_FIELDS]?: string | number };

export const textLine = (finding: Located): string =>
  `${finding.file}:${finding.line}: ${finding.level}: ${finding.rule}: ${said(finding)}\n`;

export function toJson(findings: readonly Located[]): string {
  const rows = findings.map((finding): JsonFinding => {
    const fix = insteadSaid(finding);
    return {
      file: finding.file,
      line: finding.line,
      ...(finding.column === undefined ? {} : { column: finding.column }),
      level: finding.level,
      rule: finding.rule,
      message: said(finding),
      ...(fix === undefined ? {} : { instead: fix }),
      ...(finding.inject === undefined ? {} : { inject: finding.inject.will }),
    };
  });
  return `${JSON.stringify(rows, null, 2)}\n`;
}

/** Where docs/MANIFESTS.md says what a rule finds: the anchor its table row carries. */
export const ruleAnchor = (rule: string): string => `rule-${rule}`;
const DOCS_PAGE = 'docs/MANIFESTS.md';
const SARIF_LEVEL: Readonly<Record<Level, string>> = { error: 'error', warning: 'warning', info: 'note' };

/** A FILE as a URI reference: relative paths stay relative (to the directory it ran in), absolute ones are file: URIs. */
function fileUri(file: string): { uri: string; uriBaseId?: string } {
  const slashed = file.replaceAll('\\', '/');
  const encoded = slashed
    .split('/')
    .map((part) => encodeURIComponent(part))
    .join('/');
  if (slashed.startsWith('/')) return { uri: `file://${encoded}` };
  return { uri: encoded.replace(/^(\.\/)+/, ''), uriBaseId: 'SRCROOT' };
}

/** The SARIF 2.1.0 log: one run, every rule of --check, each finding with its file (findings of stdin have none). */
export function toSarif(findings: readonly Located[], version: string): string {
  const ids = Object.keys(RULE_SUMMARIES) as RuleId[];
  const rules = ids.map((id) => {
    const { level, finds } = RULE_SUMMARIES[id];
    const link = `${DOCS_PAGE}#${ruleAnchor(id)}`;
    return {
      id,
      shortDescription: { text: finds },
      fullDescription: { text: `${finds}. Level ${level}: ${LEVELS[level]}.` },
      help: { text: `${finds}. See ${link} in ${PROGRAM}'s source.`, markdown: `${finds}. See [${id}](${link}).` },
      defaultConfiguration: { level: SARIF_LEVEL[level] },
    };
  });
  const results = findings.map((finding) => ({
    ruleId: finding.rule,
    ruleIndex: ids.indexOf(finding.rule),
    level: SARIF_LEVEL[finding.level],
    message: { text: said(finding) },
    ...(finding.file === '<stdin>'
      ? {}
      : {
          locations: [
            {
              physicalLocation: {
                artifactLocation: fileUri(finding.file),
                region: { startLine: finding.line, ...(finding.column === undefined ? {} : { startColumn: finding.column }) },
              },
            },
          ],
        }),
  }));
  const log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: PROGRAM, version, rules } },
        originalUriBaseIds: { SRCROOT: { description: { text: `the directory ${PROGRAM} --check ran in` } } },
        results,
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
