import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { describeAttempt, type Attempt } from '../../../src/http/attempt.ts';
import type { QuitPolicy } from '../../../src/config/options.ts';
import { backoffMs, judge, quitProxy, shouldQuit, type QuitResult, type Verdict } from '../../../src/sidecars/quit.ts';
import { ISTIO } from '../../../src/config/kinds.ts';
import { RecordingLogger, ScriptedHttp, VirtualClock, hangs, refused, response, type Step } from '../fakes.ts';

const QUIT = 'http://127.0.0.1:15020/quitquitquit';
const OTHER = 'http://[::1]:15020/quitquitquit';

describe('shouldQuit', () => {
  const rows: [policy: QuitPolicy, exitCode: number, quit: boolean][] = [
    ['always', 0, true],
    ['always', 1, true],
    ['always', 125, true],
    ['always', 143, true],
    ['on-success', 0, true],
    ['on-success', 1, false],
    ['on-success', 125, false],
    ['on-success', 143, false],
    ['never', 0, false],
    ['never', 1, false],
  ];
  for (const [policy, exitCode, quit] of rows) {
    test(`${policy} after exit ${exitCode}: ${quit ? 'quit' : 'no quit'}`, () => {
      assert.equal(shouldQuit(policy, exitCode), quit);
    });
  }
});

describe('judge', () => {
  const rows: [attempt: Attempt, answeredBefore: boolean, verdict: Verdict][] = [
    [response(200), false, 'acknowledged'],
    [response(200, 'OK'), true, 'acknowledged'],
    [response(204), false, 'acknowledged'],
    [response(500), false, 'retry'],
    [response(503), false, 'retry'],
    [response(503), true, 'retry'],
    [response(408), false, 'retry'],
    [response(429), false, 'retry'],
    [response(404), false, 'rejected'],
    [response(404), true, 'rejected'],
    [response(405), false, 'rejected'],
    [response(403), false, 'rejected'],
    [response(400), false, 'rejected'],
    [response(301), false, 'rejected'],
    [refused, false, 'retry'],
    [refused, true, 'gone'],
    [{ kind: 'reset' }, false, 'retry'],
    [{ kind: 'reset' }, true, 'retry'],
    [{ kind: 'timeout' }, true, 'retry'],
    [{ kind: 'failed', code: 'EHOSTUNREACH' }, true, 'retry'],
    [{ kind: 'aborted' }, false, 'retry'],
  ];
  for (const [attempt, answeredBefore, verdict] of rows) {
    test(`${JSON.stringify(attempt)}${answeredBefore ? ' after an answer' : ''} -> ${verdict}`, () => {
      assert.equal(judge(attempt, answeredBefore), verdict);
    });
  }
});

describe('backoffMs', () => {
  const rows: [retry: number, ms: number][] = [
    [0, 20],
    [1, 20],
    [2, 40],
    [3, 80],
    [4, 160],
    [5, 320],
    [6, 640],
    [7, 1_000],
    [8, 1_000],
    [60, 1_000],
  ];
  for (const [retry, ms] of rows) {
    test(`retry ${retry} waits ${ms}ms`, () => {
      assert.equal(backoffMs(retry), ms);
    });
  }
});

interface Run {
  readonly results: QuitResult[];
  readonly http: ScriptedHttp;
  readonly log: RecordingLogger;
  readonly clock: VirtualClock;
}

/** quitProxy against scripted answers per URL, in virtual time: 10s overall, 1s per attempt unless told. */
async function quit(
  scripts: Readonly<Record<string, readonly Step[]>>,
  { timeoutMs = 10_000, requestTimeoutMs = 1_000, answeredBefore = false } = {},
): Promise<Run> {
  const clock = new VirtualClock();
  const http = new ScriptedHttp(clock, scripts);
  const log = new RecordingLogger();
  const targets = Object.keys(scripts).map((href) => ({ url: new URL(href), kind: ISTIO }));
  const results = await quitProxy({ targets, timeoutMs, requestTimeoutMs, http, clock, log, answeredBefore: () => answeredBefore });
  return { results, http, log, clock };
}

/** An attempt as the log prints it (results keep it typed). */
const shown = (attempt: Attempt | undefined): string | undefined => (attempt === undefined ? undefined : describeAttempt(attempt));

/** The parts of a result a test states: verdict and attempts. */
const outcome = ({ results }: Run) => results.map(({ url, verdict, attempts }) => ({ url: url.href, verdict, attempts }));
const times = (run: Run, href = QUIT) => run.http.callsTo(href).map((call) => call.at);

