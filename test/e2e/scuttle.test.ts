// scuttle's variables, end to end: the built executable against the sidecar stand-in, configured the way a
// manifest written for scuttle configures it. Every row of the migration table, precedence, and bad values.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { withSidecar, type Sidecar } from '../support/sidecar.ts';
import { cleanEnv, run, wrapper } from '../support/process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-scuttle-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const NEVER = Number.POSITIVE_INFINITY;
const IN_POD = { KUBERNETES_SERVICE_HOST: '10.0.0.1' };

/** What scuttle's ISTIO_QUIT_API holds: pilot-agent's base URL, without the path. */
const quitApi = (sidecar: Sidecar): string => sidecar.quitUrl.replace(/\/quitquitquit$/, '');

/** A pod whose manifest was written for scuttle: the quit at ISTIO_QUIT_API, readiness from the stand-in's 15021. */
const pod = (sidecar: Sidecar, extra: Record<string, string> = {}): NodeJS.ProcessEnv =>
  cleanEnv({ ...IN_POD, ISTIO_JOB_RUN_READY_URL: sidecar.readyUrl, ISTIO_QUIT_API: quitApi(sidecar), ...extra });

/** A command that leaves a marker file and exits 3, so a test can tell whether it ran. */
function marker(name: string): { path: string; command: string[] } {
  const path = join(scratch, name);
  return { path, command: ['sh', '-c', `touch ${path}; exit 3`] };
}

const adminReady = (sidecar: Sidecar) => sidecar.requests.filter((r) => r.listener === 'admin' && r.path === '/ready');

describe('ENVOY_ADMIN_API and ISTIO_QUIT_API', () => {
  test('outside Kubernetes: classic, waits on Envoy admin /ready, quits at ISTIO_QUIT_API', () =>
    withSidecar({ readyAfter: NEVER }, async (sidecar) => {
      await sidecar.startAdmin();
      const running = wrapper(['sh', '-c', 'echo started'], {
        env: cleanEnv({ ENVOY_ADMIN_API: sidecar.adminUrl, ISTIO_QUIT_API: quitApi(sidecar) }),
      });
      running.process.stdin?.end();
      await sidecar.waitFor(() => adminReady(sidecar).length >= 2);
      assert.equal(running.stdout(), '', 'the command waits for the proxy');
      sidecar.setReady();
      const result = await running.finished;

      assert.equal(result.code, 0);
      assert.equal(result.stdout, 'started\n');
      const statuses = adminReady(sidecar).map((r) => r.status);
      assert.deepEqual(statuses, [...Array<number>(statuses.length - 1).fill(503), 200]);
      assert.ok(adminReady(sidecar).every((r) => r.method === 'GET'));
      assert.equal(sidecar.readyRequests.length, 0, 'never polled 15021');
      assert.deepEqual(
        sidecar.quitRequests.map((r) => [r.method, r.status]),
        [['POST', 200]],
      );
      assert.ok(
        result.stderr.includes(
          `istio-job-run: scuttle settings: ENVOY_ADMIN_API -> --ready-url ${sidecar.adminUrl}/ready, ` +
            `ISTIO_QUIT_API -> --quit-url ${sidecar.quitUrl}\n`,
        ),
        result.stderr,
      );
      assert.match(result.stderr, /ENVOY_ADMIN_API is set \(scuttle\), though not in a Kubernetes pod: assuming a classic sidecar/);
    }));

  test('without ENVOY_ADMIN_API, the same outside Kubernetes runs without a sidecar (the variable is what makes it classic)', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(['true'], { env: cleanEnv({ ISTIO_QUIT_API: quitApi(sidecar) }) });
      assert.equal(result.code, 0);
      assert.equal(sidecar.requests.length, 0);
    }));

  test('ENVOY_ADMIN_API empty is unset, as in scuttle: no sidecar outside Kubernetes', () =>
    withSidecar({}, async (sidecar) => {
      await sidecar.startAdmin();
      const result = await run(['true'], { env: cleanEnv({ ENVOY_ADMIN_API: '', ISTIO_QUIT_API: quitApi(sidecar) }) });
      assert.equal(result.code, 0);
      assert.equal(sidecar.requests.length, 0);
      assert.doesNotMatch(result.stderr, /ENVOY_ADMIN_API/);
      assert.match(result.stderr, /not in a Kubernetes pod/);
    }));

  test('ISTIO_QUIT_API with a trailing slash: POST <value>/quitquitquit', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(['sh', '-c', 'exit 4'], { env: pod(sidecar, { ISTIO_QUIT_API: `${quitApi(sidecar)}/` }) });
      assert.equal(result.code, 4);
      assert.deepEqual(
        sidecar.quitRequests.map((r) => [r.method, r.path, r.status]),
        [['POST', '/quitquitquit', 200]],
      );
    }));

  test('a native sidecar (status annotation) wins over ENVOY_ADMIN_API: no wait, no quit, and a line says why', () =>
    withSidecar({ readyAfter: NEVER }, async (sidecar) => {
      await sidecar.startAdmin();
      const status = JSON.stringify({ initContainers: ['istio-init', 'istio-proxy'], containers: ['job'] });
      const result = await run(['sh', '-c', 'exit 5'], {
        env: cleanEnv({
          ...IN_POD,
          ISTIO_JOB_RUN_SIDECAR_STATUS: status,
          ENVOY_ADMIN_API: sidecar.adminUrl,
          ISTIO_QUIT_API: quitApi(sidecar),
        }),
      });
      assert.equal(result.code, 5);
      assert.equal(sidecar.requests.length, 0);
      assert.match(result.stderr, /native sidecar .*; ENVOY_ADMIN_API \(scuttle\) does not make it classic/);
    }));
});

