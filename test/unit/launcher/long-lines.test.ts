// A line from the wrapper longer than the protocol's longest (MAX_LINE_BYTES) is discarded whole, through its
// newline, and said in one line: what follows a cut is never read as a line of its own.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_LINE_BYTES } from '../../../src/launcher/protocol.ts';
import { buildLauncher, launch } from './support.ts';

const launcher = buildLauncher();

test('a line past the limit whose tail reads "exit 0": discarded, the command runs and its code is the exit code', async () => {
  const result = await launch(launcher, ['long-line', 'run'], ['/bin/sh', '-c', 'echo ran; exit 3']).finished;
  assert.equal(result.code, 3, result.stderr);
  assert.equal(result.stdout, 'ran\n');
  const ours = result.stderr.split('\n').filter((line) => line.startsWith('istio-job-run:'));
  assert.deepEqual(ours, [
    `istio-job-run: warning: a line from the wrapper was longer than ${MAX_LINE_BYTES} bytes (the protocol's longest): discarded`,
  ]);
});
