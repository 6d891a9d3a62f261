// --check --format sarif through the built executable, judged by Microsoft's SARIF validator
// (@microsoft/sarif-multitool, `validate`, its .NET binary from the npm package): the logs of the repository's
// own manifests, of a Job with findings, of stdin, and of the real manifests of ../shared/corpus and
// ../shared/corpus2 (skipped, with the reason, where they are absent) pass with no error.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { MIGRATE_JOB } from '../support/manifest.ts';
import { root, run, start } from '../support/process.ts';

/** The validator's own executable: the package's main export is its path for this platform. */
const require = createRequire(import.meta.url);
const VALIDATOR = require('@microsoft/sarif-multitool') as string;
/** The one warning every log gets: the project has no public web address for informationUri. */
const EXPECTED_WARNINGS = new Set(['SARIF2005']);

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-sarif-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

interface Verdict {
  readonly errors: readonly string[];
  readonly warnings: readonly string[];
}

/** The validator's results for one log: the messages of its errors, and the rule ids of its warnings. */
async function validate(log: string): Promise<Verdict> {
  const input = join(scratch, `${readdirSync(scratch).length}.sarif`);
  const output = `${input}.validation.sarif`;
  writeFileSync(input, log);
  const running = start(VALIDATOR, ['validate', input, '--output', output], {
    env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1' },
    timeoutMs: 120_000,
  });
  running.process.stdin?.end();
  const finished = await running.finished;
  assert.equal(finished.code, 0, `${finished.stdout}\n${finished.stderr}`);
  const results = (JSON.parse(readFileSync(output, 'utf8')).runs[0].results ?? []) as {
    ruleId: string;
    level?: string;
    message: { text?: string; id?: string; arguments?: string[] };
  }[];
  const lines = finished.stdout.split('\n');
  return {
    errors: results
      .filter((result) => result.level === 'error')
      .map((result) => lines.find((line) => line.includes(result.ruleId)) ?? JSON.stringify(result)),
    warnings: results.filter((result) => result.level !== 'error' && result.level !== 'note').map((result) => result.ruleId),
  };
}

/** --check --format sarif over FILES in DIR (so the log's URIs are relative), and the log's findings. */
async function sarifOf(dir: string, files: readonly string[], input?: string): Promise<{ log: string; results: number }> {
  const result = await run(['--check', ...files, '--format', 'sarif', '--failure-threshold', 'none'], {
    cwd: dir,
    ...(input === undefined ? {} : { input }),
  });
  assert.equal(result.code, 0, result.stderr);
  return { log: result.stdout, results: JSON.parse(result.stdout).runs[0].results.length };
}

async function assertValid(log: string): Promise<void> {
  const verdict = await validate(log);
  assert.deepEqual(verdict.errors, []);
  assert.deepEqual(
    verdict.warnings.filter((id) => !EXPECTED_WARNINGS.has(id)),
    [],
  );
}

describe("SARIF that Microsoft's validator passes", () => {
  test("the repository's manifests and a Job with findings, given by relative path", async () => {
    writeFileSync(join(scratch, 'migrate.yaml'), MIGRATE_JOB);
    const k8s = join(root, 'docker', 'k8s');
    const ownFiles = readdirSync(k8s).filter((file) => /\.ya?ml$/.test(file));
    const own = await sarifOf(k8s, ownFiles);
    assert.equal(own.results, 0, "the repository's manifests check clean");
    await assertValid(own.log);
    const found = await sarifOf(scratch, ['migrate.yaml']);
    assert.ok(found.results > 0);
    assert.match(found.log, /"uri": "migrate\.yaml"/);
    await assertValid(found.log);
  });

  test('stdin: results without a location', async () => {
    const stdin = await sarifOf(scratch, ['-'], MIGRATE_JOB);
    assert.ok(stdin.results > 0);
    await assertValid(stdin.log);
  });

  for (const name of ['corpus', 'corpus2']) {
    const dir = join(root, '..', 'shared', name);
    const available = existsSync(dir);
    test(`the real manifests of ../shared/${name}`, {
      skip: !available && `${dir} is missing (it comes with the project's CI)`,
    }, async () => {
      const files = readdirSync(dir).filter((file) => /\.ya?ml$/.test(file));
      const corpus = await sarifOf(dir, files);
      assert.ok(corpus.results > 0);
      await assertValid(corpus.log);
    });
  }
});