describe('the quit policy: NEVER_KILL_ISTIO and NEVER_KILL_ISTIO_ON_FAILURE', () => {
  const rows: [env: Record<string, string>, script: string, code: number, quits: number][] = [
    [{ NEVER_KILL_ISTIO: 'true' }, 'exit 0', 0, 0],
    [{ NEVER_KILL_ISTIO: 'true' }, 'exit 1', 1, 0],
    [{ NEVER_KILL_ISTIO_ON_FAILURE: 'true' }, 'exit 0', 0, 1],
    [{ NEVER_KILL_ISTIO_ON_FAILURE: 'true' }, 'exit 1', 1, 0],
    [{ NEVER_KILL_ISTIO: 'true', NEVER_KILL_ISTIO_ON_FAILURE: 'true' }, 'exit 0', 0, 0],
    [{ NEVER_KILL_ISTIO: 'false', NEVER_KILL_ISTIO_ON_FAILURE: 'false' }, 'exit 1', 1, 1],
  ];
  for (const [env, script, code, quits] of rows) {
    test(`${JSON.stringify(env)} after "${script}": exit ${code}, ${quits} quit request(s)`, () =>
      withSidecar({}, async (sidecar) => {
        const result = await run(['sh', '-c', script], { env: pod(sidecar, env) });
        assert.equal(result.code, code);
        assert.equal(sidecar.quitRequests.length, quits);
        if (quits === 0) assert.match(result.stderr, /not telling the proxy to quit/);
      }));
  }
});

