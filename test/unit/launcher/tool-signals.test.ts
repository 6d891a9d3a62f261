// A manifest tool (the wrapper said `tool`) is ended by TERM, INT and HUP at once, even while it is busy with
// synchronous work that reads no line: the launcher passes the signal on as a signal and exits with 128+N,
// without the lines of a wrapper that died. Other signals are not relayed to it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildLauncher, launch } from './support.ts';

const launcher = buildLauncher();

for (const [signal, code] of [
  ['SIGTERM', 143],
  ['SIGINT', 130],
  ['SIGHUP', 129],
] as const) {
  test(`a busy tool, ${signal}: ended at once, exit ${code}, nothing said`, async () => {
    const running = launch(launcher, ['tool'], ['/bin/true']);
    await running.line(/^fake: busy$/, 'stderr');
    running.process.kill('SIGUSR1'); // not an end: the tool stays busy
    running.process.kill(signal);
    const result = await running.finished;
    assert.equal(result.code, code, result.stderr);
    assert.doesNotMatch(result.stderr, /istio-job-run: /);
  });
}
