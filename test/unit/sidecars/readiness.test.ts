import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { describeAttempt, type Attempt } from '../../../src/http/attempt.ts';
import { SLOW_INTERVAL_MS } from '../../../src/config/options.ts';
import { intervalAfter, isReady, type Readiness, waitUntilReady } from '../../../src/sidecars/readiness.ts';
import { ScriptedHttp, VirtualClock, hangs, refused, response, type Step } from '../fakes.ts';

const READY = 'http://127.0.0.1:15021/healthz/ready';

describe('isReady', () => {
  const rows: [attempt: Attempt, ready: boolean][] = [
    [response(200), true],
    [response(204), true],
    [response(299), true],
    [response(199), false],
    [response(300), false],
    [response(503), false],
    [refused, false],
    [{ kind: 'timeout' }, false],
  ];
  for (const [attempt, ready] of rows) {
    test(`${JSON.stringify(attempt)}: ${ready ? 'ready' : 'not ready'}`, () => {
      assert.equal(isReady(attempt), ready);
    });
  }
});

interface Wait {
  readonly result: Readiness;
  readonly http: ScriptedHttp;
  readonly clock: VirtualClock;
  /** What onAttempt was told, as "n: attempt". */
  readonly reported: string[];
}

/** Sets up cancellation: abort now, or at some virtual time through clock.at. */
type Cancel = (controller: AbortController, clock: VirtualClock) => void;

interface WaitSettings {
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
  readonly requestTimeoutMs?: number;
  readonly cancel?: Cancel;
}

/** waitUntilReady against a scripted readiness URL, in virtual time: 60s, every 25ms, 1s per attempt unless told. */
async function wait(steps: readonly Step[], settings: WaitSettings = {}): Promise<Wait> {
  const { timeoutMs = 60_000, intervalMs = 25, requestTimeoutMs = 1_000, cancel } = settings;
  const clock = new VirtualClock();
  const http = new ScriptedHttp(clock, { [READY]: steps });
  const controller = new AbortController();
  cancel?.(controller, clock);
  const reported: string[] = [];
  const result = await waitUntilReady({
    url: new URL(READY),
    timeoutMs,
    intervalMs,
    requestTimeoutMs,
    http,
    clock,
    cancel: controller.signal,
    onAttempt: (attempt, n) => {
      reported.push(`${n}: ${describeAttempt(attempt)}`);
    },
  });
  return { result, http, clock, reported };
}

/** A timeout as the log prints it: the typed last answer shown, what it learned left for its own tests. */
function printed(result: Readiness): unknown {
  if (result.kind !== 'timeout') return result;
  const { answered: _answered, ...rest } = result;
  return { ...rest, last: describeAttempt(result.last) };
}

const times = ({ http }: Wait): number[] => http.calls.map((call) => call.at);

