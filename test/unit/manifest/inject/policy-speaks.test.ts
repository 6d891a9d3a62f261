// What a quit is and what a call to a sidecar's API is, the same for --admission-policy and --inject, from one table
// (test/support/policy-agreement.ts, SPEAKING): a Job that only calls its sidecar's API or only waits for it is
// wrapped by both (else nothing stops the sidecar and the pod never completes); a Job that quits its sidecar, in its
// command or through a URL in its env, is left alone by the policy and left to --inject, which judges the script
// (here the quit works, and --inject replaces it with the wrapper).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { agreement, SPEAKING, speakingJob } from '../../../support/policy-agreement.ts';

await loadShellParser();
const SETTINGS = { image: 'registry.example/istio-job-run:9.9.9', version: 'v1', native: false } as const;

describe('the policy and --inject on one table of what a container says to its sidecar', () => {
  for (const row of SPEAKING) {
    for (const imageVolume of [false, true]) {
      test(`${row.name}${imageVolume ? ' (--image-volume)' : ''}`, () => {
        const [verdict] = agreement(row.name, speakingJob(row), { ...SETTINGS, imageVolume });
        assert.ok(verdict !== undefined);
        if (row.says === 'quit') {
          // The quit works: --inject, which reads the script, replaces it with the wrapper; the policy cannot read
          // it, and leaves the pod as it works.
          assert.equal(verdict.inject, 'rewritten', `--inject: ${verdict.refusals?.join('; ') ?? ''}`);
          assert.equal(verdict.policy, 'skipped', `the policy wraps a script that quits its sidecar itself`);
          assert.equal(verdict.why, 'no-container-speaks-to-a-sidecar');
          return;
        }
        assert.equal(verdict.inject, 'rewritten', `--inject: ${verdict.refusals?.join('; ') ?? ''}`);
        assert.equal(verdict.policy, 'patched', `the policy leaves it alone (${verdict.why}): nothing stops the sidecar`);
        assert.equal(verdict.differs, undefined, `the policy's object differs from --inject's at ${verdict.differs}`);
        assert.equal(verdict.notIdempotent, undefined);
      });
    }
  }
});
