// The manifest tools on large and deeply nested YAML, through the built executable: a map of 200,000 keys is
// checked in one pass, and nesting deeper than the parser goes is one line naming the file, exit 2, no stack.
// Each takes seconds of parsing, so they run here rather than in the unit loop.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { start, WRAPPER } from '../support/process.ts';
import { unprofiled } from '../support/manifest.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-manifest-size-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The tool run on a file of TEXT, named NAME. */
async function tool(
  mode: string,
  name: string,
  text: string,
): Promise<{ file: string; code: number | null; stdout: string; stderr: string }> {
  const file = join(scratch, name);
  writeFileSync(file, text);
  const result = await start(WRAPPER, [mode, file], { timeoutMs: 90_000 }).finished;
  return { file, code: result.code, stdout: result.stdout, stderr: result.stderr };
}

test('a map of 200,000 keys parses and checks in one pass (a quadratic check of unique keys would take minutes)', async () => {
  const keys = Array.from({ length: 200_000 }, (_, i) => `  k${i}: v`).join('\n');
  const { code, stdout, stderr } = await tool('--check', 'big.yaml', `kind: ConfigMap\nmetadata: {name: big}\ndata:\n${keys}\n`);
  assert.deepEqual({ code, stdout, stderr: unprofiled(stderr) }, { code: 0, stdout: '', stderr: '' });
});

test('100,000 [ or nested maps: one line naming the file, exit 2, no stack', async () => {
  const deep = {
    'brackets.yaml': '['.repeat(100_000),
    'closed.yaml': `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
    'maps.yaml': `${'{a: '.repeat(100_000)}1${'}'.repeat(100_000)}`,
    'block.yaml': Array.from({ length: 3_000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n'),
  };
  for (const mode of ['--check', '--inject']) {
    for (const [name, text] of Object.entries(deep)) {
      const { file, code, stdout, stderr: said } = await tool(mode, name, text);
      const stderr = unprofiled(said);
      assert.equal(code, 2, `${mode} ${name}: ${stderr}`);
      assert.equal(stdout, '');
      assert.equal(stderr.trim().split('\n').length, 1, stderr);
      assert.ok(stderr.startsWith(`istio-job-run: ${file}:`) && stderr.trimEnd().endsWith(': not YAML: nested too deeply'), stderr);
    }
  }
});