describe('readiness: START_WITHOUT_ENVOY, WAIT_FOR_ENVOY_TIMEOUT, QUIT_WITHOUT_ENVOY_TIMEOUT', () => {
  test('START_WITHOUT_ENVOY=true: no readiness request at all, the quit still happens', () =>
    withSidecar({ readyAfter: NEVER }, async (sidecar) => {
      const { path, command } = marker('start-without-envoy');
      const result = await run(command, { env: pod(sidecar, { START_WITHOUT_ENVOY: 'true' }) });
      assert.equal(result.code, 3);
      assert.equal(existsSync(path), true);
      assert.equal(sidecar.readyRequests.length, 0);
      assert.equal(sidecar.quitRequests.length, 1);
    }));

  test('WAIT_FOR_ENVOY_TIMEOUT: after the timeout the command runs anyway, with a warning, and keeps its code', () =>
    withSidecar({ readyAfter: NEVER }, async (sidecar) => {
      const { path, command } = marker('wait-for-envoy-timeout');
      const result = await run(command, { env: pod(sidecar, { WAIT_FOR_ENVOY_TIMEOUT: '300ms' }) });
      assert.equal(result.code, 3);
      assert.equal(existsSync(path), true);
      assert.match(result.stderr, /warning: proxy not ready after 3\d\dms .* running the command anyway/);
      assert.ok(sidecar.readyRequests.length >= 2);
      assert.equal(sidecar.quitRequests.length, 1);
    }));

  test('QUIT_WITHOUT_ENVOY_TIMEOUT: after the timeout exit 125 without running the command; the sidecar is still told to quit', () =>
    withSidecar({ readyAfter: NEVER }, async (sidecar) => {
      const { path, command } = marker('quit-without-envoy-timeout');
      const result = await run(command, { env: pod(sidecar, { QUIT_WITHOUT_ENVOY_TIMEOUT: '300ms' }) });
      assert.equal(result.code, 125);
      assert.equal(existsSync(path), false);
      assert.match(result.stderr, /proxy not ready after 3\d\dms .*; not running the command/);
      assert.equal(sidecar.quitRequests.length, 1);
      assert.equal(sidecar.quitRequests[0]?.status, 200);
    }));

  test('both timeouts: QUIT_WITHOUT_ENVOY_TIMEOUT wins, as in scuttle', () =>
    withSidecar({ readyAfter: NEVER }, async (sidecar) => {
      const { path, command } = marker('both-timeouts');
      const result = await run(command, { env: pod(sidecar, { WAIT_FOR_ENVOY_TIMEOUT: '200ms', QUIT_WITHOUT_ENVOY_TIMEOUT: '250ms' }) });
      assert.equal(result.code, 125);
      assert.equal(existsSync(path), false);
      assert.match(result.stderr, /WAIT_FOR_ENVOY_TIMEOUT \(overridden by QUIT_WITHOUT_ENVOY_TIMEOUT\)/);
    }));
});

