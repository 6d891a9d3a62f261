// The built executable against the sidecar stand-in over real HTTP: readiness, the quit rules, and the
// invariant (the quit is attempted on every way out, and never changes the exit code).

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { withSidecar, type QuitAnswer, type Sidecar } from '../support/sidecar.ts';
import { cleanEnv, run, wrapper } from '../support/process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-sidecar-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const classic = (sidecar: Sidecar, ...extra: string[]): string[] => [
  '--sidecar',
  'classic',
  '--ready-url',
  sidecar.readyUrl,
  '--quit-url',
  sidecar.quitUrl,
  ...extra,
];

/** A marker file the command creates, so a test can tell whether it ran. */
function marker(name: string): { path: string; command: string[] } {
  const path = join(scratch, name);
  return { path, command: ['sh', '-c', `touch ${path}; exit 3`] };
}

describe('readiness', () => {
  test('waits for the proxy: the command starts only after the first 200', () =>
    withSidecar({ readyAfter: 3 }, async (sidecar) => {
      const result = await run(classic(sidecar, 'sh', '-c', 'echo started'));
      assert.equal(result.code, 0);
      assert.equal(result.stdout, 'started\n');
      assert.deepEqual(
        sidecar.readyRequests.map((r) => r.status),
        [503, 503, 503, 200],
      );
      assert.match(result.stderr, /proxy ready after \d/);
      assert.equal(sidecar.quitRequests.length, 1);
    }));

  test('Envoy appearing late: refused connections mean "not yet"', () =>
    withSidecar({ startEnvoy: false }, async (sidecar) => {
      const running = wrapper(classic(sidecar, '--log-level', 'debug', '--', 'sh', '-c', 'echo started'));
      running.process.stdin?.end();
      await running.line(/readiness check 2: connection refused/);
      assert.equal(running.stdout(), '');
      await sidecar.startEnvoy();
      const result = await running.finished;
      assert.equal(result.code, 0);
      assert.equal(result.stdout, 'started\n');
      assert.ok(sidecar.readyRequests.some((r) => r.listener === 'envoy' && r.status === 200));
    }));

  test('never ready: exit 125 after --ready-timeout, the command never runs, the sidecar is still told to quit', () =>
    withSidecar({ readyAfter: Number.POSITIVE_INFINITY }, async (sidecar) => {
      const { path, command } = marker('never-ready');
      const result = await run(classic(sidecar, '--ready-timeout', '300ms', ...command));
      assert.equal(result.code, 125);
      assert.equal(existsSync(path), false);
      assert.match(result.stderr, /proxy not ready after 3\d\dms \(GET \S+: \d+ attempts, last: HTTP 503\); not running the command/);
      assert.equal(sidecar.quitRequests.length, 1);
      assert.equal(sidecar.quitRequests[0]?.status, 200);
    }));

  test('--start-without-proxy: runs the command anyway, with a warning, and keeps its code', () =>
    withSidecar({ readyAfter: Number.POSITIVE_INFINITY }, async (sidecar) => {
      const { path, command } = marker('start-without-proxy');
      const result = await run(classic(sidecar, '--ready-timeout', '200ms', '--start-without-proxy', ...command));
      assert.equal(result.code, 3);
      assert.equal(existsSync(path), true);
      assert.match(result.stderr, /warning: proxy not ready .* running the command anyway/);
      assert.equal(sidecar.quitRequests.length, 1);
    }));

  test('--no-wait: no readiness request at all, the quit still happens', () =>
    withSidecar({ readyAfter: Number.POSITIVE_INFINITY }, async (sidecar) => {
      const result = await run(classic(sidecar, '--no-wait', 'sh', '-c', 'exit 4'));
      assert.equal(result.code, 4);
      assert.equal(sidecar.readyRequests.length, 0);
      assert.equal(sidecar.quitRequests.length, 1);
    }));

  test('ISTIO_JOB_RUN_WAIT=false acts like --no-wait', () =>
    withSidecar({ readyAfter: Number.POSITIVE_INFINITY }, async (sidecar) => {
      const result = await run(classic(sidecar, 'true'), { env: cleanEnv({ ISTIO_JOB_RUN_WAIT: 'False' }) });
      assert.equal(result.code, 0);
      assert.equal(sidecar.readyRequests.length, 0);
    }));
});

