// What the files of --check's rules share: manifests built from a few lines (a Job around a pod spec, a container,
// the Istio injection annotation), the shape of a case, which theme holds each rule, and the test of a theme's
// cases: each case's finding (or none) and its message, and every rule of the theme tripped and left clean.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { type Finding, messageOf, WRAP } from '../../../../src/manifest/check/finding.ts';
import { type CheckSettings, check, type Level, RULE_SUMMARIES, type RuleId } from '../../../../src/manifest/check/rules.ts';
import { inject } from '../../../../src/manifest/inject/inject.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { source } from '../../../support/manifest.ts';

/** TEXT with each non-empty line indented BY spaces. */
export const indent = (text: string, by: number): string =>
  text
    .split('\n')
    .map((line) => (line === '' ? line : ' '.repeat(by) + line))
    .join('\n');

/** A Job with a pod spec (written at column 0, re-indented here), pod annotations and Job-level extras. */
export function job(
  podSpec: string,
  options: { podMeta?: string; jobMeta?: string; jobSpec?: string; restartPolicy?: string } = {},
): string {
  if (options.restartPolicy !== undefined) podSpec = podSpec.replace('restartPolicy: Never', `restartPolicy: ${options.restartPolicy}`);
  return [
    'apiVersion: batch/v1',
    'kind: Job',
    'metadata:',
    '  name: task',
    ...(options.jobMeta === undefined ? [] : [indent(options.jobMeta, 2)]),
    'spec:',
    ...(options.jobSpec === undefined ? [] : [indent(options.jobSpec, 2)]),
    '  template:',
    ...(options.podMeta === undefined ? [] : ['    metadata:', indent(options.podMeta, 6)]),
    '    spec:',
    indent(podSpec, 6),
    '',
  ].join('\n');
}

export const WRAPPED = 'command: ["/opt/tools/istio-job-run", "--"]\nargs: ["./task.sh"]';
export const container = (body: string, name = 'job'): string => `- name: ${name}\n  image: example\n${indent(body, 2)}`;
export const pod = (body: string, restartPolicy = 'Never'): string => `restartPolicy: ${restartPolicy}\ncontainers:\n${container(body)}`;
export const INJECTED = 'annotations:\n  sidecar.istio.io/inject: "true"';
/** A script's first words: a trap that sends the quit to URL on exit. */
export const TRAP = (url: string): string => `trap 'rc=$?; curl -XPOST ${url}; exit $rc' EXIT;`;

/** A manifest and the finding of one rule expected from it. */
export interface Case {
  readonly name: string;
  readonly yaml: string;
  readonly rule: RuleId;
  readonly settings?: CheckSettings;
  /** The finding expected, or none: its level, and what the line it names (the first holding it) holds. */
  readonly expect?: { readonly at: string; readonly level: Level };
}

/** The findings of RULE in a manifest. */
const findingsOf = (yaml: string, rule: RuleId, settings?: CheckSettings): Finding[] =>
  check(source(yaml), settings).filter((finding) => finding.rule === rule);

/** The tests of a theme's cases: each case's finding or none, and each of the theme's rules tripped and left clean. */
export function checkCases(theme: string, cases: readonly Case[]): void {
  // The theme's rules: those its cases name (a rule's cases are in one theme's file; check.test.ts holds them to it).
  const rules: readonly RuleId[] = [...new Set(cases.map((entry) => entry.rule))];
  before(loadShellParser);
  describe(`--check rules of the ${theme} theme, each from manifests that trip it and manifests that must not`, () => {
    for (const entry of cases) {
      test(`${entry.rule}: ${entry.name}: ${entry.expect === undefined ? 'not reported' : `${entry.expect.level} at ${entry.expect.at}`}`, () => {
        const found = findingsOf(entry.yaml, entry.rule, entry.settings);
        if (entry.expect === undefined) assert.deepEqual(found, []);
        else {
          const { at, level } = entry.expect;
          const line = entry.yaml.split('\n').findIndex((text) => text.includes(at)) + 1;
          assert.ok(line > 0, `${at} is in the manifest`);
          assert.deepEqual(
            found.map((finding) => ({ line: finding.line, level: finding.level })),
            [{ line, level }],
            entry.yaml,
          );
        }
        for (const finding of found) {
          const message = messageOf(finding);
          assert.ok(message.length > 40, 'the message says what to do instead');
          // The one message that says what a field needs rather than what to do: JSON has no `instead` for it.
          if (!/needs restartPolicy: Never/.test(finding.problem)) assert.ok(finding.instead, `what to do instead in: ${message}`);
          // Advice to run --inject is the row's: exactly the rules whose remedy is the wrapper.
          assert.equal(finding.instead?.includes(WRAP) === true, RULE_SUMMARIES[entry.rule].advises, message);
          assert.equal(finding.advisesInject, RULE_SUMMARIES[entry.rule].advises);
        }
      });
    }

    test(`every rule of the ${theme} theme is tripped by a case, and has a case that must not trip it`, () => {
      for (const rule of rules) {
        assert.ok(
          cases.some((entry) => entry.rule === rule && entry.expect !== undefined),
          `${rule} is tripped by a case`,
        );
        assert.ok(
          cases.some((entry) => entry.rule === rule && entry.expect === undefined),
          `${rule} has a clean case`,
        );
      }
    });

    test(`each rule of the ${theme} theme whose row has --inject fix its error (setting, script) has a case --inject rewrites`, () => {
      const unfixed: string[] = [];
      for (const rule of rules) {
        const action = RULE_SUMMARIES[rule].inject;
        if (action !== 'setting' && action !== 'script') continue;
        const tripping = cases.filter((entry) => entry.rule === rule && entry.expect !== undefined);
        const verdicts = tripping.map((entry) => {
          const result = inject(source(entry.yaml), { image: 'istio-job-run', native: false, ...entry.settings });
          return result.kind === 'refused' ? result.problems.join('; ') : result.rewritten.length > 0 ? 'rewritten' : 'left as it is';
        });
        if (!verdicts.includes('rewritten')) unfixed.push(`${rule} (${action}): ${verdicts.join(' | ')}`);
      }
      assert.deepEqual(unfixed, [], 'rules of which no case that trips them is rewritten by --inject');
    });
  });
}
