import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_DURATION_MS, formatDuration, parseDuration } from '../../../src/config/duration.ts';
import { quote } from '../../../src/quote.ts';

const EXAMPLES = '(examples: 500ms, 30s, 2m)';

describe('parseDuration accepts', () => {
  const rows: [text: string, ms: number][] = [
    ['500ms', 500],
    ['30s', 30_000],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['1m30s', 90_000],
    ['1h2m3s4ms', 3_723_004],
    ['1.5s', 1_500],
    ['.5s', 500],
    ['0.25m', 15_000],
    ['30', 30_000],
    ['0', 0],
    ['1.5', 1_500],
    ['.5', 500],
    ['1.4ms', 1],
    ['  30s  ', 30_000],
    ['\t2m\n', 120_000],
    ['2147483.647s', MAX_DURATION_MS],
  ];
  for (const [text, ms] of rows) {
    test(`${JSON.stringify(text)} is ${ms}ms`, () => {
      assert.equal(parseDuration(text), ms);
    });
  }
});

describe('parseDuration rejects what is not a duration', () => {
  const rows = ['', '   ', 'soon', '-1s', '5x', '1s2', 'ms', 's', '1e3', '1 s', '1S', '1.s', '1..5s', '30sec', '+5s', '1m 30s'];
  for (const text of rows) {
    test(JSON.stringify(text), () => {
      assert.throws(() => parseDuration(text), { message: `${JSON.stringify(text)} is not a duration ${EXAMPLES}` });
    });
  }
});

describe('parseDuration rejects what no timer can hold', () => {
  const rows = ['999999999h', '2147483.648s', '2147484', '1'.repeat(400)];
  for (const text of rows) {
    test(quote(text), () => {
      assert.throws(() => parseDuration(text), { message: `${quote(text)} is too long (at most 24d 20h)` });
    });
  }
});

describe('formatDuration', () => {
  const rows: [ms: number, text: string][] = [
    [0, '0ms'],
    [1, '1ms'],
    [850, '850ms'],
    [1_000, '1s'],
    [1_200, '1.2s'],
    [1_234, '1.23s'],
    [30_000, '30s'],
    [60_000, '1m'],
    [90_000, '1.5m'],
    [3_600_000, '1h'],
    [5_400_000, '1.5h'],
    [86_400_000, '1d 0h'],
    [MAX_DURATION_MS, '24d 20h'],
  ];
  for (const [ms, text] of rows) {
    test(`${ms}ms reads ${text}`, () => {
      assert.equal(formatDuration(ms), text);
    });
  }
});

describe('quote', () => {
  const rows: [text: string, quoted: string][] = [
    ['', '""'],
    [' a b ', '" a b "'],
    ['tab\there', '"tab\\there"'],
    ['x'.repeat(80), `"${'x'.repeat(80)}"`],
    ['x'.repeat(81), `"${'x'.repeat(77)}..."`],
  ];
  for (const [text, quoted] of rows) {
    test(`${JSON.stringify(text.slice(0, 12))} (length ${text.length})`, () => {
      assert.equal(quote(text), quoted);
    });
  }
});

describe("parseDuration with Go's units (scuttle's variables)", () => {
  const go = { go: true } as const;
  const accepted: [text: string, ms: number][] = [
    ['300ms', 300],
    ['1.5h', 5_400_000],
    ['1h2m3s4ms', 3_723_004],
    ['1000us', 1],
    ['1001us', 2],
    ['3000us', 3],
    ['1500µs', 2], // U+00B5 micro sign
    ['1500μs', 2], // U+03BC Greek mu
    ['1ns', 1],
    ['1000000ns', 1],
    ['1000001ns', 2],
    ['.5us', 1],
    ['1s1ns', 1_001],
    ['1.4ms', 2], // rounded up, where the project's own syntax rounds to the nearest
    ['0.0001s', 1],
    ['0', 0],
    ['0s', 0],
    ['0ns', 0],
    ['15', 15_000],
    ['2147483.647s', MAX_DURATION_MS],
  ];
  for (const [text, ms] of accepted) {
    test(`${JSON.stringify(text)} is ${ms}ms`, () => {
      assert.equal(parseDuration(text, go), ms);
    });
  }

  for (const text of ['1us', '5ns', '2µs']) {
    test(`${JSON.stringify(text)} is not a duration in the project's own syntax`, () => {
      assert.throws(() => parseDuration(text), { message: `${JSON.stringify(text)} is not a duration ${EXAMPLES}` });
    });
  }

  for (const text of ['', '-1s', '+5s', '1.s', '1 s', '5x', '1US', '1mus', 'us', '1s 1ns']) {
    test(`${JSON.stringify(text)} is not a duration even in Go's syntax`, () => {
      assert.throws(() => parseDuration(text, go), { message: `${JSON.stringify(text)} is not a duration ${EXAMPLES}` });
    });
  }

  for (const text of ['2147483.6471s', '2147483647001us', '999999999h']) {
    test(`${JSON.stringify(text)} is too long`, () => {
      assert.throws(() => parseDuration(text, go), { message: `${JSON.stringify(text)} is too long (at most 24d 20h)` });
    });
  }
});