describe('quit', () => {
  test('Istio 1.26+: quit acknowledged at once, exit code kept', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(classic(sidecar, 'sh', '-c', 'exit 9'));
      assert.equal(result.code, 9);
      assert.deepEqual(
        sidecar.quitRequests.map((r) => [r.method, r.status]),
        [['POST', 200]],
      );
      assert.match(result.stderr, /proxy acknowledged the quit \(POST http:\/\/127\.0\.0\.1:\d+\/quitquitquit: 1 attempt, /);
      assert.equal(sidecar.exited, true);
    }));

  test('Istio 1.4-1.25: the wrapper exits after the 200, without waiting for the 5 s drain', () =>
    withSidecar({ exit: 'drain', drainMs: 5_000 }, async (sidecar) => {
      const result = await run(classic(sidecar, 'true'));
      assert.equal(result.code, 0);
      assert.equal(sidecar.quitRequests.length, 1);
      assert.equal(sidecar.exited, false, 'the stand-in is still draining when the wrapper has exited');
    }));

  const retried: [string, readonly QuitAnswer[], string[]][] = [
    ['503 twice', [503, 503], []],
    ['500, 408 and 429', [500, 408, 429], []],
    ['a reset', ['reset'], []],
    ['a hanging request (per-attempt timeout)', ['hang'], ['--request-timeout', '200ms']],
  ];
  for (const [name, quitScript, extra] of retried) {
    test(`retries after ${name}, then is acknowledged`, () =>
      withSidecar({ quitScript }, async (sidecar) => {
        const result = await run(classic(sidecar, ...extra, 'sh', '-c', 'exit 5'));
        assert.equal(result.code, 5);
        const attempts = quitScript.length + 1;
        assert.equal(sidecar.quitRequests.length, attempts);
        assert.equal(sidecar.quitRequests.at(-1)?.status, 200);
        assert.match(result.stderr, new RegExp(`acknowledged the quit \\(POST \\S+: ${attempts} attempts`));
      }));
  }

  test('a 200 whose body is slow to come is acknowledged: one attempt, not retried, not given up', () =>
    withSidecar({ quitScript: ['slow-body'] }, async (sidecar) => {
      const result = await run(classic(sidecar, '--request-timeout', '200ms', 'sh', '-c', 'exit 3'));
      assert.equal(result.code, 3);
      assert.equal(sidecar.quitRequests.length, 1);
      assert.match(result.stderr, /proxy acknowledged the quit \(POST \S+: 1 attempt, /);
      assert.doesNotMatch(result.stderr, /gave up/);
    }));

  const rejected: [number, RegExp][] = [
    [404, /check the path/],
    [405, /POST only/],
    [403, /only from a loopback address/],
  ];
  for (const [status, hint] of rejected) {
    test(`${status}: reported at once with URL and status, not retried, exit code kept`, () =>
      withSidecar({ quitScript: [status] }, async (sidecar) => {
        const result = await run(classic(sidecar, 'sh', '-c', 'exit 6'));
        assert.equal(result.code, 6);
        assert.equal(sidecar.quitRequests.length, 1);
        assert.match(
          result.stderr,
          new RegExp(`warning: proxy rejected the quit, not retrying: POST ${sidecar.quitUrl} answered HTTP ${status}`),
        );
        assert.match(result.stderr, hint);
      }));
  }

  test('the real 404 and 405 of pilot-agent: a wrong path, and GET is never used', () =>
    withSidecar({}, async (sidecar) => {
      const wrongPath = sidecar.quitUrl.replace('/quitquitquit', '/quit');
      const result = await run(['--sidecar', 'classic', '--ready-url', sidecar.readyUrl, '--quit-url', wrongPath, 'true']);
      assert.equal(result.code, 0);
      assert.match(result.stderr, /answered HTTP 404 "404 page not found"/);
      assert.ok(sidecar.requests.every((r) => r.path !== '/quit' || r.method === 'POST'));
    }));

  test('retries until --quit-timeout, then gives up with a warning; the exit code is kept', () =>
    withSidecar({ quitScript: Array<503>(1_000).fill(503) }, async (sidecar) => {
      const result = await run(classic(sidecar, '--quit-timeout', '400ms', 'sh', '-c', 'exit 2'));
      assert.equal(result.code, 2);
      assert.ok(sidecar.quitRequests.length >= 3, `${sidecar.quitRequests.length} attempts`);
      assert.match(result.stderr, /warning: gave up telling the proxy to quit: POST \S+, last: HTTP 503 "scripted 503"/);
    }));

  test('refused after the proxy answered: already gone, done at once', () =>
    withSidecar({}, async (sidecar) => {
      // Readiness straight from pilot-agent's port: an answer there vouches for its quit endpoint.
      const running = wrapper([
        '--sidecar',
        'classic',
        '--ready-url',
        sidecar.agentReadyUrl,
        '--quit-url',
        sidecar.quitUrl,
        '--log-level',
        'debug',
        '--',
        'sh',
        '-c',
        'read line; exit 0',
      ]);
      await running.line(/debug: started/);
      sidecar.crash();
      running.process.stdin?.end('go\n');
      const result = await running.finished;
      assert.equal(result.code, 0);
      assert.match(result.stderr, /proxy already gone \(POST \S+ refused after it had answered: 1 attempt/);
    }));

  test('refused before the proxy ever answered: retried until the agent listens', () =>
    withSidecar({ startAgent: false, startEnvoy: false }, async (sidecar) => {
      const running = wrapper(classic(sidecar, '--no-wait', '--log-level', 'debug', '--', 'sh', '-c', 'exit 0'));
      running.process.stdin?.end();
      await running.line(/quit attempt 2 to \S+: connection refused; retrying/);
      await sidecar.startAgent();
      const result = await running.finished;
      assert.equal(result.code, 0);
      assert.equal(sidecar.quitRequests.at(-1)?.status, 200);
      assert.match(result.stderr, /acknowledged the quit/);
    }));

  test("another sidecar's quit endpoint refusing is retried: Envoy's readiness says nothing about it", () =>
    withSidecar({}, async (proxy) =>
      withSidecar({ startAgent: false }, async (other) => {
        const running = wrapper([
          '--sidecar',
          'classic',
          '--log-level',
          'debug',
          '--ready-url',
          proxy.readyUrl,
          '--quit-url',
          proxy.quitUrl,
          '--quit-url',
          other.quitUrl,
          '--',
          'true',
        ]);
        running.process.stdin?.end();
        await running.line(new RegExp(`quit attempt 2 to ${other.quitUrl.replace(/[.]/g, '\\.')}: connection refused; retrying`));
        await other.startAgent();
        const result = await running.finished;
        assert.equal(result.code, 0);
        assert.equal(other.quitRequests.at(-1)?.status, 200);
        assert.doesNotMatch(result.stderr, /already gone/);
      }),
    ));

  test('several quit URLs are POSTed in parallel, each with its own verdict', () =>
    withSidecar({}, async (first) =>
      withSidecar({ quitScript: [404] }, async (second) => {
        const result = await run([
          '--sidecar',
          'classic',
          '--ready-url',
          first.readyUrl,
          '--quit-url',
          first.quitUrl,
          '--quit-url',
          second.quitUrl,
          'true',
        ]);
        assert.equal(result.code, 0);
        assert.equal(first.quitRequests.length, 1);
        assert.equal(second.quitRequests.length, 1);
        assert.match(result.stderr, /acknowledged/);
        assert.match(result.stderr, /rejected/);
      }),
    ));

  test('IPv6 loopback URLs work', () =>
    withSidecar({ host: '::1' }, async (sidecar) => {
      assert.match(sidecar.quitUrl, /^http:\/\/\[::1\]:/);
      const result = await run(classic(sidecar, 'true'));
      assert.equal(result.code, 0);
      assert.equal(sidecar.quitRequests.length, 1);
    }));

  const policies: [string, string, number, number][] = [
    ['always', 'exit 1', 1, 1],
    ['on-success', 'exit 0', 0, 1],
    ['on-success', 'exit 1', 1, 0],
    ['never', 'exit 0', 0, 0],
  ];
  for (const [policy, script, code, quits] of policies) {
    test(`--quit ${policy} after "${script}": ${quits} quit request(s)`, () =>
      withSidecar({}, async (sidecar) => {
        const result = await run(classic(sidecar, '--quit', policy, 'sh', '-c', script));
        assert.equal(result.code, code);
        assert.equal(sidecar.quitRequests.length, quits);
      }));
  }

  test('a quit URL that is not loopback is allowed, with a warning', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run([
        '--sidecar',
        'classic',
        '--ready-url',
        sidecar.readyUrl,
        '--quit',
        'never',
        '--quit-url',
        'http://10.11.12.13:15020/quitquitquit',
        'true',
      ]);
      assert.equal(result.code, 0);
      assert.match(result.stderr, /warning: quit URL http:\/\/10\.11\.12\.13:15020\/quitquitquit is not a loopback address/);
    }));
});

