// The bundle's launcher as the last line, with the real Node half: once the wrapper has found the sidecar it
// hands the quit plan to the launcher, which tells the sidecar to quit itself when the Node half is killed,
// and keeps the command's exit code.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { run } from '../support/process.ts';
import { type Sidecar, withSidecar } from '../support/sidecar.ts';

const classic = (sidecar: Sidecar, ...extra: string[]): string[] => sidecar.classicArgs('--quit-timeout', '2s', ...extra);
/** Kills the launcher's other child (the Node half) with SIGKILL, as the out-of-memory killer would. */
const KILL_NODE = 'for p in $(cat /proc/$PPID/task/$PPID/children); do [ "$p" = $$ ] || kill -KILL "$p"; done';

describe('the Node half killed', () => {
  test('while the command runs: the command ends on its own, its code kept, and the sidecar told to quit', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(classic(sidecar, '--', 'sh', '-c', `${KILL_NODE}; sleep 0.2; exit 4`));
      assert.equal(result.code, 4, result.stderr);
      assert.deepEqual(
        sidecar.quitRequests.map((r) => r.status),
        [200],
      );
      assert.match(
        result.stderr,
        /istio-job-run: the wrapper died of signal 9 \(Killed\); the launcher told the sidecar to quit itself \(http:\/\/127\.0\.0\.1:\d+\/quitquitquit: 200\)\n/,
      );
      assert.doesNotMatch(result.stderr, /out-of-memory/);
    }));

  test('--quit on-success and a failed command: the sidecar is left running, as the policy says', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(classic(sidecar, '--quit', 'on-success', '--', 'sh', '-c', `${KILL_NODE}; exit 4`));
      assert.equal(result.code, 4, result.stderr);
      assert.deepEqual(sidecar.quitRequests, []);
      assert.match(result.stderr, /the sidecar is left running \(quit on-success, exit 4\)/);
    }));

  test('--log-format json: the launcher’s line is a JSON record too', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(classic(sidecar, '--log-format', 'json', '--', 'sh', '-c', `${KILL_NODE}; exit 0`));
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stderr.trim().split('\n');
      for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line);
      assert.match(lines.at(-1) ?? '', /"msg":"the wrapper died of signal 9 \(Killed\); the launcher told the sidecar to quit itself/);
    }));
});
