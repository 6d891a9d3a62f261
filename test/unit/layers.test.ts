// src/ is in layers, and docs/DEVELOPING.md draws them: every folder of src/ is in its tree, and each file imports
// only from its own folder and the folders the tree lists above it (the leaves at the top import nothing of ours;
// main.ts and index.ts may import anything). manifest/ is in stages the same way, drawn under it in the tree.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { root } from '../support/process.ts';

const SRC = join(root, 'src');
const TOP = new Set(['main.ts', 'index.ts']);

const MANIFEST = join(SRC, 'manifest');

/** The tree of src/ in docs/DEVELOPING.md. */
function drawnTree(): string {
  const doc = readFileSync(join(root, 'docs', 'DEVELOPING.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Where the code lives'));
  return section.slice(section.indexOf('```\nsrc/'), section.indexOf('\ntest/'));
}

/** The folders drawn at an indent (2: src/'s, 4: manifest/'s stages), in the order the tree lists them. */
function drawnFolders(indent: number, tree = drawnTree()): string[] {
  return [...tree.matchAll(new RegExp(`^ {${indent}}([a-z-]+)/ `, 'gm'))].map((match) => match[1] as string);
}

/** The stages of manifest/: the folders drawn under it. */
function drawnStages(): string[] {
  const tree = drawnTree();
  const below = tree.slice(tree.indexOf('\n  manifest/ ') + 1);
  return drawnFolders(4, below.slice(0, below.search(/\n {2}\S/)));
}

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (/\.ts$/.test(name) && !name.endsWith('.d.ts')) yield path;
  }
}

/** The files of ours a file imports. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((match) =>
    normalize(join(dirname(file), match[1] as string)),
  );
}

const folders = drawnFolders(2);
const stages = drawnStages();
/** A file's layer: 0 for a leaf at the top, then each folder's place in the tree, main.ts and index.ts last. */
function layer(file: string): number {
  const path = relative(SRC, file);
  if (!path.includes('/')) return TOP.has(path) ? folders.length + 1 : 0;
  const index = folders.indexOf(path.split('/')[0] as string);
  return index < 0 ? Number.NaN : index + 1;
}

/** A file's stage in manifest/: its folder's place under manifest/ in the tree (NaN outside manifest/). */
function stage(file: string): number {
  const path = relative(MANIFEST, file);
  return path.startsWith('..') ? Number.NaN : stages.indexOf(path.split('/')[0] as string);
}

/** The folder of src/ a file is in ('' for the leaves and main.ts and index.ts). */
const topFolder = (file: string): string => relative(SRC, dirname(file)).split('/')[0] as string;

const subfolders = (dir: string): string[] => readdirSync(dir).filter((name) => statSync(join(dir, name)).isDirectory());

test("docs/DEVELOPING.md's tree names every folder of src/, and nothing else", () => {
  assert.deepEqual([...folders].sort(), subfolders(SRC).sort());
});

test("docs/DEVELOPING.md's tree names every stage of src/manifest/, and nothing else; no file sits outside one", () => {
  assert.deepEqual([...stages].sort(), subfolders(MANIFEST).sort());
  assert.deepEqual(
    readdirSync(MANIFEST).filter((name) => !stages.includes(name)),
    [],
  );
});

test('the unit tests of src/manifest/ mirror its stages', () => {
  const tests = join(root, 'test', 'unit', 'manifest');
  assert.deepEqual(
    subfolders(tests).filter((name) => !stages.includes(name)),
    [],
  );
});

test('every import goes to the same layer or one above it in the tree', () => {
  const wrong: string[] = [];
  for (const file of files(SRC)) {
    for (const target of imports(file)) {
      const [from, to] = [layer(file), layer(target)];
      const sameFolder = topFolder(file) === topFolder(target);
      if (!sameFolder && !(to < from)) wrong.push(`${relative(root, file)} imports ${relative(root, target)}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('every import inside src/manifest/ goes to the same stage or one above it in the tree', () => {
  const wrong: string[] = [];
  for (const file of files(MANIFEST)) {
    for (const target of imports(file)) {
      const [from, to] = [stage(file), stage(target)];
      if (Number.isNaN(to) || from === to) continue;
      if (!(to < from)) wrong.push(`${relative(root, file)} imports ${relative(root, target)}`);
    }
  }
  assert.deepEqual(wrong, []);
});

/** The files of the shell model in the order docs/DEVELOPING.md lists them under script/: each imports only those before it. */
function drawnModel(): string[] {
  const tree = drawnTree();
  const entry = tree.slice(tree.indexOf('\n    script/ '), tree.indexOf('\n    pod/ '));
  const order = entry.slice(entry.indexOf('each file importing only those before it:'));
  return [...order.matchAll(/([a-z-]+\.ts) \(/g)].map((match) => match[1] as string);
}

test("the shell model's files import one way: each only from those docs/DEVELOPING.md lists before it", () => {
  const model = drawnModel();
  assert.deepEqual(model, ['state.ts', 'arithmetic.ts', 'words.ts', 'builtins.ts', 'outcome.ts']);
  const script = join(MANIFEST, 'script');
  const wrong: string[] = [];
  model.forEach((name, index) => {
    for (const target of imports(join(script, name))) {
      const at = model.indexOf(relative(script, target));
      if (at >= index) wrong.push(`${name} imports ${relative(script, target)}`);
    }
  });
  assert.deepEqual(wrong, []);
});
