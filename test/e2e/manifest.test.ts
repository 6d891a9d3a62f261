// The manifest tools through the built executable: --check and --inject, stdin as a Helm post-renderer reads
// it, and the kubectl plugin through a real link named kubectl-istio_job_run to the portable bundle, whose
// launcher hides the link's name from Node: the same bytes in every form.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { PLUGIN_NAME } from '../../src/manifest/cli/select.ts';
import { PLAIN_EXECUTABLE, root, run, start, WRAPPER } from '../support/process.ts';
import { MIGRATE_JOB, unprofiled } from '../support/manifest.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-manifest-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const PLUGIN = join(scratch, PLUGIN_NAME);
symlinkSync(WRAPPER, PLUGIN);

const PLAIN = `# A plain Job, as a chart renders it.
${MIGRATE_JOB}        args: ["--all"]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: 0644, enabled: yes}
`;
const plainFile = join(scratch, 'plain.yaml');
writeFileSync(plainFile, PLAIN);

async function plugin(args: readonly string[], input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const running = start(PLUGIN, args);
  running.process.stdin?.end(input);
  return running.finished;
}

describe('--check through the executable', () => {
  test('a plain Job: one line per finding, FILE:LINE: level: RULE: message, exit 1', async () => {
    const result = await run(['--check', plainFile]);
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stdout,
      new RegExp(`^${plainFile.replaceAll('.', '\\.')}:16: error: unwrapped: Job migrate gets a classic istio-proxy .*\n$`),
    );
    assert.equal(unprofiled(result.stderr), '');
  });
  test("the project's manifests, several at once: no finding, exit 0", async () => {
    const files = ['job.yaml', 'cronjob.yaml'].flatMap((file) => ['--check', join(root, 'docker', 'k8s', file)]);
    const result = await run(files);
    assert.deepEqual([result.code, result.stdout, unprofiled(result.stderr)], [0, '', '']);
  });
  test('--check DIR: the directories below DIR are skipped whatever their names, and nothing is said of them', async () => {
    const dir = join(scratch, 'charts');
    mkdirSync(join(dir, 'charts.yaml', 'nested.yaml'), { recursive: true });
    mkdirSync(join(dir, 'templates.yml'));
    mkdirSync(join(dir, 'values.json'));
    writeFileSync(join(dir, 'charts.yaml', 'nested.yaml', 'job.yaml'), PLAIN);
    symlinkSync(join(dir, 'templates.yml'), join(dir, 'linked.yaml'));
    writeFileSync(join(dir, 'plain.yaml'), PLAIN);
    const result = await run(['--check', dir]);
    const alone = await run(['--check', join(dir, 'plain.yaml')]);
    assert.deepEqual([result.code, result.stdout, unprofiled(result.stderr)], [alone.code, alone.stdout, '']);
    rmSync(join(dir, 'plain.yaml'));
    const none = await run(['--check', dir]);
    assert.deepEqual(
      [none.code, unprofiled(none.stderr)],
      [2, `istio-job-run: ${dir}: a directory with no .yaml, .yml or .json file in it\n`],
    );
  });
  test('a file that cannot be read, or parsed: exit 2, named on stderr; the others still checked', async () => {
    const broken = join(scratch, 'broken.yaml');
    writeFileSync(broken, 'kind: Job\nmetadata:\n  name: [x\n');
    const result = await run(['--check', join(scratch, 'missing.yaml'), '--check', broken, '--check', plainFile]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^istio-job-run: .*missing\.yaml: cannot be read \(ENOENT\)$/m);
    assert.match(result.stderr, /^istio-job-run: .*broken\.yaml:\d+: not YAML: /m);
    assert.match(result.stdout, /: error: unwrapped: /);
  });
  test('a file that is not UTF-8: exit 2, never rewritten with other bytes', async () => {
    const latin1 = join(scratch, 'latin1.yaml');
    writeFileSync(latin1, Buffer.concat([Buffer.from(PLAIN), Buffer.from('# caf\xe9\n', 'latin1')]));
    for (const mode of ['--check', '--inject']) {
      const result = await run([mode, latin1]);
      assert.deepEqual([result.code, result.stdout], [2, ''], mode);
      assert.match(result.stderr, /latin1\.yaml: cannot be read \(not UTF-8\)$/m);
    }
  });
  test('a usage error: exit 2', async () => {
    for (const args of [['--check'], ['--check', plainFile, '--native'], ['--check', plainFile, '--inject', plainFile]]) {
      const result = await run(args);
      assert.equal(result.code, 2, args.join(' '));
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /^istio-job-run: --/);
    }
  });
});

