import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, type Logger } from '../../src/log.ts';
import type { LogFormat, LogLevel } from '../../src/config/options.ts';

const NOW = new Date('2026-01-02T03:04:05.678Z');
type Method = 'debug' | 'info' | 'warn' | 'error';
const METHODS: readonly Method[] = ['debug', 'info', 'warn', 'error'];

/** A logger writing into an array, at a fixed time, optionally configured. */
function logger(level?: LogLevel, format: LogFormat = 'text'): { log: Logger; written: string[] } {
  const written: string[] = [];
  const log = createLogger(
    (text) => written.push(text),
    () => NOW,
  );
  if (level !== undefined) log.configure(level, format);
  return { log, written };
}

describe('text format', () => {
  const rows: [method: Method, line: string][] = [
    ['debug', 'istio-job-run: debug: proxy says hi\n'],
    ['info', 'istio-job-run: proxy says hi\n'],
    ['warn', 'istio-job-run: warning: proxy says hi\n'],
    ['error', 'istio-job-run: proxy says hi\n'],
  ];
  for (const [method, line] of rows) {
    test(`${method}: ${JSON.stringify(line)}`, () => {
      const { log, written } = logger('debug');
      log[method]('proxy says hi', { url: 'http://x/', attempts: 2 });
      assert.deepEqual(written, [line]);
    });
  }
});

describe('level filtering', () => {
  const rows: [level: LogLevel | undefined, printed: Method[]][] = [
    [undefined, ['info', 'warn', 'error']],
    ['debug', ['debug', 'info', 'warn', 'error']],
    ['info', ['info', 'warn', 'error']],
    ['warn', ['warn', 'error']],
    ['error', ['error']],
    ['silent', []],
  ];
  for (const [level, printed] of rows) {
    test(`${level ?? 'unconfigured (info)'} prints ${printed.join(', ') || 'nothing'}`, () => {
      const { log, written } = logger(level);
      for (const method of METHODS) log[method](`${method} line`);
      assert.deepEqual(
        written.map((text) => /(\w+) line\n$/.exec(text)?.[1]),
        printed,
      );
    });
  }
});

describe('json format', () => {
  test('one parseable JSON object per line, with time, level, msg and the fields', () => {
    const { log, written } = logger('debug', 'json');
    log.info('proxy ready', { ms: 120, attempts: 3 });
    log.warn('two\nlines "quoted"', { url: 'http://127.0.0.1:15020/quitquitquit', ok: false });
    log.debug('no fields');
    assert.ok(
      written.every((text) => text.endsWith('\n') && text.indexOf('\n') === text.length - 1),
      'one line per write',
    );
    assert.deepEqual(
      written.map((text) => JSON.parse(text)),
      [
        { time: NOW.toISOString(), level: 'info', msg: 'proxy ready', ms: 120, attempts: 3 },
        { time: NOW.toISOString(), level: 'warn', msg: 'two\nlines "quoted"', url: 'http://127.0.0.1:15020/quitquitquit', ok: false },
        { time: NOW.toISOString(), level: 'debug', msg: 'no fields' },
      ],
    );
  });

  test('an undefined field is left out', () => {
    const { log, written } = logger('info', 'json');
    log.error('failed', { code: undefined, exit: 125 });
    assert.deepEqual(JSON.parse(written[0] ?? ''), { time: NOW.toISOString(), level: 'error', msg: 'failed', exit: 125 });
  });

  test('levels still filter', () => {
    const { log, written } = logger('warn', 'json');
    log.info('quiet');
    log.error('loud');
    assert.deepEqual(
      written.map((text) => (JSON.parse(text) as { msg: string }).msg),
      ['loud'],
    );
  });
});

describe('configure', () => {
  test('switches format and level, back and forth', () => {
    const { log, written } = logger();
    log.debug('hidden');
    log.info('text before');
    log.configure('debug', 'json');
    log.debug('json now');
    log.configure('error', 'text');
    log.warn('hidden again');
    log.error('text again');
    assert.deepEqual(written, [
      'istio-job-run: text before\n',
      `{"time":"${NOW.toISOString()}","level":"debug","msg":"json now"}\n`,
      'istio-job-run: text again\n',
    ]);
  });
});
