// The npm package of the manifest tools (scripts/npm-package.ts), as a macOS or Windows user gets it: the
// tarball installed with `npm install -g` (npm itself run by the pinned Node), its two commands run on that
// Node, their output byte for byte the built executable's.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { writeNpmPackage } from '../../scripts/npm-package.ts';
import { pinnedNode } from '../../scripts/pinned-node.ts';
import { PLUGIN_NAME } from '../../src/manifest/cli/select.ts';
import { cleanEnv, run, start } from '../support/process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-npm-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const prefix = join(scratch, 'global');
const NODE = pinnedNode();
/** The pinned Node first on PATH: the bin scripts' `#!/usr/bin/env node` finds it. */
const env = cleanEnv({ PATH: `${dirname(NODE)}:${process.env['PATH'] ?? ''}` });

const JOB =
  'kind: Job\nmetadata: {name: t}\nspec:\n  template:\n    spec:\n      restartPolicy: OnFailure\n      containers:\n      - name: job\n        image: x\n        command: [./task.sh]  # the task\n';
const file = join(scratch, 'job.yaml');
writeFileSync(file, JOB);

before(async () => {
  const tarball = await writeNpmPackage(scratch);
  const npmCli = join(dirname(realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim())), 'npm-cli.js');
  execFileSync(NODE, [npmCli, 'install', '--global', '--offline', '--no-audit', '--no-fund', '--prefix', prefix, tarball], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 60_000,
  });
});

async function installed(
  name: string,
  args: readonly string[],
  input = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const running = start(join(prefix, 'bin', name), args, { env });
  running.process.stdin?.end(input);
  return running.finished;
}

describe('npm install -g of the npm package, on the pinned Node', () => {
  test("istio-job-run --check and --inject: the executable's bytes and exit codes", async () => {
    for (const args of [
      ['--check', file],
      ['--inject', file],
      ['--inject', file, '--native'],
      ['--check', join(scratch, 'missing.yaml')],
    ]) {
      const [fromNpm, fromExecutable] = await Promise.all([installed('istio-job-run', args), run(args)]);
      assert.deepEqual(
        [fromNpm.code, fromNpm.stdout, fromNpm.stderr],
        [fromExecutable.code, fromExecutable.stdout, fromExecutable.stderr],
        args.join(' '),
      );
    }
  });
  test('kubectl-istio_job_run check and inject, stdin too', async () => {
    const inject = await installed(PLUGIN_NAME, ['inject', '-f', '-'], JOB);
    assert.equal(inject.code, 0, inject.stderr);
    assert.equal(inject.stdout, (await run(['--inject', file])).stdout);
    const check = await installed(PLUGIN_NAME, ['check', '-f', file]);
    assert.equal(check.stdout, (await run(['--check', file])).stdout);
  });
  test('--version, and the wrapper is not in it: exit 2 saying so', async () => {
    assert.equal((await installed('istio-job-run', ['--version'])).stdout, (await run(['--version'])).stdout);
    const wrapped = await installed('istio-job-run', ['--', 'true']);
    assert.equal(wrapped.code, 2);
    assert.match(wrapped.stderr, /^istio-job-run: this is the npm package, which has the manifest tools only/);
  });
});
