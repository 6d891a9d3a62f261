// The policy reads a pod's injection markers as --inject does, from the one reading of each in the kinds table
// (src/config/kinds.ts): a value in capitals, padded with white space, empty or blank, and a label beside an
// annotation, each under a namespace that injects the kind and one that does not (test/support/policy-cases.ts,
// readingCases; the same cases run by Kubernetes' own admission code in test/engines/policy.test.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { agreement } from '../../../support/policy-agreement.ts';
import { readingCases } from '../../../support/policy-cases.ts';

await loadShellParser();
const SETTINGS = { image: 'registry.example/istio-job-run:9.9.9', version: 'v1', native: false, imageVolume: false } as const;

test('the policy reads each spelling of an injection marker as --inject does', () => {
  const disagree: string[] = [];
  let rewritten = 0;
  for (const { name, yaml, namespace, injected } of readingCases()) {
    for (const verdict of agreement(name, yaml, SETTINGS, namespace, injected)) {
      if (verdict.inject === 'rewritten') rewritten++;
      // Rewritten by both to the same object, or by neither.
      if ((verdict.inject === 'rewritten') !== (verdict.policy === 'patched') || verdict.differs !== undefined)
        disagree.push(`${name}: --inject ${verdict.inject}, the policy ${verdict.policy} ${verdict.why ?? verdict.differs ?? ''}`);
    }
  }
  assert.deepEqual(disagree, []);
  assert.ok(rewritten > 10, `the cases rewrite pods (${rewritten})`);
});