describe('waitUntilReady', () => {
  test('ready at the first attempt', async () => {
    const run = await wait([response(200)]);
    assert.deepEqual(run.result, { kind: 'ready', elapsedMs: 0, attempts: 1 });
    assert.deepEqual(run.reported, [], 'the ready answer is not reported as a miss');
    assert.deepEqual(
      run.http.calls.map(({ method, url, timeoutMs }) => ({ method, url, timeoutMs })),
      [{ method: 'GET', url: READY, timeoutMs: 1_000 }],
    );
  });

  const notYet: [name: string, steps: Step[], reported: string[]][] = [
    ['three 503s', [response(503), response(503), response(503, 'no'), response(200)], ['1: HTTP 503', '2: HTTP 503', '3: HTTP 503 "no"']],
    [
      'three refusals',
      [refused, refused, refused, response(200)],
      ['1: connection refused', '2: connection refused', '3: connection refused'],
    ],
    [
      'refused, reset, 404',
      [refused, { kind: 'reset' }, response(404), response(204)],
      ['1: connection refused', '2: connection reset', '3: HTTP 404'],
    ],
  ];
  for (const [name, steps, reported] of notYet) {
    test(`ready after ${name}: attempts counted, polls spaced by the interval, each miss reported`, async () => {
      const run = await wait(steps, { intervalMs: 100 });
      assert.deepEqual(run.result, { kind: 'ready', elapsedMs: 300, attempts: 4 });
      assert.deepEqual(times(run), [0, 100, 200, 300]);
      assert.deepEqual(run.reported, reported);
    });
  }

  test('a proxy slow to start is asked less often as the wait goes on: a fifth of the time waited, 100ms at most', async () => {
    const readyAt = 1_450;
    const slowProxy: Step = async (call) => response(call.at >= readyAt ? 200 : 503);
    const run = await wait([slowProxy], { intervalMs: 25 });
    // 25ms until 125ms have passed, then a fifth of the time waited, then 100ms from 500ms on.
    const expected = [0, 25, 50, 75, 100, 125, 150, 180, 216, 259.2, 311.04, 373.248, 447.8976, 537.47712];
    for (let at = 637.47712; at < readyAt + 100; at += 100) expected.push(at);
    const rounded = (values: number[]): number[] => values.map((value) => Math.round(value * 1000) / 1000);
    assert.deepEqual(rounded(times(run)), rounded(expected));
    assert.equal(SLOW_INTERVAL_MS, 100);
    assert.deepEqual(run.result.kind, 'ready');
  });

  test('the interval grows from the one asked for and is never shorter', () => {
    assert.deepEqual(
      [0, 100, 250, 500, 5_000].map((waited) => intervalAfter(waited, 25)),
      [25, 25, 50, 100, 100],
    );
    assert.deepEqual(
      [0, 1_000, 60_000].map((waited) => intervalAfter(waited, 300)),
      [300, 300, 300],
    );
  });

  test('an interval longer than the slow one is kept as it is', async () => {
    const run = await wait([response(503), response(503), response(503), response(503), response(503), response(200)], {
      intervalMs: 300,
    });
    assert.deepEqual(times(run), [0, 300, 600, 900, 1_200, 1_500]);
  });

  test('the interval counts from the start of each attempt, so a slow attempt is not followed by a full wait', async () => {
    const slow503: Step = async (_call, clock) => {
      await clock.sleep(30);
      return response(503);
    };
    const run = await wait([slow503, slow503, response(200)], { intervalMs: 100 });
    assert.deepEqual(times(run), [0, 100, 200]);
  });

  test('an attempt slower than the interval is followed at once by the next', async () => {
    const run = await wait([hangs, response(200)], { intervalMs: 100, requestTimeoutMs: 250 });
    assert.deepEqual(times(run), [0, 250]);
    assert.deepEqual(run.result, { kind: 'ready', elapsedMs: 250, attempts: 2 });
  });

  test('never ready: times out at the deadline, with the last answer', async () => {
    const run = await wait([refused, response(503, ' warming up ')], { timeoutMs: 1_000, intervalMs: 300 });
    assert.deepEqual(printed(run.result), { kind: 'timeout', elapsedMs: 1_000, attempts: 4, last: 'HTTP 503 "warming up"' });
    assert.deepEqual(times(run), [0, 300, 600, 900]);
    assert.deepEqual(run.reported, [
      '1: connection refused',
      '2: HTTP 503 "warming up"',
      '3: HTTP 503 "warming up"',
      '4: HTTP 503 "warming up"',
    ]);
  });

  test('never answering: the last is a timeout, and no attempt starts at or after the deadline', async () => {
    const run = await wait([hangs], { timeoutMs: 2_500, intervalMs: 25, requestTimeoutMs: 1_000 });
    assert.deepEqual(printed(run.result), { kind: 'timeout', elapsedMs: 2_500, attempts: 3, last: 'timed out' });
    assert.ok(
      times(run).every((at) => at < 2_500),
      `attempts at ${times(run).join(', ')}`,
    );
  });

  test('a last attempt cut short by the deadline does not hide the answer before it', async () => {
    const run = await wait([response(503, 'not yet'), hangs], { timeoutMs: 500, intervalMs: 100, requestTimeoutMs: 1_000 });
    assert.deepEqual(printed(run.result), { kind: 'timeout', elapsedMs: 500, attempts: 2, last: 'HTTP 503 "not yet"' });
  });

  test('each attempt gets the request timeout, cut to what is left of the wait', async () => {
    const run = await wait([hangs], { timeoutMs: 2_500, requestTimeoutMs: 1_000 });
    assert.deepEqual(
      run.http.calls.map(({ at, timeoutMs }) => ({ at, timeoutMs })),
      [
        { at: 0, timeoutMs: 1_000 },
        { at: 1_000, timeoutMs: 1_000 },
        { at: 2_000, timeoutMs: 500 },
      ],
    );
  });

  test('each attempt is given the cancel signal', async () => {
    const run = await wait([response(200)]);
    assert.equal(run.http.calls[0]?.cancel?.aborted, false);
  });

  describe('cancelled', () => {
    const abortAt =
      (ms: number): Cancel =>
      (controller, clock) =>
        clock.at(ms, () => controller.abort('SIGTERM'));
    const rows: [name: string, steps: Step[], settings: WaitSettings, attempts: number, reported: string[]][] = [
      ['before the first attempt', [response(200)], { cancel: (controller) => controller.abort('SIGTERM') }, 0, []],
      ['between polls', [response(503)], { intervalMs: 100, cancel: abortAt(250) }, 3, ['1: HTTP 503', '2: HTTP 503', '3: HTTP 503']],
      [
        'during an attempt (the aborted attempt is not reported)',
        [response(503), hangs],
        { intervalMs: 100, cancel: abortAt(150) },
        2,
        ['1: HTTP 503'],
      ],
    ];
    for (const [name, steps, settings, attempts, reported] of rows) {
      test(name, async () => {
        const run = await wait(steps, { timeoutMs: 10_000, ...settings });
        assert.deepEqual(run.result, { kind: 'cancelled' });
        assert.equal(run.http.calls.length, attempts);
        assert.deepEqual(run.reported, reported);
        assert.ok(run.clock.now() < 10_000, `cancelled only at ${run.clock.now()}ms`);
      });
    }

    test('at once: no wait for the interval to end', async () => {
      const run = await wait([response(503)], { intervalMs: 1_000, cancel: (c, clock) => clock.at(10, () => c.abort()) });
      assert.deepEqual(run.result, { kind: 'cancelled' });
      assert.equal(run.clock.now(), 10);
    });
  });
});
