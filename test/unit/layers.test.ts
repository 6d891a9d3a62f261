// src/ is in layers, and docs/DEVELOPING.md draws them: every folder of src/ is in its tree, and each file imports
// only from its own folder and the folders the tree lists above it (the leaves at the top import nothing of ours;
// main.ts and index.ts may import anything).

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { root } from '../support/process.ts';

const SRC = join(root, 'src');
const TOP = new Set(['main.ts', 'index.ts']);

/** The folders of the tree in docs/DEVELOPING.md, in the order it lists them. */
function drawnFolders(): string[] {
  const doc = readFileSync(join(root, 'docs', 'DEVELOPING.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Where the code lives'));
  const tree = section.slice(section.indexOf('```\nsrc/'), section.indexOf('\ntest/'));
  return [...tree.matchAll(/^ {2}([a-z-]+)\/ /gm)].map((match) => match[1] as string);
}

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (/\.ts$/.test(name) && !name.endsWith('.d.ts')) yield path;
  }
}

const folders = drawnFolders();
/** A file's layer: 0 for a leaf at the top, then each folder's place in the tree, main.ts and index.ts last. */
function layer(file: string): number {
  const path = relative(SRC, file);
  if (!path.includes('/')) return TOP.has(path) ? folders.length + 1 : 0;
  const index = folders.indexOf(path.split('/')[0] as string);
  return index < 0 ? Number.NaN : index + 1;
}

test("docs/DEVELOPING.md's tree names every folder of src/, and nothing else", () => {
  const actual = readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isDirectory());
  assert.deepEqual([...folders].sort(), actual.sort());
});

test('every import goes to the same layer or one above it in the tree', () => {
  const wrong: string[] = [];
  for (const file of files(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = normalize(join(dirname(file), match[1] as string));
      const [from, to] = [layer(file), layer(target)];
      const sameFolder = dirname(file) === dirname(target);
      if (!sameFolder && !(to < from)) wrong.push(`${relative(root, file)} imports ${relative(root, target)}`);
    }
  }
  assert.deepEqual(wrong, []);
});
