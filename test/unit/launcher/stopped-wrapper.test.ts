// A wrapper stopped by someone else (kill -STOP -1 from the job, say) is continued: the job still ends.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildLauncher, fakePid, launch } from './support.ts';

const launcher = buildLauncher();

test('a stopped wrapper is continued, and says the exit code as before', async () => {
  const running = launch(launcher, ['run'], ['/bin/sh', '-c', 'echo ready; read line; exit 5'], { timeoutMs: 5_000 });
  const pid = await fakePid(running);
  await running.line(/^ready$/, 'stdout');
  process.kill(pid, 'SIGSTOP');
  running.process.stdin?.end('\n');
  const result = await running.finished;
  assert.equal(result.code, 5, result.stderr);
  assert.match(result.stderr, /fake: outcome \{"kind":"exited","code":5\}/);
});
