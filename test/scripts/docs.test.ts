import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { constructsTable, DOCS, kindsTable, optionsTable, rulesTable, withTables } from '../../scripts/docs.ts';
import { CONSTRUCTS } from '../../src/manifest/script/dialect.ts';
import { RULE_SUMMARIES } from '../../src/manifest/check/rules.ts';
import { SPECS } from '../../src/config/options.ts';
import { SIDECAR_KINDS, type SidecarKind } from '../../src/config/kinds.ts';
import { root } from '../support/process.ts';

/** The cells of a Markdown table row, with escaped pipes kept inside their cell. */
const cells = (line: string): string[] =>
  line
    .slice(2, -2)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());

const region = (name: string, body: string): string => `<!-- generated: ${name} (npm run docs) -->\n${body}\n<!-- end: ${name} -->`;

const README_TABLES = (DOCS.find((doc) => doc.file === 'README.md') ?? assert.fail('DOCS lists README.md')).tables;

describe('the generated tables of the docs', () => {
  for (const { file, tables } of DOCS) {
    test(`${file} holds what npm run docs writes (else: npm run docs, and commit)`, () => {
      const text = readFileSync(join(root, file), 'utf8');
      assert.equal(withTables(text, file, tables), text);
    });
  }

  test('the rules table has one row per rule of --check, with its level', () => {
    const rows = rulesTable().split('\n').slice(2);
    assert.deepEqual(
      rows.map((line) => cells(line).slice(0, 2)),
      Object.entries(RULE_SUMMARIES).map(([rule, { level }]) => [`<a id="rule-${rule}"></a>\`${rule}\``, level.replaceAll('|', '\\|')]),
    );
  });

  test("the constructs table has one row per construct of the shells' table, with its fix", () => {
    const rows = constructsTable().split('\n').slice(2);
    assert.deepEqual(
      rows.map((line) => [cells(line)[0], cells(line).at(-1)]),
      Object.values(CONSTRUCTS).map(({ written, fix }) => [`\`${written.replaceAll('|', '\\|')}\``, fix.replaceAll('|', '\\|')]),
    );
  });

  test('the options table has one row per option, each with its flag, variable, default and help', () => {
    const rows = optionsTable().split('\n').slice(2);
    assert.equal(rows.length, SPECS.length);
    for (const [i, [, spec]] of SPECS.entries()) {
      const [flag = '', env = '', def = '', meaning = ''] = cells(rows[i] ?? '');
      assert.equal(cells(rows[i] ?? '').length, 4, rows[i] ?? '');
      assert.ok(flag.replaceAll('\\|', '|').includes(spec.usage), flag);
      assert.ok(env.includes(spec.env), env);
      assert.ok(def.includes(spec.defaultText), def);
      assert.equal(meaning.replaceAll('\\|', '|'), spec.help);
    }
  });

  test('the kinds table has one row per kind, with its own ports and paths', () => {
    const rows = kindsTable().split('\n').slice(2);
    assert.equal(rows.length, SIDECAR_KINDS.length);
    for (const [i, kind] of (SIDECAR_KINDS as readonly SidecarKind[]).entries()) {
      const [name = '', waits = '', stop = ''] = cells(rows[i] ?? '');
      assert.equal(cells(rows[i] ?? '').length, 5, rows[i] ?? '');
      assert.equal(name, `\`${kind.name}\``);
      const quit = kind.listeners[kind.quit.listener];
      assert.ok(stop.startsWith(`\`127.0.0.1:${quit?.port}${kind.quit.path}\``), stop);
      // A kind whose operator lists its quit URLs in a variable: the variable is named in the same cell.
      const variable = kind.template.quitUrlsVariable;
      assert.equal(variable === undefined ? stop.includes(';') : stop.includes(`\`${variable}\``), variable !== undefined, stop);
      const ready = kind.ready === undefined ? undefined : kind.listeners[kind.ready.listener];
      assert.equal(waits.startsWith(`\`127.0.0.1:${ready?.port}${kind.ready?.path}\``), ready !== undefined, waits);
    }
  });

  test('a drifted table is rewritten, and the text around it is kept', () => {
    const stale = Object.keys(README_TABLES)
      .map((name) => region(name, '| flag |\n| --- |\n| `--gone` |'))
      .join('\nprose between\n');
    const fresh = withTables(`before\n${stale}\nafter\n`, 'X.md', README_TABLES);
    assert.notEqual(fresh, stale);
    assert.ok(!fresh.includes('--gone'));
    assert.ok(fresh.startsWith('before\n') && fresh.endsWith('\nafter\n') && fresh.includes('\nprose between\n'));
    assert.equal(withTables(fresh, 'X.md', README_TABLES), fresh);
  });

  test('a file without a marked region is an error naming the file and the marker', () => {
    assert.throws(
      () => withTables(region('options', ''), 'X.md', README_TABLES),
      /X\.md has no "<!-- generated: sidecar-kinds \(npm run docs\) -->"/,
    );
  });
});
