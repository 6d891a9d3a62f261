// What the configuration carries to the launcher can change neither what runs nor what is said: a quit URL as
// long as the launcher's old line buffer, its tail crafted as a line of the protocol, runs the command; a token
// in a quit URL's query string is printed by neither half, text or JSON; and an annotations file that would
// block the read (a FIFO, a device) is refused at once, the assumed sidecar still told to quit.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { cleanEnv, run } from '../support/process.ts';
import { withSidecar } from '../support/sidecar.ts';

/** Kills the launcher's other child (the Node half) with SIGKILL, as the out-of-memory killer would. */
const KILL_NODE = 'for p in $(cat /proc/$PPID/task/$PPID/children); do [ "$p" = $$ ] || kill -KILL "$p"; done';
const posts = (requests: readonly { listener: string; method: string }[]) =>
  requests.filter((r) => r.listener === 'agent' && r.method === 'POST').length;

describe('the quit plan', () => {
  test('a 4 KB quit URL whose tail reads "exit": the command runs, its code is the exit code', () =>
    withSidecar({}, async (sidecar) => {
      // Before the lines were bounded, the launcher cut the quit line at 4095 bytes and read "exit" as a line.
      const prefix = `quit always 500 ${sidecar.quitUrl} `;
      const start = 'http://127.0.0.1:1/q?';
      const long = `${start}${'a'.repeat(4095 - prefix.length - start.length)}exit`;
      const result = await run([
        ...sidecar.classicArgs('--quit-timeout', '500ms', '--quit-url', long),
        '--',
        'sh',
        '-c',
        'echo ran; exit 3',
      ]);
      assert.equal(result.code, 3, result.stderr);
      assert.equal(result.stdout, 'ran\n');
    }));

  for (const format of ['text', 'json']) {
    for (const [half, command] of [
      ['the Node half', 'true'],
      ['the launcher, the Node half killed', `${KILL_NODE}; exit 0`],
    ] as const) {
      test(`a token in a quit URL's query string is not printed by ${half} (${format})`, () =>
        withSidecar({}, async (sidecar) => {
          const args = ['--sidecar', 'classic', '--ready-url', sidecar.readyUrl, '--log-format', format, '--log-level', 'debug'];
          const result = await run([...args, '--quit-url', `${sidecar.quitUrl}?token=s3cret`, '--', 'sh', '-c', command]);
          assert.equal(result.code, 0, result.stderr);
          assert.match(result.stderr, /acknowledged the quit/);
          assert.equal(posts(sidecar.requests), 1);
          assert.doesNotMatch(result.stderr, /s3cret/);
          assert.match(result.stderr, /quitquitquit\?\*\*\*/);
        }));
    }
  }
});

describe('an annotations file that would block the read', () => {
  for (const [what, make] of [
    [
      'a FIFO without a writer',
      (dir: string) => {
        const fifo = join(dir, 'annotations');
        execFileSync('mkfifo', [fifo]);
        return fifo;
      },
    ],
    ['a device', () => '/dev/null'],
  ] as const) {
    test(`${what}: refused at once, exit 125 naming it, the assumed sidecar told to quit`, () =>
      withSidecar({}, async (sidecar) => {
        const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-annotations-'));
        try {
          const path = make(dir);
          const started = Date.now();
          const result = await run(
            ['--pod-annotations', path, '--ready-url', sidecar.readyUrl, '--quit-url', sidecar.quitUrl, '--', 'true'],
            {
              env: cleanEnv({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }),
              timeoutMs: 10_000,
            },
          );
          assert.equal(result.code, 125, result.stderr);
          assert.match(result.stderr, /pod annotations ".*": cannot be read \(a (FIFO|device), not a regular file\)/);
          assert.equal(posts(sidecar.requests), 1);
          assert.ok(Date.now() - started < 5_000, `${Date.now() - started} ms`);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }));
  }
});
