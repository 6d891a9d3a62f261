// The launcher's files compile only against the header their compile wrote (scripts/launcher-header.ts): one
// generated for anything else, as a stale copy would be, is refused with a line that says so.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { launcherCompile } from '../../../scripts/build.ts';
import { LAUNCHER_HEADER, launcherHeader } from '../../../scripts/launcher-header.ts';

const work = mkdtempSync(join(tmpdir(), 'istio-job-run-header-'));
after(() => rmSync(work, { recursive: true, force: true }));

const compile = (args: readonly string[]) =>
  spawnSync('gcc', ['-fsyntax-only', ...args], { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' });

test('the header this compile wrote: compiled', () => {
  const result = compile(launcherCompile('ld-this.so', work, []));
  assert.equal(result.status, 0, result.stderr);
});

test('another one in its place: refused, with the reason', () => {
  const args = launcherCompile('ld-this.so', work, []);
  writeFileSync(join(work, LAUNCHER_HEADER), launcherHeader('ld-other.so').text);
  const result = compile(args);
  assert.notEqual(result.status, 0);
  assert.match(result.stderr, /launcher-protocol\.h is not the one this compile wrote/);
});
