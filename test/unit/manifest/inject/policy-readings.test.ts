// The policy reads a pod's injection markers as --inject does, from the one reading of each in the kinds table
// (src/config/kinds.ts): a value in capitals, padded with white space, empty or blank, and a label beside an
// annotation, each under a namespace that injects the kind and one that does not (test/support/policy-cases.ts,
// readingCases); and a declared proxy's flags written twice or spelled otherwise (flagCases). The same cases run
// by Kubernetes' own admission code in test/engines/policy.test.ts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { agreement } from '../../../support/policy-agreement.ts';
import { type Case, flagCases, readingCases } from '../../../support/policy-cases.ts';

await loadShellParser();
const SETTINGS = { image: 'registry.example/istio-job-run:9.9.9', version: 'v1', native: false, imageVolume: false } as const;

/** The cases where the policy and --inject disagree: one rewrites and the other does not, or both to other objects. */
function disagreements(cases: readonly Case[]): { disagree: string[]; rewritten: number } {
  const disagree: string[] = [];
  let rewritten = 0;
  for (const { name, yaml, namespace, injected } of cases) {
    for (const verdict of agreement(name, yaml, SETTINGS, namespace, injected)) {
      if (verdict.inject === 'rewritten') rewritten++;
      if ((verdict.inject === 'rewritten') !== (verdict.policy === 'patched') || verdict.differs !== undefined)
        disagree.push(`${name}: --inject ${verdict.inject}, the policy ${verdict.policy} ${verdict.why ?? verdict.differs ?? ''}`);
    }
  }
  return { disagree, rewritten };
}

test('the policy reads each spelling of an injection marker as --inject does', () => {
  const { disagree, rewritten } = disagreements(readingCases());
  assert.deepEqual(disagree, []);
  assert.ok(rewritten > 10, `the cases rewrite pods (${rewritten})`);
});

test("the policy reads a declared proxy's flags as --inject does: the last of a flag's words decides", () => {
  const { disagree, rewritten } = disagreements(flagCases());
  assert.deepEqual(disagree, []);
  assert.ok(rewritten > 4, `the cases rewrite pods (${rewritten})`);
});
