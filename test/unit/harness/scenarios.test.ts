// The soak's randomised pods may start the job before the sidecar's stand-in listens. The stand-in is a Node
// process that a loaded machine can keep from listening for seconds, where a real pilot-agent binds in
// milliseconds. So a pod may start that way only where the wrapper waits for the stand-in at least as long as
// kubelet waits for it to listen; otherwise the pod tests the machine's load, not the wrapper.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseInvocation } from '../../../src/config/parse.ts';
import { LISTEN_WAIT_MS } from '../../support/kubelet.ts';
import { podSpec, randomScenario, scenarioId, seeded } from '../../support/scenarios.ts';

test('a job starts before the stand-in listens only where the wrapper waits for it long enough', () => {
  const random = seeded(1);
  let randomised = 0;
  for (let i = 0; i < 2_000; i++) {
    const scenario = randomScenario(random);
    if (scenario.sidecarDelayMs === undefined && scenario.jobDelayMs === undefined) continue;
    randomised++;
    // The pod's own command line, read as the wrapper reads it.
    const invocation = parseInvocation(podSpec(scenario).job.argv.slice(1), {});
    assert.equal(invocation.kind, 'run', scenarioId(scenario));
    if (invocation.kind !== 'run') continue;
    // Without waiting, the first request the stand-in must answer is the quit.
    const { wait, readyTimeout, quitTimeout } = invocation.options;
    const waitMs = wait ? readyTimeout : quitTimeout;
    assert.ok(
      waitMs >= LISTEN_WAIT_MS,
      `${scenarioId(scenario)}: the wrapper waits ${waitMs}ms for the stand-in, kubelet up to ${LISTEN_WAIT_MS}ms`,
    );
  }
  assert.ok(randomised > 500, `only ${randomised} of 2000 pods had their start order randomised`);
});
