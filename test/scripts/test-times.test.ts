// npm run test:times: its timing shell records each npm script it runs and gives every `node --test` the
// per-file reporter; the report nests the scripts as they ran.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { nested, readFiles, readScripts, timingShell } from '../../scripts/test-times.ts';
import { cleanEnv, NODE, root, start } from '../support/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-test-times-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('the timing shell runs the command as sh would, records the script, and times each test file', async () => {
  const shell = timingShell(dir);
  const file = 'test/unit/http/listener.test.ts';
  const result = await start(shell, ['-c', `node --test ${file} && exit 3`], {
    cwd: root,
    env: cleanEnv({
      PATH: `${dirname(NODE)}:${process.env['PATH'] ?? ''}`,
      npm_lifecycle_event: 'probe',
      TEST_TIMES_DIR: dir,
      TEST_TIMES_REPORTER: join(root, 'scripts', 'test-times-reporter.ts'),
    }),
    timeoutMs: 30_000,
  }).finished;
  assert.equal(result.code, 3, result.stderr);
  assert.match(result.stdout, /ℹ pass \d+/, 'the usual spec output');
  const [script, ...more] = readScripts(dir);
  assert.deepEqual(more, []);
  assert.equal(script?.name, 'probe');
  assert.equal(script?.status, 3);
  assert.ok(script.endNs > script.startNs);
  const files = readFiles(dir);
  assert.deepEqual(
    files.map(({ file: name, script: by, passed }) => ({ name, by, passed })),
    [{ name: file, by: 'probe', passed: true }],
  );
  assert.ok((files[0]?.ms ?? 0) > 0);
});

test('scripts nest by when they ran; own time is less what ran inside', () => {
  const s = (name: string, start: number, end: number, status = 0) => ({
    name,
    dir: root,
    startNs: BigInt(start) * 1_000_000_000n,
    endNs: BigInt(end) * 1_000_000_000n,
    status,
  });
  const rows = nested([s('test:all', 0, 100, 1), s('test', 1, 60), s('lint', 2, 12), s('test:e2e', 20, 50), s('release:check', 61, 99, 1)]);
  assert.deepEqual(rows, [
    ['`test:all`', '1:40.0', 'exit 1', '0:03.0'],
    ['&nbsp;&nbsp;&nbsp;&nbsp;`test`', '0:59.0', 'passed', '0:19.0'],
    ['&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;`lint`', '0:10.0', 'passed', '0:10.0'],
    ['&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;`test:e2e`', '0:30.0', 'passed', '0:30.0'],
    ['&nbsp;&nbsp;&nbsp;&nbsp;`release:check`', '0:38.0', 'exit 1', '0:38.0'],
  ]);
});