describe('the invariant: the quit is attempted on every way out', () => {
  const ways: [string, string[], number][] = [
    ['the command exits', ['sh', '-c', 'exit 13'], 13],
    ['the command dies of a signal', ['sh', '-c', 'kill -KILL $$'], 137],
    ['the command is not found', ['no-such-command-istio-job-run'], 127],
    ['the command cannot be executed', ['/etc'], 126],
  ];
  for (const [name, command, code] of ways) {
    test(`${name}: exit ${code}, quit`, () =>
      withSidecar({}, async (sidecar) => {
        const result = await run(classic(sidecar, ...command));
        assert.equal(result.code, code);
        assert.equal(sidecar.quitRequests.length, 1);
      }));
  }

  test('a usage error: exit 125, quit sent to the --quit-url that did parse', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(['--sidecar', 'classic', '--quit-url', sidecar.quitUrl, '--ready-timeout', 'soon', 'true']);
      assert.equal(result.code, 125);
      assert.equal(sidecar.quitRequests.length, 1);
      assert.equal(sidecar.readyRequests.length, 0);
    }));

  test('a usage error in a pod with a typo in --sidecar: still quits (auto from the environment)', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(['--sidecar', 'clasic', '--quit-url', sidecar.quitUrl, 'true'], {
        env: cleanEnv({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }),
      });
      assert.equal(result.code, 125);
      assert.match(result.stderr, /--sidecar: "clasic" is not one of auto, classic, native, none/);
      assert.equal(sidecar.quitRequests.length, 1);
    }));

  test('a usage error with --quit on-success: no quit (the policy allows none after a failure)', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(['--sidecar', 'classic', '--quit', 'on-success', '--quit-url', sidecar.quitUrl, '--frob', 'true']);
      assert.equal(result.code, 125);
      assert.equal(sidecar.quitRequests.length, 0);
    }));

  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
    ['SIGHUP', 129],
    ['SIGQUIT', 131],
  ] as const) {
    test(`${signal} while waiting: no command, quit, exit ${code}`, () =>
      withSidecar({ readyAfter: Number.POSITIVE_INFINITY }, async (sidecar) => {
        const { path, command } = marker(`signal-${signal}`);
        const running = wrapper(classic(sidecar, ...command));
        running.process.stdin?.end();
        await sidecar.waitFor(() => sidecar.readyRequests.length >= 2);
        running.process.kill(signal);
        const result = await running.finished;
        assert.equal(result.code, code);
        assert.equal(existsSync(path), false);
        assert.equal(sidecar.quitRequests.length, 1);
        assert.match(result.stderr, new RegExp(`received ${signal} before the command started`));
      }));
  }
});
