// The plain copy of a parsed script against the parser's own tree: every node, in the same order, with the same
// type, field, text, positions and error marks, over the proof's generated scripts and scripts the parser rejects.

import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { Language, Parser } from 'web-tree-sitter';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { grammarFiles } from '../../../../src/manifest/script/shell-grammar.ts';
import { plainTree, useCursorBinding } from '../../../../src/manifest/script/syntax.ts';
import { sameTree } from '../../../support/parser-tree.ts';
import { DEFAULT_SEED, generateScripts } from '../../../support/script-grammar.ts';

let parser: Parser;

before(async () => {
  await loadShellParser();
  parser = new Parser();
  parser.setLanguage(await Language.load(grammarFiles().bash));
});

const WRITTEN = [
  '',
  'echo "héllo wörld ✓" && curl -X POST http://127.0.0.1:15020/quitquitquit # 終了',
  'if true; then echo "unterminated',
  'if [ -f x ]; then\n  job\n',
  'case $x in a) job;; esac; done',
  'cat <<EOF\nline $HOME\nEOF\njob | tee log; rc=$?\nexit $rc',
  'trap \'curl -sf -XPOST localhost:15020/quitquitquit\' EXIT\nf() { job "$@"; }; f a b &\nwait $!',
  'for u in $URLS; do wget -qO- --post-data= "$u"; done; x=$(echo $?); exit "${x:-1}"',
  'a && b || ! c | d; (e; f) & { g; }',
  'job |',
  'echo $(date; ( job',
  'x=`date`; echo "a $(b `c`) d" <<EOF\n$(e)\nEOF',
];

test('the plain tree of each script is the parser tree, node for node', () => {
  const scripts = [...WRITTEN, ...generateScripts(DEFAULT_SEED, 300).map((generated) => generated.script)];
  let nodes = 0;
  let rejected = 0;
  for (const script of scripts) {
    const tree = parser.parse(script);
    assert.ok(tree !== null, script);
    try {
      nodes += sameTree(plainTree(tree, script), tree.rootNode);
      if (tree.rootNode.hasError) rejected++;
    } finally {
      tree.delete();
    }
  }
  assert.ok(nodes > 10_000, `${nodes} nodes compared`);
  assert.ok(rejected >= 3, `${rejected} scripts with errors compared`);
});

test('descendantsOfType: every node of the type in the order of the text, as the parser gives them', () => {
  const script = WRITTEN.join('\n');
  const tree = parser.parse(script);
  assert.ok(tree !== null);
  try {
    const plain = plainTree(tree, script);
    for (const type of ['command', 'command_substitution', 'heredoc_start', 'word', 'string']) {
      assert.deepEqual(
        plain.descendantsOfType(type).map((node) => node.startIndex),
        tree.rootNode.descendantsOfType(type).map((node) => node?.startIndex),
        type,
      );
    }
  } finally {
    tree.delete();
  }
});

test("a binding without the cursor's functions (another web-tree-sitter) is refused, naming what it lacks", () => {
  assert.throws(
    () => useCursorBinding({ _ts_tree_root_node_wasm: () => 0 }),
    /binding has no _ts_tree_cursor_new_wasm, .*_ts_tree_cursor_end_index_wasm$/,
  );
});
