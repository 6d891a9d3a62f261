// Bad input in a pod: a clear message naming it, a documented exit code, and the sidecar still told to
// quit, so the pod completes instead of hanging on a typo.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { badInputPod, badInputs, judgeBadInput } from '../support/bad-inputs.ts';
import { podTrace } from '../support/kubelet.ts';
import { podsUnavailable, simulatePod, simulatePods } from '../support/pods.ts';

describe('bad input in a pod', { skip: podsUnavailable() }, () => {
  const inputs = badInputs();
  test(`${inputs.length} bad inputs: message, exit code, and the pod completes`, { timeout: 600_000 }, async () => {
    const found: string[] = [];
    await simulatePods(inputs, 2, async (input) => {
      const result = await simulatePod(badInputPod(input));
      const outcome = judgeBadInput(input, result);
      found.push(...outcome.violations.map((violation) => `${input.name}: ${violation}`));
      if (outcome.violations.length > 0) found.push(`${input.name}: ${podTrace(result)}`);
    });
    assert.deepEqual(found, []);
  });
});