describe('GENERIC_QUIT_ENDPOINTS, QUIT_REQUEST_TIMEOUT, SCUTTLE_LOGGING', () => {
  test('GENERIC_QUIT_ENDPOINTS: each URL gets POSTs with the same retries, beside the Istio quit', () =>
    withSidecar({}, async (istio) =>
      withSidecar({ quitScript: [503, 503] }, async (first) =>
        withSidecar({ quitScript: ['reset'] }, async (second) => {
          const result = await run(['sh', '-c', 'exit 7'], {
            env: pod(istio, { GENERIC_QUIT_ENDPOINTS: `${first.quitUrl}, ${second.quitUrl}` }),
          });
          assert.equal(result.code, 7);
          assert.deepEqual(
            istio.quitRequests.map((r) => r.status),
            [200],
          );
          assert.deepEqual(
            first.quitRequests.map((r) => [r.method, r.status]),
            [
              ['POST', 503],
              ['POST', 503],
              ['POST', 200],
            ],
          );
          assert.deepEqual(
            second.quitRequests.map((r) => r.status),
            ['reset', 200],
          );
          assert.ok(result.stderr.includes(`acknowledged the quit (POST ${first.quitUrl}: 3 attempts`), result.stderr);
          assert.ok(result.stderr.includes(`acknowledged the quit (POST ${second.quitUrl}: 2 attempts`), result.stderr);
        }),
      ),
    ));

  test('GENERIC_QUIT_ENDPOINTS with NEVER_KILL_ISTIO: nothing is POSTed anywhere', () =>
    withSidecar({}, async (istio) =>
      withSidecar({}, async (other) => {
        const result = await run(['true'], { env: pod(istio, { GENERIC_QUIT_ENDPOINTS: other.quitUrl, NEVER_KILL_ISTIO: 'true' }) });
        assert.equal(result.code, 0);
        assert.equal(istio.quitRequests.length + other.quitRequests.length, 0);
      }),
    ));

  test("GENERIC_QUIT_ENDPOINTS are another sidecar's: their answers are not read by Istio's rules", () =>
    withSidecar({}, async (istio) =>
      withSidecar({ quitScript: [404] }, async (other) => {
        const result = await run(['true'], { env: pod(istio, { GENERIC_QUIT_ENDPOINTS: other.quitUrl }) });
        assert.equal(result.code, 0);
        const line = result.stderr.split('\n').find((text) => text.includes(`POST ${other.quitUrl} answered HTTP 404`));
        assert.ok(line !== undefined, result.stderr);
        assert.doesNotMatch(line, /pilot-agent/);
      }),
    ));

  test('QUIT_REQUEST_TIMEOUT is the timeout of one quit attempt: a hanging attempt is retried after it', () =>
    withSidecar({ quitScript: ['hang'] }, async (sidecar) => {
      // With the default 1s per attempt, the 700ms quit timeout would run out inside the first attempt.
      const result = await run(['true'], { env: pod(sidecar, { QUIT_REQUEST_TIMEOUT: '200ms', ISTIO_JOB_RUN_QUIT_TIMEOUT: '700ms' }) });
      assert.equal(result.code, 0);
      assert.deepEqual(
        sidecar.quitRequests.map((r) => r.status),
        ['hang', 200],
      );
      assert.match(result.stderr, /acknowledged the quit \(POST \S+: 2 attempts/);
    }));

  test('SCUTTLE_LOGGING=false: warnings only, no info lines', () =>
    withSidecar({ quitScript: [404] }, async (sidecar) => {
      const result = await run(['sh', '-c', 'echo out'], { env: pod(sidecar, { SCUTTLE_LOGGING: 'false' }) });
      assert.equal(result.code, 0);
      assert.equal(result.stdout, 'out\n');
      assert.equal(sidecar.quitRequests.length, 1);
      assert.match(result.stderr, /^istio-job-run: warning: proxy rejected the quit, not retrying/);
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    }));
});

describe('precedence: flag > ISTIO_JOB_RUN_* > scuttle > default', () => {
  test('ISTIO_JOB_RUN_QUIT=always beats NEVER_KILL_ISTIO, and the line says so', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(['true'], { env: pod(sidecar, { NEVER_KILL_ISTIO: 'true', ISTIO_JOB_RUN_QUIT: 'always' }) });
      assert.equal(result.code, 0);
      assert.equal(sidecar.quitRequests.length, 1);
      assert.match(
        result.stderr,
        /scuttle settings: ISTIO_QUIT_API -> --quit-url \S+, NEVER_KILL_ISTIO \(overridden by ISTIO_JOB_RUN_QUIT\)\n/,
      );
    }));

  test('--quit never beats ISTIO_JOB_RUN_QUIT and NEVER_KILL_ISTIO_ON_FAILURE', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(['--quit', 'never', 'true'], {
        env: pod(sidecar, { NEVER_KILL_ISTIO_ON_FAILURE: 'true', ISTIO_JOB_RUN_QUIT: 'always' }),
      });
      assert.equal(result.code, 0);
      assert.equal(sidecar.quitRequests.length, 0);
      assert.match(result.stderr, /NEVER_KILL_ISTIO_ON_FAILURE \(overridden by --quit\)/);
    }));

  test('ISTIO_JOB_RUN_QUIT_URL beats ISTIO_QUIT_API and GENERIC_QUIT_ENDPOINTS', () =>
    withSidecar({}, async (scuttles) =>
      withSidecar({}, async (ours) => {
        const result = await run(['true'], {
          env: pod(scuttles, { ISTIO_JOB_RUN_QUIT_URL: ours.quitUrl, GENERIC_QUIT_ENDPOINTS: scuttles.quitUrl }),
        });
        assert.equal(result.code, 0);
        assert.equal(ours.quitRequests.length, 1);
        assert.equal(scuttles.quitRequests.length, 0);
        assert.match(
          result.stderr,
          /ISTIO_QUIT_API \(overridden by ISTIO_JOB_RUN_QUIT_URL\), GENERIC_QUIT_ENDPOINTS \(overridden by ISTIO_JOB_RUN_QUIT_URL\)/,
        );
      }),
    ));

  test('--ready-url beats ENVOY_ADMIN_API, which still makes the mode classic outside Kubernetes', () =>
    withSidecar({}, async (sidecar) => {
      await sidecar.startAdmin();
      const result = await run(['--ready-url', sidecar.readyUrl, 'true'], {
        env: cleanEnv({ ENVOY_ADMIN_API: sidecar.adminUrl, ISTIO_QUIT_API: quitApi(sidecar) }),
      });
      assert.equal(result.code, 0);
      assert.equal(adminReady(sidecar).length, 0);
      assert.equal(sidecar.readyRequests.length, 1);
      assert.equal(sidecar.quitRequests.length, 1);
      assert.match(result.stderr, /ENVOY_ADMIN_API \(overridden by --ready-url\)/);
    }));
});

