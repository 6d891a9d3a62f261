// --check as a whole: every rule's cases sit in one file of a theme (THEME.cases.ts, run by THEME.test.ts, which
// tests that its rules are tripped and left clean, and that --inject rewrites a case of each rule whose row has it
// fix the error),
// what each row says --inject does agrees with its advice, the project's own manifests (docker/k8s/) and the
// README's YAML check clean, and a parse error names the file and the line.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { check, RULE_SUMMARIES } from '../../../../src/manifest/check/rules.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { parseSource } from '../../../../src/manifest/yaml/source.ts';
import { source } from '../../../support/manifest.ts';
import { root } from '../../../support/process.ts';
import type { Case } from './cases.ts';
import { CASES as DIALECT } from './dialect.cases.ts';
import { CASES as POD } from './pod.cases.ts';
import { CASES as PROFILE } from './profile.cases.ts';
import { CASES as SCRIPT } from './script.cases.ts';
import { CASES as UNWRAPPED } from './unwrapped.cases.ts';

before(loadShellParser);

test("every rule's cases are in the file of exactly one theme", () => {
  const themes: Record<string, readonly Case[]> = { dialect: DIALECT, pod: POD, profile: PROFILE, script: SCRIPT, unwrapped: UNWRAPPED };
  const themesOf = (rule: string): string[] =>
    Object.entries(themes)
      .filter(([, cases]) => cases.some((entry) => entry.rule === rule))
      .map(([theme]) => theme);
  const wrong = Object.keys(RULE_SUMMARIES)
    .map((rule) => [rule, themesOf(rule)] as const)
    .filter(([, found]) => found.length !== 1)
    .map(([rule, found]) => `${rule}: ${found.length === 0 ? 'no theme has its cases' : found.join(' and ')}`);
  assert.deepEqual(wrong, []);
});

describe("what each rule's row says --inject does agrees with its advice", () => {
  const rows = Object.entries(RULE_SUMMARIES);
  test('no row advises --inject and has it refuse', () => {
    assert.deepEqual(
      rows.filter(([, row]) => row.advises && row.inject === 'refuse').map(([rule]) => rule),
      [],
    );
  });
  test('every row that advises --inject has it fix the error (a setting, or the script)', () => {
    assert.deepEqual(
      rows.filter(([, row]) => row.advises && row.inject !== 'setting' && row.inject !== 'script').map(([rule]) => rule),
      [],
    );
  });
  test('every row that has --inject refuse says why', () => {
    assert.deepEqual(
      rows.filter(([, row]) => row.inject === 'refuse' && !row.refuses).map(([rule]) => rule),
      [],
    );
  });
});

describe("the project's own YAML checks clean", () => {
  for (const file of readdirSync(join(root, 'docker', 'k8s'))) {
    test(`docker/k8s/${file}`, () => {
      assert.deepEqual(check(source(readFileSync(join(root, 'docker', 'k8s', file), 'utf8'), file)), []);
    });
  }
  test("the README's YAML blocks", () => {
    const blocks = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
    assert.ok(blocks.length >= 3);
    for (const block of blocks) assert.deepEqual(check(source(block, 'README.md')), [], block);
  });
});

describe('parse errors name the file and the line', () => {
  test('a tab where YAML wants spaces', () => {
    assert.deepEqual(parseSource('bad.yaml', 'a: 1\nb:\n\t- x\n'), parseSource('bad.yaml', 'a: 1\nb:\n\t- x\n'));
    const parsed = parseSource('bad.yaml', 'kind: Job\nmetadata:\n  name: [unclosed\n');
    assert.ok('error' in parsed);
    assert.match(parsed.error, /^bad\.yaml:\d+: not YAML: /);
  });
  test('a key written twice is no parse error: the last one counts, as kubectl reads it', () => {
    const parsed = source('kind: Job\nkind: Pod\n', 'twice.yaml');
    assert.equal(parsed.duplicates.length, 1);
    assert.equal(parsed.duplicates[0]?.key, 'kind');
  });
});
