// The built executable against stand-ins over real HTTP, told where to quit by the Cloud SQL proxy operator's
// variable (CSQL_PROXY_QUIT_URLS, space-separated, `localhost` as the operator writes it): each URL quit with the
// same retries and reports as every quit, whether its stand-in answers at once, slowly, wrongly or never; a bad
// value is one line naming the variable, exit 125, and the good URLs are still quit.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { kindNamed } from '../../src/config/kinds.ts';
import { cleanEnv, run } from '../support/process.ts';
import { type QuitAnswer, Sidecar } from '../support/sidecar.ts';

const VARIABLE = kindNamed('cloud-sql-proxy').template.quitUrlsVariable ?? '';
const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-quit-urls-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Stand-ins answering each its own script, closed afterwards whatever happens. */
async function withStandIns(scripts: readonly (readonly QuitAnswer[])[], body: (standIns: Sidecar[]) => Promise<void>): Promise<void> {
  const standIns: Sidecar[] = [];
  try {
    for (const quitScript of scripts) standIns.push(await Sidecar.start({ quitScript, startEnvoy: false }));
    await body(standIns);
  } finally {
    await Promise.all(standIns.map((standIn) => standIn.close()));
  }
}

/** The operator's form of a stand-in's quit URL. */
const operatorUrl = (standIn: Sidecar): string => standIn.quitUrl.replace('127.0.0.1', 'localhost');

const wrapped = (standIns: readonly Sidecar[], args: readonly string[], value?: string) =>
  run(['--sidecar', 'none', '--quit-timeout', '5s', ...args], {
    env: cleanEnv({ [VARIABLE]: value ?? standIns.map(operatorUrl).join(' ') }),
  });

describe(`${VARIABLE}: the operator's proxies told to quit`, () => {
  test('two proxies: each POSTed once after the job, the exit code kept, one line names where they came from', () =>
    withStandIns([[], []], async (standIns) => {
      const result = await wrapped(standIns, ['sh', '-c', 'exit 3']);
      assert.equal(result.code, 3, result.stderr);
      for (const standIn of standIns) {
        assert.deepEqual(
          standIn.quitRequests.map((request) => [request.method, request.status]),
          [['POST', 200]],
        );
      }
      assert.match(result.stderr, /sidecars: cloud-sql-proxy \(from CSQL_PROXY_QUIT_URLS\)/);
      assert.equal(
        result.stderr.match(/cloud-sql-proxy acknowledged the quit \(POST http:\/\/localhost:\d+\/quitquitquit: 1 attempt/g)?.length,
        2,
      );
    }));

  test('one slow (a request that hangs, then 503), one at once: the slow one retried until acknowledged', () =>
    withStandIns([['hang', 503], []], async ([slow, prompt]) => {
      const result = await wrapped([slow as Sidecar, prompt as Sidecar], ['--request-timeout', '200ms', 'true']);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(
        slow?.quitRequests.map((request) => request.status),
        ['hang', 503, 200],
      );
      assert.equal(prompt?.quitRequests.length, 1);
      assert.match(result.stderr, /cloud-sql-proxy acknowledged the quit \(POST \S+: 3 attempts/);
    }));

  test('a wrong answer (404): reported at once, not retried; the other still quit; the exit code kept', () =>
    withStandIns([[404], []], async ([wrong, right]) => {
      const result = await wrapped([wrong as Sidecar, right as Sidecar], ['sh', '-c', 'exit 4']);
      assert.equal(result.code, 4, result.stderr);
      assert.equal(wrong?.quitRequests.length, 1);
      assert.equal(right?.exited, true);
      assert.match(
        result.stderr,
        /warning: cloud-sql-proxy rejected the quit, not retrying: POST http:\/\/localhost:\d+\/quitquitquit answered HTTP 404/,
      );
    }));

  test("never acknowledged: retried until --quit-timeout, then a warning with the kind's hint; the exit code kept", () =>
    withStandIns([Array<503>(1_000).fill(503)], async (standIns) => {
      const result = await wrapped(standIns, ['--quit-timeout', '400ms', 'sh', '-c', 'exit 2']);
      assert.equal(result.code, 2, result.stderr);
      assert.ok((standIns[0]?.quitRequests.length ?? 0) >= 3);
      assert.match(
        result.stderr,
        /warning: gave up telling the cloud-sql-proxy to quit: POST \S+, last: HTTP 503 .*the Cloud SQL proxy listens for \/quitquitquit only with --quitquitquit/,
      );
    }));

  test('a bad value: one line naming the variable, the value and what is allowed, exit 125, the command not run; the good URL still quit', () =>
    withStandIns([[]], async ([good]) => {
      const touched = join(scratch, 'ran');
      const value = `${operatorUrl(good as Sidecar)} localhost:9091/quitquitquit`;
      const result = await wrapped([], ['sh', '-c', `touch ${touched}`], value);
      assert.equal(result.code, 125, result.stderr);
      assert.equal(existsSync(touched), false);
      const errors = result.stderr.split('\n').filter((line) => line.includes(`${VARIABLE}: `));
      assert.deepEqual(errors.length, 1, result.stderr);
      assert.match(
        errors[0] ?? '',
        /CSQL_PROXY_QUIT_URLS: "localhost:9091\/quitquitquit" is not an http or https URL \(space-separated http or https URLs, e\.g\. http:\/\/127\.0\.0\.1:9091\/quitquitquit\)/,
      );
      assert.equal(good?.quitRequests.length, 1);
    }));

  test('--quit never: nothing POSTed', () =>
    withStandIns([[]], async (standIns) => {
      const result = await wrapped(standIns, ['--quit', 'never', 'true']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(standIns[0]?.quitRequests.length, 0);
    }));
});