describe('bad values: exit 125, named, and the sidecar still told to quit', () => {
  test('a bad WAIT_FOR_ENVOY_TIMEOUT: 125, the message names it, no wait, no command, quit at ISTIO_QUIT_API', () =>
    withSidecar({}, async (sidecar) => {
      await sidecar.startAdmin();
      const { path, command } = marker('bad-wait-for-envoy-timeout');
      const result = await run(command, {
        env: cleanEnv({ ENVOY_ADMIN_API: sidecar.adminUrl, ISTIO_QUIT_API: quitApi(sidecar), WAIT_FOR_ENVOY_TIMEOUT: 'forever' }),
      });
      assert.equal(result.code, 125);
      assert.equal(existsSync(path), false);
      assert.match(result.stderr, /istio-job-run: WAIT_FOR_ENVOY_TIMEOUT: "forever" is not a duration \(examples: 500ms, 30s, 2m\)\n/);
      assert.equal(adminReady(sidecar).length, 0);
      assert.deepEqual(
        sidecar.quitRequests.map((r) => r.status),
        [200],
      );
    }));

  test('a boolean scuttle would have ignored (NEVER_KILL_ISTIO=1): 125 in a pod, and the quit is sent', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(['true'], { env: pod(sidecar, { NEVER_KILL_ISTIO: '1' }) });
      assert.equal(result.code, 125);
      assert.match(result.stderr, /NEVER_KILL_ISTIO: "1" is not a boolean \(true or false; scuttle ignored any other value\)/);
      assert.equal(sidecar.quitRequests.length, 1);
    }));

  test('a bad ENVOY_ADMIN_API still means a sidecar: 125, the quit goes to ISTIO_QUIT_API', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(['true'], { env: cleanEnv({ ENVOY_ADMIN_API: '127.0.0.1:15000', ISTIO_QUIT_API: quitApi(sidecar) }) });
      assert.equal(result.code, 125);
      assert.match(result.stderr, /ENVOY_ADMIN_API: "127\.0\.0\.1:15000" is not a URL \(example: http:\/\/127\.0\.0\.1:15000\)/);
      assert.equal(sidecar.quitRequests.length, 1);
    }));

  test('bad GENERIC_QUIT_ENDPOINTS: 125; the Istio quit still goes out', () =>
    withSidecar({}, async (sidecar) => {
      const result = await run(['true'], { env: pod(sidecar, { GENERIC_QUIT_ENDPOINTS: 'http://127.0.0.1:9/a,,' }) });
      assert.equal(result.code, 125);
      assert.match(result.stderr, /GENERIC_QUIT_ENDPOINTS: "http:\/\/127\.0\.0\.1:9\/a,," has an empty entry/);
      assert.equal(sidecar.quitRequests.length, 1);
    }));
});
