import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { classify, describeAttempt, type Attempt } from '../../../src/http/attempt.ts';

/** An error as Node or undici throws it: a message, a code, maybe a cause. */
const failure = (code: string | undefined, cause?: unknown, name = 'Error'): Error => {
  const error = new Error(`${code ?? 'no code'} happened`, cause === undefined ? {} : { cause });
  error.name = name;
  return code === undefined ? error : Object.assign(error, { code });
};
const aggregate = (errors: unknown[], code?: string): AggregateError =>
  Object.assign(new AggregateError(errors, 'all attempts failed'), code === undefined ? {} : { code });

describe('classify', () => {
  const rows: [name: string, error: unknown, attempt: Attempt][] = [
    ['ECONNREFUSED itself', failure('ECONNREFUSED'), { kind: 'refused' }],
    ['ECONNREFUSED as the cause (fetch failed)', new TypeError('fetch failed', { cause: failure('ECONNREFUSED') }), { kind: 'refused' }],
    ['ECONNREFUSED two causes deep', failure(undefined, failure(undefined, failure('ECONNREFUSED'))), { kind: 'refused' }],
    ['ECONNREFUSED under the base UND_ERR', failure('UND_ERR', failure('ECONNREFUSED')), { kind: 'refused' }],
    [
      'AggregateError of refusals (happy eyeballs, 127.0.0.1 and ::1)',
      aggregate([failure('ECONNREFUSED'), failure('ECONNREFUSED')]),
      { kind: 'refused' },
    ],
    ['AggregateError with its own code, as net throws it', aggregate([failure('ECONNREFUSED')], 'ECONNREFUSED'), { kind: 'refused' }],
    ['AggregateError as a cause', new TypeError('fetch failed', { cause: aggregate([failure('ECONNREFUSED')]) }), { kind: 'refused' }],
    ['AggregateError: the first error counts', aggregate([failure('ETIMEDOUT'), failure('ECONNREFUSED')]), { kind: 'timeout' }],
    ['ECONNRESET', failure('ECONNRESET'), { kind: 'reset' }],
    ['EPIPE', failure('EPIPE'), { kind: 'reset' }],
    ['UND_ERR_SOCKET (other side closed)', failure('UND_ERR_SOCKET', undefined, 'SocketError'), { kind: 'reset' }],
    ['UND_ERR_CLOSED', failure('UND_ERR_CLOSED'), { kind: 'reset' }],
    ['UND_ERR_SOCKET with an ECONNRESET cause', failure('UND_ERR_SOCKET', failure('ECONNRESET')), { kind: 'reset' }],
    ['UND_ERR_CONNECT_TIMEOUT', failure('UND_ERR_CONNECT_TIMEOUT', undefined, 'ConnectTimeoutError'), { kind: 'timeout' }],
    ['UND_ERR_HEADERS_TIMEOUT', failure('UND_ERR_HEADERS_TIMEOUT'), { kind: 'timeout' }],
    ['UND_ERR_BODY_TIMEOUT', failure('UND_ERR_BODY_TIMEOUT'), { kind: 'timeout' }],
    ['ETIMEDOUT', failure('ETIMEDOUT'), { kind: 'timeout' }],
    ['an unknown code', failure('EHOSTUNREACH'), { kind: 'failed', code: 'EHOSTUNREACH' }],
    ['an unknown undici code', failure('UND_ERR_INFO'), { kind: 'failed', code: 'UND_ERR_INFO' }],
    ['an Error without a code: its name', new RangeError('bad'), { kind: 'failed', code: 'RangeError' }],
    ['a bare UND_ERR without a cause: the name', failure('UND_ERR', undefined, 'UndiciError'), { kind: 'failed', code: 'UndiciError' }],
    ['an empty AggregateError: its name', aggregate([]), { kind: 'failed', code: 'AggregateError' }],
    ['a string', 'boom', { kind: 'failed', code: 'EUNKNOWN' }],
    ['null', null, { kind: 'failed', code: 'EUNKNOWN' }],
    ['undefined', undefined, { kind: 'failed', code: 'EUNKNOWN' }],
    ['a plain object with a code', { code: 'ECONNREFUSED' }, { kind: 'refused' }],
  ];
  for (const [name, error, attempt] of rows) {
    test(`${name} -> ${JSON.stringify(attempt)}`, () => {
      assert.deepEqual(classify(error), attempt);
    });
  }

  test('a cause chain that loops ends', () => {
    const a: { cause?: unknown } = {};
    a.cause = { cause: a };
    assert.deepEqual(classify(a), { kind: 'failed', code: 'EUNKNOWN' });
  });
});

describe('describe', () => {
  const long = 'x'.repeat(100);
  const rows: [attempt: Attempt, text: string][] = [
    [{ kind: 'response', status: 200, body: '' }, 'HTTP 200'],
    [{ kind: 'response', status: 503, body: ' \n ' }, 'HTTP 503'],
    [{ kind: 'response', status: 503, body: 'no healthy upstream\n' }, 'HTTP 503 "no healthy upstream"'],
    [{ kind: 'response', status: 404, body: 'a "quoted"\nline' }, 'HTTP 404 "a \\"quoted\\"\\nline"'],
    [{ kind: 'response', status: 500, body: long }, `HTTP 500 "${'x'.repeat(80)}"`],
    [{ kind: 'refused' }, 'connection refused'],
    [{ kind: 'reset' }, 'connection reset'],
    [{ kind: 'timeout' }, 'timed out'],
    [{ kind: 'aborted' }, 'cancelled'],
    [{ kind: 'failed', code: 'EHOSTUNREACH' }, 'EHOSTUNREACH'],
  ];
  for (const [attempt, text] of rows) {
    test(`${JSON.stringify(attempt).slice(0, 60)} reads ${JSON.stringify(text).slice(0, 40)}`, () => {
      assert.equal(describeAttempt(attempt), text);
    });
  }
});
