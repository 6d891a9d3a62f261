// The cluster profile through the built executable: the config file found from a directory inside a git work
// tree (at its top), a flag beating it, a bad key named with the file and line (exit 2), and the one info line of
// a run that states no profile; the kubectl plugin reads the same file.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { NO_PROFILE } from '../../src/config/profile.ts';
import { PLUGIN_NAME } from '../../src/manifest/cli/select.ts';
import { run, start, WRAPPER } from '../support/process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-profile-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const repo = join(scratch, 'repo');
const deploy = join(repo, 'deploy', 'jobs');
mkdirSync(join(repo, '.git'), { recursive: true });
mkdirSync(deploy, { recursive: true });
const job = join(deploy, 'job.yaml');
writeFileSync(
  job,
  [
    'apiVersion: batch/v1',
    'kind: Job',
    'metadata: {name: sync}',
    'spec:',
    '  template:',
    '    metadata:',
    '      annotations: {linkerd.io/inject: enabled}',
    '    spec:',
    '      restartPolicy: Never',
    '      containers: [{name: job, image: registry.example/sync:1, command: ["./sync"]}]',
    '',
  ].join('\n'),
);
const config = join(repo, '.istio-job-run.yaml');

describe('the profile through the executable', () => {
  test('no profile: unwrapped, and one info line saying what is assumed', async () => {
    rmSync(config, { force: true });
    const result = await run(['--check', 'job.yaml'], { cwd: deploy });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stdout, /^job\.yaml:10: error: unwrapped: Job sync gets a classic linkerd-proxy/);
    assert.equal(result.stderr, `istio-job-run: ${NO_PROFILE}\n`);
  });
  test('.istio-job-run.yaml at the top of the work tree: Linkerd 2.20 is native, nothing to say; a flag beats it', async () => {
    writeFileSync(config, '# the cluster\nkubernetes: "1.31"\nmesh: [linkerd=2.20]\n');
    const result = await run(['--check', 'job.yaml'], { cwd: deploy });
    assert.deepEqual([result.code, result.stdout, result.stderr], [0, '', '']);
    const flag = await run(['--check', 'job.yaml', '--mesh', 'linkerd=2.19'], { cwd: deploy });
    assert.equal(flag.code, 1, flag.stderr);
    assert.match(flag.stdout, /unwrapped: .*classic: linkerd 2\.19 injects it classic by default/);
    // The kubectl plugin, a link by its name to the same executable, reads the same file.
    const plugin = join(scratch, PLUGIN_NAME);
    symlinkSync(WRAPPER, plugin);
    const viaPlugin = await start(plugin, ['check', '-f', 'job.yaml'], { cwd: deploy }).finished;
    assert.deepEqual([viaPlugin.code, viaPlugin.stdout, viaPlugin.stderr], [0, '', '']);
  });
  test('a bad key: the file, the line and what is allowed, exit 2', async () => {
    writeFileSync(config, 'kubernetes: "1.31"\nmeshes: [linkerd=2.20]\n');
    const result = await run(['--check', 'job.yaml'], { cwd: deploy });
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      `istio-job-run: ${config}:2: "meshes" is not a setting of the file: one of kubernetes, mesh, format, failure-threshold, ignore (see istio-job-run --help)\n`,
    );
    const named = await run(['--check', 'job.yaml', '--config', join(scratch, 'none.yaml')], { cwd: deploy });
    assert.equal(named.code, 2);
    assert.match(named.stderr, /--config: .*none\.yaml: no such file/);
  });
});
