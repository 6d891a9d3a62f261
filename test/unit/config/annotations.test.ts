// The annotations file's format: Go's strconv.Quote, as kubelet writes a downwardAPI volume.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseAnnotations, unquote } from '../../../src/config/annotations.ts';

describe('unquote: Go strconv.Quote as kubelet writes annotation values', () => {
  const rows: [quoted: string, value: string | undefined][] = [
    ['"plain"', 'plain'],
    ['""', ''],
    ['"{\\"containers\\":[\\"istio-proxy\\"]}"', '{"containers":["istio-proxy"]}'],
    ['"a\\nb\\tc\\\\d"', 'a\nb\tc\\d'],
    ['"\\a\\b\\f\\r\\v"', '\x07\b\f\r\v'],
    ['"\\x41\\u00e9\\U0001F600"', 'Aé😀'],
    ['"\\xc3\\xa9"', 'é'],
    ['"\\101"', 'A'],
    ['"é unquoted UTF-8"', 'é unquoted UTF-8'],
    ['plain', undefined],
    ['"open', undefined],
    ['"bad \\q escape"', undefined],
    ['"inner " quote"', undefined],
    ['"\\x4"', undefined],
  ];
  for (const [quoted, value] of rows) {
    test(`${quoted} -> ${JSON.stringify(value)}`, () => assert.equal(unquote(quoted), value));
  }

  test('a file: one annotation a line, bad lines named by number', () => {
    const parsed = parseAnnotations('a.io/x="1"\nb.io/y="two=2"\n\nnonsense\n=""\n');
    assert.deepEqual(
      [...parsed.values],
      [
        ['a.io/x', '1'],
        ['b.io/y', 'two=2'],
      ],
    );
    assert.deepEqual(parsed.errors, ['line 4: not key="value"', 'line 5: not key="value"']);
  });
});
