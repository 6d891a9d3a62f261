// The fault matrix through simulated pods (test/support/kubelet.ts): every combination that matters of
// sidecar behaviour, job behaviour, quit policy and restartPolicy, and pod termination, each checked
// against the invariants; then a short soak of randomised pods. `npm run soak` runs the long soak, and
// `npm run reliability` writes docs/RELIABILITY.md from the same runs.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { podTrace } from '../support/kubelet.ts';
import { podsUnavailable, simulatePod, simulatePods } from '../support/pods.ts';
import { matrix, podSpec, randomScenario, scenarioId, seeded, violations, type Scenario } from '../support/scenarios.ts';

const skip = podsUnavailable();
const PARALLEL = 2;
const SOAK_PODS = Number(process.env['ISTIO_JOB_RUN_TEST_SOAK'] ?? 24);

async function check(scenario: Scenario): Promise<string[]> {
  const result = await simulatePod(podSpec(scenario));
  const found = violations(scenario, result).map((violation) => `${scenarioId(scenario)}: ${violation}`);
  return found.length === 0 ? [] : [...found, `${scenarioId(scenario)}: ${podTrace(result)}`];
}

describe('the fault matrix', { skip }, () => {
  const scenarios = matrix();
  test(`${scenarios.length} scenarios keep every invariant`, { timeout: 900_000 }, async () => {
    const found: string[] = [];
    await simulatePods(scenarios, PARALLEL, async (scenario) => {
      found.push(...(await check(scenario)));
    });
    assert.deepEqual(found, []);
  });

  test(`a soak of ${SOAK_PODS} randomised pods: no hang, no wrong exit code`, { timeout: 900_000 }, async () => {
    const seed = Date.now() % 1_000_000;
    const random = seeded(seed);
    const pods = Array.from({ length: SOAK_PODS }, () => randomScenario(random));
    const found: string[] = [];
    await simulatePods(pods, PARALLEL, async (scenario) => {
      found.push(...(await check(scenario)).map((v) => `${v} (ready after ${scenario.readyAfterMs ?? 'default'}ms)`));
    });
    assert.deepEqual(found, [], `seed ${seed}`);
  });
});
