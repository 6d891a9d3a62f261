// The pre-commit hook of .pre-commit-hooks.yaml, run by Debian's pre-commit (`pre-commit try-repo`) in a
// temporary git repository, with the built executable on PATH as the hook expects it.

import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { need } from '../../scripts/tools.ts';
import { MIGRATE_JOB } from '../support/manifest.ts';
import { cleanEnv, root, start, WRAPPER } from '../support/process.ts';

const HOOKS = join(root, '.pre-commit-hooks.yaml');
const hookId = (parse(readFileSync(HOOKS, 'utf8')) as { id: string }[])[0]?.id ?? '';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-pre-commit-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const hookRepo = join(scratch, 'hooks');
const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.invalid',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.invalid',
};
/** PATH with the built executable first, as a machine with the release installed has it. */
const env = (path = `${dirname(WRAPPER)}:${process.env['PATH'] ?? ''}`) =>
  cleanEnv({ ...GIT_IDENTITY, PATH: path, PRE_COMMIT_HOME: join(scratch, 'cache'), PRE_COMMIT_COLOR: 'never' });

async function git(cwd: string, ...args: string[]): Promise<void> {
  const result = await start('git', args, { cwd, env: env(), timeoutMs: 30_000 }).finished;
  assert.equal(result.code, 0, `git ${args.join(' ')}: ${result.stderr}`);
}

/** A repository holding FILES, all added, and pre-commit try-repo of the hook over every file in it. */
async function tryHook(name: string, files: Record<string, string>, path?: string) {
  const repo = join(scratch, name);
  mkdirSync(repo);
  await git(repo, 'init', '-q');
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, file)), { recursive: true });
    writeFileSync(join(repo, file), text);
  }
  await git(repo, 'add', '.');
  return start('pre-commit', ['try-repo', hookRepo, hookId, '--all-files'], { cwd: repo, env: env(path), timeoutMs: 90_000 }).finished;
}

const GOOD = readFileSync(join(root, 'docker', 'k8s', 'job.yaml'), 'utf8');
const WORKFLOW = 'name: ci\non: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n    - run: make\n';

describe('pre-commit try-repo with the hook of .pre-commit-hooks.yaml', () => {
  before(async () => {
    need('pre-commit', 'git');
    mkdirSync(hookRepo);
    copyFileSync(HOOKS, join(hookRepo, '.pre-commit-hooks.yaml'));
    await git(hookRepo, 'init', '-q');
    await git(hookRepo, 'add', '.');
    await git(hookRepo, 'commit', '-q', '-m', 'hooks');
  });

  test('a system hook named istio-job-run-check over YAML files', () => {
    const [hook] = parse(readFileSync(HOOKS, 'utf8')) as Record<string, unknown>[];
    assert.deepEqual(
      [hook?.['id'], hook?.['language'], hook?.['entry'], hook?.['types']],
      ['istio-job-run-check', 'system', 'istio-job-run --check', ['yaml']],
    );
  });

  test('a good manifest and YAML that holds no workload: passes, exit 0', async () => {
    const result = await tryHook('good', { 'k8s/job.yaml': GOOD, '.github/workflows/ci.yml': WORKFLOW, 'README.md': '# x\n' });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^istio-job-run --check\.+Passed$/m);
  });

  test('a broken manifest beside them: fails, exit 1, with the finding under its file and line', async () => {
    const result = await tryHook('broken', { 'k8s/job.yaml': GOOD, 'k8s/migrate.yaml': MIGRATE_JOB, '.github/workflows/ci.yml': WORKFLOW });
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /^istio-job-run --check\.+Failed$/m);
    assert.match(result.stdout, /^k8s\/migrate\.yaml:\d+: error: unwrapped: Job migrate gets a classic istio-proxy/m);
    assert.doesNotMatch(result.stdout, /k8s\/job\.yaml:/);
  });

  test('without istio-job-run on PATH: pre-commit names the missing executable, exit 1', async () => {
    const result = await tryHook('no-executable', { 'k8s/job.yaml': GOOD }, '/usr/bin:/bin');
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /Executable `istio-job-run` not found/);
  });
});
