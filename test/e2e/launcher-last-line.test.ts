// The bundle's launcher as the last line, with the real Node half: once the wrapper has found the sidecar it
// hands the quit plan to the launcher, which tells the sidecar to quit itself when the Node half is killed,
// and keeps the command's exit code; a job alone in its PID namespace that signals every process (kill -1)
// neither gets its own signal back nor leaves the sidecar running.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pidOne, run, start, WRAPPER } from '../support/process.ts';
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
        /istio-job-run: the wrapper died of signal 9 \(Killed\); the launcher sent the quits itself: the proxy acknowledged the quit \(POST http:\/\/127\.0\.0\.1:\d+\/quitquitquit: 200, 1 attempt\)\n/,
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
      assert.match(
        lines.at(-1) ?? '',
        /"msg":"the wrapper died of signal 9 \(Killed\); the launcher sent the quits itself: the proxy acknowledged/,
      );
    }));
});

describe('kill -1 from a job alone in its PID namespace (the launcher is PID 1)', () => {
  /** The bundle as PID 1 of a new PID namespace, its command `script`. */
  const asPid1 = (sidecar: Sidecar, script: string) =>
    start('unshare', ['--pid', '--fork', '--mount-proc', WRAPPER, ...classic(sidecar, '--', '/bin/sh', '-c', script)]);
  /** The same, run to its end: its code and stderr, and the sidecar told to quit once. */
  const runAsPid1 = async (sidecar: Sidecar, script: string, code: number): Promise<string> => {
    const running = asPid1(sidecar, script);
    running.process.stdin?.end();
    const result = await running.finished;
    assert.equal(result.code, code, result.stderr);
    assert.deepEqual(
      sidecar.quitRequests.map((r) => r.status),
      [200],
    );
    return result.stderr;
  };

  test('kill -TERM -1: the Node half is only told, the TERM never comes back to its sender', () =>
    withSidecar({}, async (sidecar) => {
      // The USR2 from outside is relayed behind anything the Node half would have forwarded.
      const running = asPid1(
        sidecar,
        "trap 'echo got TERM' TERM; trap 'exit 5' USR2; kill -TERM -1; echo sent; while :; do sleep 0.01; done",
      );
      await running.line(/^sent$/, 'stdout');
      process.kill(pidOne(running.pid), 'SIGUSR2');
      const result = await running.finished;
      assert.equal(result.code, 5, result.stderr);
      assert.equal(result.stdout, 'sent\n');
      assert.deepEqual(
        sidecar.quitRequests.map((r) => r.status),
        [200],
      );
    }));

  test('kill -KILL -1 as a clean-up step: the exit code kept, the sidecar told to quit, no out-of-memory blame', () =>
    withSidecar({}, async (sidecar) => {
      assert.doesNotMatch(await runAsPid1(sidecar, 'kill -KILL -1; exit 0', 0), /out-of-memory/);
    }));

  test('kill -STOP -1: the stopped Node half is continued, and quits the sidecar itself', () =>
    withSidecar({}, async (sidecar) => {
      assert.doesNotMatch(await runAsPid1(sidecar, 'kill -STOP -1; sleep 0.2; exit 6', 6), /the launcher told/);
    }));
});
