// The reader of common shapes against tree-sitter's bash grammar: every script it reads must be the parser's
// tree, node for node; what it does not know it must leave to the parser. The scripts: the proof's generated
// ones, loops built from the shapes it reads, and seeded strings of its alphabet and of what sits just outside it.
// The fast loop compares a seeded quarter of the generated sets, test:all every script (test/support/sample.ts).

import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { Language, Parser } from 'web-tree-sitter';
import { parseCommon } from '../../../../src/manifest/script/common.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { grammarFiles } from '../../../../src/manifest/script/shell-grammar.ts';
import { sameTree } from '../../../support/parser-tree.ts';
import { sample, sampleNote, sampling } from '../../../support/sample.ts';
import { DEFAULT_SEED, generateScripts } from '../../../support/script-grammar.ts';

let parser: Parser;

before(async () => {
  await loadShellParser();
  parser = new Parser();
  parser.setLanguage(await Language.load(grammarFiles().bash));
});

/** A small seeded generator (an LCG): the same strings on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

const RECIPE = [
  'set -e',
  'until curl -fsS http://127.0.0.1:15021/healthz/ready; do sleep 1; done',
  './run-7.sh --batch 7 | tee /tmp/log-7',
  'rc=$?',
  'curl -fsS -X POST http://127.0.0.1:15020/quitquitquit',
  'exit $rc',
].join('\n');

/** Words it reads, words it must not take for what they are not, and operators and blanks between them (\x7B: `{`). */
// biome-ignore format: a table, read by rows
const PIECES = [
  'a', 'b1', 'curl', '-fsS', '-X', 'POST', 'http://127.0.0.1:15020/quitquitquit', '--f', '--f=x', '-', '--', 'a-b',
  '.', '..', './x', '/a/b', 'a:b', ':', '_a', '0', '12', '-3', '007', '0x1', '1.5', 'x=y', 'A=1', 'X_1=2', '_=1',
  'a.b=1', 'x=', '=a', 'rc=$?', 'r="$a"', "r='a b'", 'x=$_', '$?', '$x', '$_', '$_a', '$1', '"$x"', '"a$x"',
  '"$x a"', '"$?"', '"$_"', '""', "''", "'$x'", "'q r'", '"a b"', 'do', 'done', 'until', 'while', 'if', 'then',
  'fi', 'test', 'export', ';', ';;', '\n', '&&', '||', '|', '|&', '&', ' ', '\t', '\r', 'a|b', 'a;b', 'a&&b',
  '$x$y', '"a""b"', '"$x"$y', 'x"y"', '$a/b', '#c', '>', '2>&1', '<<EOF', '$(a)', '`a`', '$\x7Ba}', 'a*', '~', '!',
  '{', '}', '[', ']', '\\', 'a@b', '%x', '+', ',', 'é',
];

function fuzz(count: number): string[] {
  const next = random(7);
  return Array.from({ length: count }, () => {
    let script = '';
    for (let i = 1 + Math.floor(next() * 10); i > 0; i--) {
      script += (script !== '' && next() < 0.6 ? ' ' : '') + (PIECES[Math.floor(next() * PIECES.length)] as string);
    }
    return script;
  });
}

/** Readiness loops among other statements, in the ways people space and end them. */
function loops(count: number): string[] {
  const next = random(11);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const commands = [
    'a',
    'curl -fsS http://127.0.0.1:15021/healthz/ready',
    'sleep 1',
    'x=1',
    'a | b',
    'a && b',
    'a || b && c',
    'rc=$?',
    'exit $rc',
    'echo "$a b"',
  ];
  const separators = ['; ', '\n', ';\n', '\n\n', ' ;\n  '];
  const some = (most: number): string => Array.from({ length: 1 + Math.floor(next() * most) }, () => pick(commands)).join(pick(separators));
  return Array.from({ length: count }, () => {
    const loop = `${pick(['until', 'while'])} ${some(2)}${pick(separators)}do${pick([' ', '\n'])}${some(3)}${pick(separators)}done`;
    return `${pick(['', '', ' ', '\n', '  \n'])}${pick(commands)}${pick(separators)}${loop}${pick(['', '', ';', '\n', ' ;', ' | tee x', ' && b'])}${pick(separators)}${pick(commands)}`;
  });
}

test("every script the reader reads is the parser's tree, node for node", (t) => {
  const PART = 4;
  const generated = {
    generated: generateScripts(DEFAULT_SEED, 1000).map((script) => script.script),
    loops: loops(3000),
    fuzz: fuzz(40_000),
  };
  const sets: Record<string, string[]> = { written: [RECIPE, `${RECIPE}\n`, `\n  ${RECIPE.replaceAll('\n', ';\n')} ;`] };
  for (const [name, scripts] of Object.entries(generated)) {
    sets[name] = sample(scripts, PART, name);
    t.diagnostic(`${name}: ${sampleNote(sets[name].length, scripts.length)}`);
  }
  // What each set must read, of a part as of the whole.
  const least = (whole: number): number => (sampling().whole ? whole : whole / PART / 2);
  const read: Record<string, number> = {};
  for (const [name, scripts] of Object.entries(sets)) {
    read[name] = 0;
    for (const script of scripts) {
      const mine = parseCommon(script);
      if (mine === undefined) continue;
      read[name]++;
      const tree = parser.parse(script);
      assert.ok(tree !== null, script);
      try {
        sameTree(mine, tree.rootNode, JSON.stringify(script));
      } finally {
        tree.delete();
      }
    }
  }
  // Each set reaches the reader: a reader that gave up on everything would pass the comparison.
  assert.equal(read.written, 3);
  assert.ok((read.generated ?? 0) > least(200), `generated: ${read.generated} read`);
  assert.ok((read.loops ?? 0) > least(2000), `loops: ${read.loops} read`);
  assert.ok((read.fuzz ?? 0) > least(1000), `fuzz: ${read.fuzz} read`);
});

test('what it does not read is left to the parser', () => {
  for (const script of [
    '',
    ' \n\t',
    'job # done',
    'job > /tmp/log',
    'job 2>&1',
    'x=$(date)',
    'x=`date`',
    'echo $\x7Bx}',
    'if a; then b; fi',
    'case $x in a) b;; esac',
    'for x in a b; do c; done',
    'f() { job; }',
    'cat <<EOF\nx\nEOF',
    'ls *.txt',
    'cd ~',
    'echo a\\ b',
    'job &',
    'x=1 job',
    '--x=y job',
    '_=1',
    'job\r\n',
    'echo é',
    'echo "a\\"b"',
    'echo "a\nb"',
    'until a; do b; done x',
    'a &&\nb',
    'a |\nb',
    `${'while a; do '.repeat(100_000)}b${'; done'.repeat(100_000)}`,
  ]) {
    assert.equal(parseCommon(script), undefined, JSON.stringify(script.slice(0, 40)));
  }
});
