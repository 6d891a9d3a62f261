// The launcher's own lines follow --log-format: text with the wrapper's prefix, or JSON records; as the
// wrapper says it, and before it can, as the flag or its variable asks.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EXIT_WRAPPER_FAILED } from '../../../src/command/exit-code.ts';
import { cleanEnv, start } from '../../support/process.ts';
import { buildLauncher, launch } from './support.ts';

const launcher = buildLauncher();

test('json: each of its lines is a record with time, level and msg', async () => {
  const result = await launch(launcher, ['json', 'die-after'], ['/bin/sh', '-c', 'exit 2']).finished;
  assert.equal(result.code, 2, result.stderr);
  const ours = result.stderr.split('\n').filter((line) => !line.startsWith('fake: ') && line !== '');
  assert.equal(ours.length, 1, result.stderr);
  const record = JSON.parse(ours[0] ?? '') as Record<string, unknown>;
  assert.deepEqual(Object.keys(record), ['time', 'level', 'msg']);
  assert.match(String(record.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.ok(Math.abs(Date.parse(String(record.time)) - Date.now()) < 60_000, `${record.time} is now`);
  assert.equal(record.level, 'error');
  assert.match(String(record.msg), /^the wrapper died of signal 9 \(Killed\) before it knew the sidecars/);
});

test('text: the prefix, no out-of-memory blame for a kill the kernel’s counters do not show', async () => {
  const result = await launch(launcher, ['die-after'], ['/bin/sh', '-c', 'exit 2']).finished;
  assert.match(result.stderr, /^istio-job-run: the wrapper died of signal 9 \(Killed\)/m);
  assert.doesNotMatch(result.stderr, /out-of-memory/);
});

for (const [how, args, env] of [
  ['--log-format json', ['--log-format', 'json'], {}],
  ['--log-format=json', ['--log-format=json'], {}],
  ['ISTIO_JOB_RUN_LOG_FORMAT=json', [], { ISTIO_JOB_RUN_LOG_FORMAT: 'json' }],
] as const) {
  test(`${how}: a line said before the wrapper could (a hard limit below its floor) is JSON too`, async () => {
    const running = start('/bin/sh', ['-c', 'ulimit -s 64 && exec "$@"', 'sh', launcher, ...args, 'run', '--', 'true'], {
      env: cleanEnv(env),
    });
    running.process.stdin?.end();
    const result = await running.finished;
    assert.equal(result.code, EXIT_WRAPPER_FAILED);
    assert.match(JSON.parse(result.stderr.trim()).msg, /^the stack limit \(RLIMIT_STACK\) is 64 KiB/);
  });
}
