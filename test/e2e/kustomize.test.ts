// The kustomize transformer of integrations/kustomize/ (a legacy exec plugin, which `kubectl kustomize
// --enable-alpha-plugins` runs) through this machine's kubectl, with the built executable on PATH.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { MIGRATE_JOB } from '../support/manifest.ts';
import { cleanEnv, root, run, start, WRAPPER } from '../support/process.ts';

const PLUGIN_HOME = join(root, 'integrations', 'kustomize');
const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-kustomize-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const CONFIGMAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n';
const transformer = (args: string) =>
  `apiVersion: istio-job-run.io/v1\nkind: Inject\nmetadata:\n  name: inject\nargsOneLiner: ${JSON.stringify(args)}\n`;

/** A kustomization of a Job and a ConfigMap with a name prefix, and the transformer when ARGS is given. */
function kustomization(name: string, job: string, args?: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'job.yaml'), job);
  writeFileSync(join(dir, 'configmap.yaml'), CONFIGMAP);
  const transformers = args === undefined ? '' : 'transformers: [inject.yaml]\n';
  writeFileSync(join(dir, 'kustomization.yaml'), `namePrefix: team-\nresources: [job.yaml, configmap.yaml]\n${transformers}`);
  if (args !== undefined) writeFileSync(join(dir, 'inject.yaml'), transformer(args));
  return dir;
}

const build = (dir: string, path = `${dirname(WRAPPER)}:${process.env['PATH'] ?? ''}`, flags = ['--enable-alpha-plugins']) =>
  start('kubectl', ['kustomize', ...flags, dir], { env: cleanEnv({ KUSTOMIZE_PLUGIN_HOME: PLUGIN_HOME, PATH: path }), timeoutMs: 60_000 })
    .finished;

const objects = (stream: string): unknown[] => parseAllDocuments(stream).map((doc) => doc.toJS());

// kubectl comes from the Kubernetes project's packages (Debian 12 has only kubernetes-client 1.20, without
// kustomize 5), so `npm run setup` cannot install it: without it these tests are skipped, saying why.
const noKubectl =
  spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0
    ? false
    : "kubectl is not installed (the Kubernetes project's packages; Debian 12 has none with kustomize 5)";

describe('kubectl kustomize --enable-alpha-plugins with the Inject transformer', { skip: noKubectl }, () => {
  test('the output is what --inject makes of the kustomization built without it', async () => {
    const [withPlugin, without] = await Promise.all([
      build(kustomization('inject', MIGRATE_JOB, '')),
      build(kustomization('plain', MIGRATE_JOB)),
    ]);
    assert.equal(withPlugin.code, 0, withPlugin.stderr);
    const injected = await run(['--inject', '-'], { input: without.stdout });
    assert.equal(injected.code, 0, injected.stderr);
    assert.deepEqual(objects(withPlugin.stdout), objects(injected.stdout));
    assert.match(withPlugin.stdout, /name: team-migrate\n/);
    assert.match(withPlugin.stdout, /- \/istio-job-run\/istio-job-run\n\s+- --\n\s+- \/app\/migrate\n/);
    assert.match(withPlugin.stdout, /name: install-istio-job-run\n/);
    assert.doesNotMatch(withPlugin.stdout, /kustomize\.config\.k8s\.io\/id/, 'the id kustomize tracks objects by is gone again');
  });

  test("the config's argsOneLiner is --inject's flags: --native", async () => {
    const result = await build(kustomization('native', MIGRATE_JOB, '--native'));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /annotations:\n\s+sidecar\.istio\.io\/nativeSidecar: "true"\n/);
    assert.doesNotMatch(result.stdout, /install-istio-job-run/);
  });

  test('a pod --inject cannot rewrite: the build fails with its line', async () => {
    const result = await build(kustomization('refused', MIGRATE_JOB.replace('        command: ["/app/migrate"]\n', ''), ''));
    assert.notEqual(result.code, 0);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /istio-job-run: <stdin>:\d+: Job team-migrate: container job has no command/);
  });

  test('a bad flag in argsOneLiner: the build fails naming it', async () => {
    const result = await build(kustomization('bad-flag', MIGRATE_JOB, '--natve'));
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /istio-job-run: .*--natve/);
  });

  test('istio-job-run not on PATH: one line saying so', async () => {
    const result = await build(kustomization('no-executable', MIGRATE_JOB, ''), '/usr/bin:/bin');
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /istio-job-run kustomize plugin: istio-job-run is not on PATH \(\/usr\/bin:\/bin\)/);
  });

  test('without --enable-alpha-plugins kustomize refuses the transformer', async () => {
    const result = await build(kustomization('no-alpha', MIGRATE_JOB, ''), undefined, []);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /external plugins disabled; unable to load external plugin 'Inject'/);
  });
});
