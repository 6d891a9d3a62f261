// The adversarial suite, short size (the long one is `npm run reliability`): signals at every moment of
// start-up, floods across the exit, real-time deaths and queues, stalled and closed stdio, hostile environments,
// a failed re-install, a black-holed DNS name, terminals, job control and group signals, hostile limits, and the
// Node half ignored, stopped, killed or lied to, through the portable bundle.
// Cases and their judgement live in test/support/hostile/; each test reports what every try sent
// and what came back.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hostileUnavailable } from '../support/hostile/tools.ts';
import { HOSTILE_CASES } from '../support/hostile/index.ts';
import { runHostile } from '../support/hostile-run.ts';

describe('hostile', { skip: hostileUnavailable() }, () => {
  for (const hostile of HOSTILE_CASES) {
    test(`${hostile.name}: ${hostile.about}`, async () => {
      const tries = await runHostile('short', [hostile.name], { timeoutMs: 60_000 + hostile.tries.short * 25_000 });
      assert.equal(tries.length, hostile.tries.short, 'every try reported');
      const wrong = tries.filter((t) => !t.ok);
      assert.deepEqual(
        wrong.map((t) => `${t.sent}: ${t.got}`),
        [],
        `${wrong.length} of ${tries.length} tries not as expected`,
      );
    });
  }
});