describe('--inject through the executable, and its other forms', () => {
  test('--inject FILE, --inject - (a Helm post-renderer) and the kubectl plugin give the same bytes', async () => {
    const flags = await run(['--inject', plainFile]);
    assert.equal(flags.code, 0, flags.stderr);
    assert.equal(unprofiled(flags.stderr), '');
    assert.match(flags.stdout, /command: \["\/istio-job-run\/istio-job-run", "--", "\/app\/migrate"\]/);
    assert.match(flags.stdout, /image: "istio-job-run:\d+\.\d+\.\d+"/);
    assert.ok(flags.stdout.endsWith('data: {mode: 0644, enabled: yes}\n'));
    const stdin = await run(['--inject', '-'], { input: PLAIN });
    assert.equal(stdin.stdout, flags.stdout);
    const viaPlugin = await plugin(['inject', '-f', plainFile]);
    assert.equal(viaPlugin.code, 0, viaPlugin.stderr);
    assert.equal(viaPlugin.stdout, flags.stdout);
    const pluginStdin = await plugin(['inject', '-f', '-'], PLAIN);
    assert.equal(pluginStdin.stdout, flags.stdout);
    const again = await run(['--inject', '-'], { input: flags.stdout });
    assert.equal(again.stdout, flags.stdout, 'idempotent');
    const checked = await run(['--check', '-'], { input: flags.stdout });
    assert.deepEqual([checked.code, checked.stdout], [0, '']);
  });
  test('many documents through pipes both ways, as Helm streams a large chart', async () => {
    const many = Array.from({ length: 1500 }, (_, i) => PLAIN.replaceAll('migrate', `migrate-${i}`)).join('---\n');
    const fromFile = join(scratch, 'many.yaml');
    writeFileSync(fromFile, many);
    const [piped, read] = await Promise.all([
      run(['--inject', '-'], { input: many, timeoutMs: 60_000 }),
      run(['--inject', fromFile], { timeoutMs: 60_000 }),
    ]);
    assert.equal(piped.code, 0, piped.stderr);
    assert.ok(piped.stdout.length > 2 * many.length, `${piped.stdout.length} bytes out`);
    assert.equal(piped.stdout, read.stdout);
    assert.equal(piped.stdout.split('/istio-job-run/istio-job-run').length - 1, 1500);
  });
  test('--image and --native, as flags and as the plugin', async () => {
    const image = await run(['--inject', plainFile, '--image', 'mirror.example/ijr:1']);
    assert.match(image.stdout, /image: "mirror\.example\/ijr:1"/);
    assert.equal((await plugin(['inject', '-f', plainFile, '--image', 'mirror.example/ijr:1'])).stdout, image.stdout);
    const native = await run(['--native', '--inject', plainFile]);
    assert.equal(native.code, 0);
    assert.match(native.stdout, /\n {6}annotations:\n {8}sidecar\.istio\.io\/nativeSidecar: "true"\n/);
    assert.equal((await plugin(['inject', '--native', '-f', plainFile])).stdout, native.stdout);
  });
  test('--admission-policy, after --image too: the policy and its binding on stdout, exit 0; a bad value exit 2', async () => {
    const printed = await run(['--image', 'mirror.example/ijr:1', '--admission-policy', '--api-version=v1beta1']);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /^apiVersion: admissionregistration\.k8s\.io\/v1beta1\nkind: MutatingAdmissionPolicy\n/);
    assert.match(printed.stdout, /\n---\napiVersion: admissionregistration\.k8s\.io\/v1beta1\nkind: MutatingAdmissionPolicyBinding\n/);
    assert.match(printed.stdout, /"mirror\.example\/ijr:1"/);
    const bad = await run(['--admission-policy', '--api-version', 'v2']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--api-version: "v2" is not one of v1\|v1beta1/);
  });
  test('a pod it cannot rewrite: named on stderr, nothing on stdout, exit 1', async () => {
    const result = await run(['--inject', '-'], { input: PLAIN.replace('        command: ["/app/migrate"]\n', '') });
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^istio-job-run: <stdin>:2: Job migrate: container job has no command/m);
  });
});

describe('the kubectl plugin', () => {
  test('check -f: the same lines and exit code as --check', async () => {
    const flags = await run(['--check', plainFile]);
    const viaPlugin = await plugin(['check', '-f', plainFile]);
    assert.deepEqual([viaPlugin.code, viaPlugin.stdout], [flags.code, flags.stdout]);
  });
  test('the executable alone (no launcher) under the plugin name: its argv0 names it', async () => {
    const dir = join(scratch, 'plain');
    mkdirSync(dir);
    symlinkSync(PLAIN_EXECUTABLE, join(dir, PLUGIN_NAME));
    const running = start(join(dir, PLUGIN_NAME), ['check', '-f', plainFile]);
    running.process.stdin?.end();
    const result = await running.finished;
    assert.deepEqual([result.code, result.stdout], [1, (await run(['--check', plainFile])).stdout]);
  });
  test('help, and what is no command of it', async () => {
    const help = await plugin(['help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, new RegExp(`Usage: ${PLUGIN_NAME} check -f FILE`));
    for (const args of [[], ['run'], ['check'], ['check', '-f', plainFile, '--native']]) {
      const result = await plugin(args);
      assert.equal(result.code, 2, args.join(' '));
      assert.match(result.stderr, new RegExp(`see ${PLUGIN_NAME} help`));
    }
  });
  test('the executable under its own name is still the wrapper', async () => {
    const result = await run(['--sidecar', 'none', '--', 'sh', '-c', 'echo ran']);
    assert.equal(result.stdout, 'ran\n');
    assert.equal(readFileSync(plainFile, 'utf8'), PLAIN, 'no tool wrote into its input');
  });
});
