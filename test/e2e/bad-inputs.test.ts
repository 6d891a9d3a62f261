// Bad input in a pod: a clear message naming it, a documented exit code, and the sidecar still told to
// quit, so the pod completes instead of hanging on a typo.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { badInputPod, badInputs } from '../support/bad-inputs.ts';
import { podsUnavailable, simulatePod, simulatePods } from '../support/pods.ts';

describe('bad input in a pod', { skip: podsUnavailable() }, () => {
  const inputs = badInputs();
  test(`${inputs.length} bad inputs: message, exit code, and the pod completes`, { timeout: 600_000 }, async () => {
    const found: string[] = [];
    await simulatePods(inputs, 2, async (input) => {
      const result = await simulatePod(badInputPod(input));
      const code = result.job.runs.at(-1)?.code;
      const quits = result.sidecar.events.filter((e) => e.path === '/quitquitquit' && e.status === 200).length;
      if (code !== input.code) found.push(`${input.name}: exit ${code}, expected ${input.code}`);
      if (!input.message.test(result.job.stderr)) found.push(`${input.name}: stderr lacks ${input.message}: ${JSON.stringify(result.job.stderr.slice(0, 300))}`);
      if (quits !== 1) found.push(`${input.name}: ${quits} quits acknowledged, expected 1`);
      if (result.phase === 'Running') found.push(`${input.name}: the pod hangs`);
    });
    assert.deepEqual(found, []);
  });
});
