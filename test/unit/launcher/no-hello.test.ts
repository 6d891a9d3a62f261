// A wrapper that never says hello (stuck at start-up) is stopped after the start-up timeout: one line, exit 125.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EXIT_WRAPPER_FAILED } from '../../../src/command/exit-code.ts';
import { buildLauncher, HELLO_TIMEOUT_MS, launch } from './support.ts';

const launcher = buildLauncher();

test('no hello: stopped after the timeout, exit 125, and the line says so; the command never ran', async () => {
  const result = await launch(launcher, ['silent'], ['/bin/sh', '-c', 'echo ran']).finished;
  assert.equal(result.code, EXIT_WRAPPER_FAILED, result.stderr);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, new RegExp(`istio-job-run: the wrapper did not start within ${HELLO_TIMEOUT_MS} ms`));
  assert.match(result.stderr, /istio-job-run: the wrapper died of signal 9 \(Killed\) before it knew the sidecars/);
});
