// test/support/sample.ts: the part of a slow table the fast loop runs.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sample, sampleNote, samplingOf } from '../../support/sample.ts';

const ROWS = Array.from({ length: 200 }, (_, index) => index);

test('TEST_SAMPLE: unset or empty is seed 1, a number its seed, "whole" every row; anything else names the variable', () => {
  assert.deepEqual(samplingOf(undefined), { whole: false, seed: 1 });
  assert.deepEqual(samplingOf(''), { whole: false, seed: 1 });
  assert.deepEqual(samplingOf('42'), { whole: false, seed: 42 });
  assert.deepEqual(samplingOf('whole'), { whole: true });
  assert.throws(() => samplingOf('all'), /^Error: TEST_SAMPLE="all": "whole" or a whole number \(a seed\)$/);
});

test('a part is about one in EVERY, in order, the same for a seed and salt, another for another seed or salt', () => {
  const part = sample(ROWS, 4, 'kinds', { whole: false, seed: 1 });
  assert.ok(part.length > 25 && part.length < 75, `${part.length}`);
  assert.deepEqual(
    part,
    [...part].sort((a, b) => a - b),
  );
  assert.deepEqual(sample(ROWS, 4, 'kinds', { whole: false, seed: 1 }), part);
  assert.notDeepEqual(sample(ROWS, 4, 'kinds', { whole: false, seed: 2 }), part);
  assert.notDeepEqual(sample(ROWS, 4, 'corpus', { whole: false, seed: 1 }), part);
});

test('whole takes every row; a part of a short list is never empty', () => {
  assert.deepEqual(sample(ROWS, 4, 'kinds', { whole: true }), ROWS);
  for (let seed = 0; seed < 50; seed++) assert.equal(sample([7], 1000, 'one', { whole: false, seed }).length, 1);
  assert.deepEqual(sample([], 4, 'none', { whole: false, seed: 1 }), []);
});

test('the note says which part ran and how to run all', () => {
  assert.equal(sampleNote(3, 12, { whole: false, seed: 5 }), '3 of 12 rows, seed 5 (TEST_SAMPLE=whole runs all)');
  assert.equal(sampleNote(12, 12, { whole: true }), 'every row (12)');
});
