// A tree of plain nodes (syntax.ts: copied from the parser's tree, or read by common.ts) against the parser's
// own tree: every node in the same order, with the same type, field, text, positions and error marks.

import assert from 'node:assert/strict';
import type { Node } from 'web-tree-sitter';
import type { Syntax } from '../../src/manifest/script/syntax.ts';

/** Asserts that PLAIN is the parser's NODE, node for node; the number of nodes compared. */
export function sameTree(plain: Syntax, node: Node, path = ''): number {
  const where = `${path}/${node.type}@${node.startIndex}`;
  assert.equal(plain.type, node.type, where);
  assert.equal(plain.isNamed, node.isNamed, `${where}: isNamed`);
  assert.equal(plain.isMissing, node.isMissing, `${where}: isMissing`);
  assert.equal(plain.hasError, node.hasError, `${where}: hasError`);
  assert.equal(plain.hasSubstitution, node.descendantsOfType('command_substitution').length > 0, `${where}: hasSubstitution`);
  assert.equal(plain.startIndex, node.startIndex, `${where}: startIndex`);
  assert.equal(plain.endIndex, node.endIndex, `${where}: endIndex`);
  assert.deepEqual(plain.startPosition, node.startPosition, `${where}: startPosition`);
  assert.equal(plain.text, node.text, `${where}: text`);
  assert.equal(plain.childCount, node.childCount, `${where}: childCount`);
  assert.equal(plain.namedChildCount, node.namedChildCount, `${where}: namedChildCount`);
  // The parser's nextSibling passes over a node of no width (a missing token the parser put in); the copy does not.
  const next = plain.nextSibling?.startIndex === plain.nextSibling?.endIndex && node.nextSibling === null ? null : plain.nextSibling;
  assert.equal(next?.startIndex, node.nextSibling?.startIndex, `${where}: nextSibling`);
  let count = 1;
  for (let i = 0; i < node.childCount; i++) {
    assert.equal(plain.fieldNameForChild(i), node.fieldNameForChild(i), `${where}: field of child ${i}`);
    count += sameTree(plain.child(i) as Syntax, node.child(i) as Node, where);
  }
  for (const field of ['name', 'argument', 'condition', 'body', 'value', 'variable', 'left', 'right', 'operator']) {
    assert.deepEqual(
      plain.childrenForFieldName(field).map((child) => child.startIndex),
      node.childrenForFieldName(field).map((child) => child?.startIndex),
      `${where}: children of field ${field}`,
    );
    assert.equal(plain.childForFieldName(field)?.startIndex, node.childForFieldName(field)?.startIndex, `${where}: field ${field}`);
  }
  return count;
}
