// The Helm 4 post-renderer plugin as the release lays it out (scripts/helm-plugin.ts, around the built bundle),
// run as Helm 4 runs a postrenderer/v1 plugin (test/support/helm.ts) on the stream Helm sends: every template of
// a chart, hooks included, each document annotated with the file it came from.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { HELM_ARCH, HELM_PLUGIN, helmPluginYaml, layHelmPlugin } from '../../scripts/helm-plugin.ts';
import { FILENAME_ANNOTATION, filesOf, loadPostRenderer, platformCommand, postRender } from '../support/helm.ts';
import { MIGRATE_JOB, unprofiled } from '../support/manifest.ts';
import { cleanEnv, root } from '../support/process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-helm-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const pluginDir = layHelmPlugin(join(root, 'dist', 'bundle'), join(scratch, 'plugins'), 'x64');

const CONFIGMAP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: payments-settings
  annotations:
    ${FILENAME_ANNOTATION}: 'payments/templates/configmap.yaml'
data:
  mode: "0644"
`;
/** The migration: a pre-install hook, the Job a chart most often has, as annotateAndMerge writes it. */
const HOOK = MIGRATE_JOB.replace(
  '  name: migrate\n',
  `  name: payments-migrate
  labels:
    app.kubernetes.io/instance: payments
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "-5"
    helm.sh/hook-delete-policy: before-hook-creation
    ${FILENAME_ANNOTATION}: 'payments/templates/hooks/migrate.yaml'
`,
);
const JOB = HOOK.replace(/ {4}helm\.sh\/hook.*\n/g, '')
  .replaceAll('payments-migrate', 'payments-report')
  .replace('hooks/migrate.yaml', 'job.yaml')
  .replace('"/app/migrate"', '"/app/report"');
const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: payments
  annotations:
    ${FILENAME_ANNOTATION}: 'payments/templates/service.yaml'
spec:
  ports:
  - port: 80
`;
/** annotateAndMerge's output for the chart: files in name order, one `---` between documents. */
const STREAM = [CONFIGMAP, HOOK, JOB, SERVICE].join('---\n');

const render = (manifests: string, extraArgs: readonly string[] = []) =>
  postRender(pluginDir, manifests, { arch: HELM_ARCH.x64, extraArgs, env: cleanEnv() });

/** Whether OUTPUT is INPUT with bytes inserted and none changed or removed. */
function onlyInserts(input: string, output: string): boolean {
  let at = 0;
  for (const char of output) if (at < input.length && char === input[at]) at++;
  return at === input.length;
}

describe('plugin.yaml, as Helm 4 loads it', () => {
  test('a postrenderer/v1 plugin with the subprocess runtime, named for --post-renderer istio-job-run', () => {
    const { name, commands } = loadPostRenderer(pluginDir);
    assert.equal(name, 'istio-job-run');
    assert.deepEqual(platformCommand(commands, 'linux', 'amd64'), {
      os: 'linux',
      arch: 'amd64',
      command: '${HELM_PLUGIN_DIR}/istio-job-run',
      args: ['--inject', '-'],
    });
  });
  test("each architecture's plugin has a command for that architecture only: elsewhere Helm says none applies", async () => {
    for (const [arch, other] of [
      ['x64', 'arm64'],
      ['arm64', 'x64'],
    ] as const) {
      const { parse } = await import('yaml');
      const commands = (parse(helmPluginYaml(arch)) as { runtimeConfig: { platformCommand: [] } }).runtimeConfig.platformCommand;
      assert.equal(platformCommand(commands, 'linux', HELM_ARCH[arch])?.arch, HELM_ARCH[arch]);
      assert.equal(platformCommand(commands, 'linux', HELM_ARCH[other]), undefined);
      assert.equal(platformCommand(commands, 'darwin', HELM_ARCH[arch]), undefined);
    }
  });
});

describe('helm install NAME CHART --post-renderer istio-job-run', () => {
  test('the hook Job is rewritten like any Job; the other documents come back byte for byte', async () => {
    const rendered = await render(STREAM);
    assert.ok(rendered.ok, `${rendered.error}: ${rendered.stderr}`);
    assert.deepEqual(rendered.argv, [join(pluginDir, 'istio-job-run'), '--inject', '-']);
    const docs = rendered.manifests.split(/^---\n/m);
    assert.equal(docs.length, 4);
    const [configmap, hook, job, service] = docs;
    assert.equal(configmap, CONFIGMAP);
    assert.equal(service, SERVICE);
    for (const [doc, command] of [
      [hook, '"/app/migrate"'],
      [job, '"/app/report"'],
    ] as const) {
      assert.match(doc ?? '', new RegExp(`command: \\["/istio-job-run/istio-job-run", "--", ${command.replaceAll('/', '\\/')}\\]`));
      assert.match(doc ?? '', /- name: install-istio-job-run\n/);
    }
  });

  test('every byte Helm put there comes back: only inserts, each file annotation as it went in', async () => {
    const rendered = await render(STREAM);
    assert.ok(onlyInserts(STREAM, rendered.manifests), rendered.manifests);
    const lines = (text: string) => text.split('\n').filter((line) => line.includes(FILENAME_ANNOTATION));
    assert.deepEqual(lines(rendered.manifests), lines(STREAM));
    assert.deepEqual(filesOf(rendered.manifests), filesOf(STREAM), 'splitAndDeannotate puts each document back in its file');
    assert.equal(unprofiled(rendered.stderr), '');
    for (const doc of parseAllDocuments(rendered.manifests)) assert.deepEqual(doc.errors, []);
  });

  test("--post-renderer-args come after the plugin's own: --native marks the hook native instead", async () => {
    const rendered = await render(STREAM, ['--native']);
    assert.ok(rendered.ok, rendered.stderr);
    const hook = rendered.manifests.split(/^---\n/m)[1] ?? '';
    assert.match(hook, /\n {6}annotations:\n {8}sidecar\.istio\.io\/nativeSidecar: "true"\n/);
    assert.doesNotMatch(hook, /install-istio-job-run/);
    assert.ok(onlyInserts(STREAM, rendered.manifests));
  });

  test('a hook it cannot rewrite: exit 1, nothing on stdout, so Helm stops with its error; the reason is on stderr', async () => {
    const rendered = await render(STREAM.replace('        command: ["/app/migrate"]\n', ''));
    assert.equal(rendered.ok, false);
    assert.equal(rendered.error, `plugin "${HELM_PLUGIN}" exited with error`);
    assert.match(rendered.stderr, /^istio-job-run: <stdin>:\d+: Job payments-migrate: container job has no command/m);
  });

  test('a chart without a Job that needs anything: the stream comes back unchanged', async () => {
    const plain = [CONFIGMAP, SERVICE].join('---\n');
    const rendered = await render(plain);
    assert.equal(rendered.manifests, plain);
  });
});
