// The bundle's NOTICES (scripts/notices.ts): a part without a licence text, or a file made of a part nobody
// described, stops the build; npm package folders come from esbuild's metafile inputs (scripts/provenance.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { missingNotices, renderNotices } from '../../scripts/notices.ts';
import { npmPackageDirs, type BundleFile, type Component } from '../../scripts/provenance.ts';

const part = (ref: string, text: string): Component => ({
  ref,
  kind: 'npm',
  name: ref,
  version: '1.0.0',
  source: 'here',
  texts: text === '' ? [] : [{ from: `${ref}/LICENSE`, text }],
});
const file = (path: string, ...madeOf: string[]): BundleFile => ({ path, madeOf, sources: [] });

describe('missingNotices', () => {
  const parts = [part('a', 'MIT text'), part('blank', '  \n'), part('none', '')];
  const rows: [name: string, files: BundleFile[], missing: string[]][] = [
    ['every part has a text', [file('x', 'a'), file('NOTICES')], []],
    ['a part whose only text is blank', [file('x', 'a', 'blank')], ['x: blank has no licence text']],
    ['a part without a text', [file('y', 'none')], ['y: none has no licence text']],
    ['a part nobody described', [file('z', 'ghost')], ['z: ghost is not a known component']],
  ];
  for (const [name, files, missing] of rows) {
    test(name, () => assert.deepEqual(missingNotices(files, parts), missing));
  }

  test('renderNotices refuses a bundle with a part without a notice, naming it', () => {
    assert.throws(() => renderNotices([file('y', 'none')], parts, 't'), /y: none has no licence text/);
  });

  test('renderNotices prints a text that two parts share once, and points at it', () => {
    const text = renderNotices([file('x', 'a', 'b')], [part('a', 'same'), part('b', 'same')], 't');
    assert.equal(text.split('\nsame\n').length - 1, 1);
    assert.match(text, /b\/LICENSE: the same text as in the section of a -----/);
  });
});

describe('npmPackageDirs, from esbuild metafile inputs', () => {
  const rows: [inputs: string[], dirs: string[]][] = [
    [['src/main.ts'], []],
    [['node_modules/undici/index.js', 'node_modules/undici/lib/core.js'], ['node_modules/undici']],
    [['node_modules/@sec-ant/readable-stream/dist/index.js'], ['node_modules/@sec-ant/readable-stream']],
    [['node_modules/npm-run-path/node_modules/path-key/index.js'], ['node_modules/npm-run-path/node_modules/path-key']],
    [
      ['node_modules/b/x.js', 'node_modules/a/y.js'],
      ['node_modules/a', 'node_modules/b'],
    ],
  ];
  for (const [inputs, dirs] of rows) {
    test(inputs.join(' '), () => assert.deepEqual(npmPackageDirs(inputs), dirs));
  }
});