describe('quitProxy', () => {
  test('a token in the query string is never shown: not in the text, not in the JSON fields', async () => {
    const secret = 'http://127.0.0.1:15020/quitquitquit?token=s3cret';
    for (const steps of [[response(200)], [response(404)], [response(503)]]) {
      const run = await quit({ [secret]: steps }, { timeoutMs: 100 });
      assert.ok(run.log.lines.length > 0);
      for (const line of run.log.lines) {
        const text = `${line.message} ${JSON.stringify(line.fields ?? {})}`;
        assert.ok(!text.includes('s3cret'), text);
        assert.match(text, /quitquitquit\?\*\*\*/);
      }
    }
  });

  test('the first 200 is acknowledged after one POST', async () => {
    const run = await quit({ [QUIT]: [response(200)] });
    assert.deepEqual(outcome(run), [{ url: QUIT, verdict: 'acknowledged', attempts: 1 }]);
    assert.deepEqual(
      run.http.calls.map(({ method, url, timeoutMs }) => ({ method, url, timeoutMs })),
      [{ method: 'POST', url: QUIT, timeoutMs: 1_000 }],
    );
    assert.match(
      run.log.at('info').join('\n'),
      /proxy acknowledged the quit \(POST http:\/\/127\.0\.0\.1:15020\/quitquitquit: 1 attempt, 0ms\)/,
    );
  });

  test('503, 503, 200: three attempts, with 20ms then 40ms between them', async () => {
    const run = await quit({ [QUIT]: [response(503), response(503), response(200)] });
    assert.deepEqual(outcome(run), [{ url: QUIT, verdict: 'acknowledged', attempts: 3 }]);
    assert.deepEqual(times(run), [0, 20, 60]);
    assert.equal(run.results[0]?.elapsedMs, 60);
    assert.deepEqual(run.log.at('debug'), [
      `quit attempt 1 to ${QUIT}: HTTP 503; retrying`,
      `quit attempt 2 to ${QUIT}: HTTP 503; retrying`,
    ]);
  });

  test('refused before the proxy ever answered: retried until the 200', async () => {
    const run = await quit({ [QUIT]: [refused, refused, refused, response(200)] });
    assert.deepEqual(outcome(run), [{ url: QUIT, verdict: 'acknowledged', attempts: 4 }]);
    assert.deepEqual(times(run), [0, 20, 60, 140]);
  });

  test('refused when the proxy had answered the readiness check: gone after one attempt', async () => {
    const run = await quit({ [QUIT]: [refused, response(200)] }, { answeredBefore: true });
    assert.deepEqual(outcome(run), [{ url: QUIT, verdict: 'gone', attempts: 1 }]);
    assert.match(run.log.at('info').join('\n'), /proxy already gone/);
  });

  test('refused after an earlier 503 on the same URL: gone', async () => {
    const run = await quit({ [QUIT]: [response(503), refused, response(200)] });
    assert.deepEqual(outcome(run), [{ url: QUIT, verdict: 'gone', attempts: 2 }]);
  });

  test('refused after a reset or timeout is not gone: only an HTTP answer proves the proxy listened', async () => {
    const run = await quit({ [QUIT]: [{ kind: 'reset' }, { kind: 'timeout' }, refused, response(200)] });
    assert.deepEqual(outcome(run), [{ url: QUIT, verdict: 'acknowledged', attempts: 4 }]);
  });

  describe('a 4xx is rejected after one attempt, with a warning naming the URL, the status and a hint', () => {
    const rows: [status: number, hint: string][] = [
      [403, 'pilot-agent accepts a quit only from a loopback address'],
      [404, 'check the path: pilot-agent listens for /quitquitquit on 15020'],
      [405, 'the quit endpoint takes POST only'],
      [400, ''],
    ];
    for (const [status, hint] of rows) {
      test(`HTTP ${status}`, async () => {
        const run = await quit({ [QUIT]: [response(status), response(200)] });
        assert.deepEqual(outcome(run), [{ url: QUIT, verdict: 'rejected', attempts: 1 }]);
        const expected = `proxy rejected the quit, not retrying: POST ${QUIT} answered HTTP ${status} (1 attempt, 0ms)`;
        assert.deepEqual(run.log.at('warn'), [hint === '' ? expected : `${expected}; ${hint}`]);
      });
    }
  });

  test('always 503: gives up once the quit timeout has passed, and never POSTs after it', async () => {
    const run = await quit({ [QUIT]: [response(503, 'no healthy upstream')] }, { timeoutMs: 1_000 });
    assert.deepEqual(outcome(run), [{ url: QUIT, verdict: 'gave-up', attempts: 6 }]);
    // Backoff 20, 40, 80, 160, 320; the 640 is cut short by the deadline.
    assert.deepEqual(times(run), [0, 20, 60, 140, 300, 620]);
    assert.ok(run.clock.now() >= 1_000, `gave up at ${run.clock.now()}ms`);
    assert.equal(shown(run.results[0]?.last), 'HTTP 503 "no healthy upstream"');
    assert.deepEqual(run.log.at('warn'), [
      `gave up telling the proxy to quit: POST ${QUIT}, last: HTTP 503 "no healthy upstream" (6 attempts, 1s)`,
    ]);
    assert.deepEqual(run.log.lines.at(-1)?.fields, { url: QUIT, attempts: 6, ms: 1_000, last: 'HTTP 503 "no healthy upstream"' });
  });

  test('each attempt gets the request timeout, cut to what is left of the quit timeout', async () => {
    const run = await quit({ [QUIT]: [hangs] }, { timeoutMs: 2_500, requestTimeoutMs: 1_000 });
    assert.deepEqual(
      run.http.calls.map(({ at, timeoutMs }) => ({ at, timeoutMs })),
      [
        { at: 0, timeoutMs: 1_000 },
        { at: 1_020, timeoutMs: 1_000 },
        { at: 2_060, timeoutMs: 440 },
      ],
    );
    assert.deepEqual(outcome(run), [{ url: QUIT, verdict: 'gave-up', attempts: 3 }]);
    assert.equal(shown(run.results[0]?.last), 'timed out');
  });

  test('an attempt cut short by the deadline does not hide the answer before it', async () => {
    const run = await quit({ [QUIT]: [response(503, 'busy'), hangs] }, { timeoutMs: 500, requestTimeoutMs: 1_000 });
    assert.deepEqual(outcome(run), [{ url: QUIT, verdict: 'gave-up', attempts: 2 }]);
    assert.equal(shown(run.results[0]?.last), 'HTTP 503 "busy"');
  });

  test('no time at all: gives up without an attempt', async () => {
    const run = await quit({ [QUIT]: [response(200)] }, { timeoutMs: 0 });
    assert.deepEqual(outcome(run), [{ url: QUIT, verdict: 'gave-up', attempts: 0 }]);
  });

  test('two URLs are tried in parallel, each to its own verdict', async () => {
    const run = await quit({ [QUIT]: [response(503), response(503), response(200)], [OTHER]: [response(404)] });
    assert.deepEqual(outcome(run), [
      { url: QUIT, verdict: 'acknowledged', attempts: 3 },
      { url: OTHER, verdict: 'rejected', attempts: 1 },
    ]);
    assert.deepEqual(times(run, QUIT), [0, 20, 60]);
    assert.deepEqual(times(run, OTHER), [0]);
  });

  test('parallel retries keep their own backoff on one timeline', async () => {
    const run = await quit({ [QUIT]: [response(503), response(200)], [OTHER]: [refused, refused, refused, response(200)] });
    assert.deepEqual(times(run, QUIT), [0, 20]);
    assert.deepEqual(times(run, OTHER), [0, 20, 60, 140]);
  });

  test('an answer on one URL does not make a refusal on another mean gone', async () => {
    const run = await quit({ [QUIT]: [response(503), refused], [OTHER]: [refused, refused, response(200)] });
    assert.deepEqual(outcome(run), [
      { url: QUIT, verdict: 'gone', attempts: 2 },
      { url: OTHER, verdict: 'acknowledged', attempts: 3 },
    ]);
  });

  test('an Http that throws: gave-up, with the error as the last answer, and no exception', async () => {
    const throws: Step = () => {
      throw new Error('socket exploded');
    };
    const run = await quit({ [QUIT]: [response(503), throws] });
    assert.deepEqual(outcome(run), [{ url: QUIT, verdict: 'gave-up', attempts: 2 }]);
    assert.equal(shown(run.results[0]?.last), 'socket exploded');
    assert.match(run.log.at('warn').join('\n'), /gave up telling the proxy to quit: .*last: socket exploded/);
  });
});
