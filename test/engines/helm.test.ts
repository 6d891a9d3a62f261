// The Helm 4 post-renderer plugin run by Helm 4 itself: helm built from helm.sh/helm/v4 at HELM_VERSION
// (scripts/engines.ts) installs the release's plugin tarball (dist/release, or one laid out the same way from the
// built bundle when no release was made) with the flag Helm 4 needs for an unsigned plugin, then renders a chart
// whose Jobs include a hook through `--post-renderer istio-job-run`: the output must be what `--inject` writes for
// the chart rendered without it. Without Go the file is skipped in one line, except under CI=true.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { goCommand, goRequired, HELM_VERSION, helm, NO_GO } from '../../scripts/engines.ts';
import { HELM_PLUGIN, helmPluginName, layHelmPlugin } from '../../scripts/helm-plugin.ts';
import { MIGRATE_JOB } from '../support/manifest.ts';
import { root, WRAPPER } from '../support/process.ts';

const missing = goCommand() === undefined ? NO_GO : undefined;
if (missing !== undefined && goRequired()) throw new Error(`${NO_GO} (CI=true: the engines tests may not be skipped)`);

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-helm4-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const arch = process.arch === 'arm64' ? 'arm64' : 'x64';

/**
 * Helm's own folders in the scratch folder: nothing of the machine's Helm is read or written. HELM_PLUGINS is left to
 * its default under HELM_DATA_HOME, where `helm plugin install` of Helm 4.3 writes whatever HELM_PLUGINS says.
 */
const env = {
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: scratch,
  HELM_CONFIG_HOME: join(scratch, 'config'),
  HELM_CACHE_HOME: join(scratch, 'cache'),
  HELM_DATA_HOME: join(scratch, 'data'),
};

/** The release's tarball of the plugin, or the same made from the built bundle. */
function pluginTarball(): string {
  const released = join(root, 'dist', 'release', helmPluginName(arch));
  if (existsSync(released)) return released;
  const laid = join(scratch, 'laid');
  layHelmPlugin(join(root, 'dist', 'bundle'), laid, arch);
  const tarball = join(scratch, helmPluginName(arch));
  execFileSync('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '-czf', tarball, '-C', laid, '.']);
  return tarball;
}

/** A chart: a ConfigMap, a pre-install hook Job, a Job, a Service. */
function chart(hook: string = MIGRATE_JOB): string {
  const dir = join(scratch, `chart-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(dir, 'templates', 'hooks'), { recursive: true });
  writeFileSync(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: payments\nversion: 0.1.0\n');
  writeFileSync(
    join(dir, 'templates', 'configmap.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  mode: "0644"\n',
  );
  writeFileSync(
    join(dir, 'templates', 'hooks', 'migrate.yaml'),
    hook.replace(
      '  name: migrate\n',
      '  name: {{ .Release.Name }}-migrate\n  annotations:\n    helm.sh/hook: pre-install,pre-upgrade\n    helm.sh/hook-weight: "-5"\n',
    ),
  );
  writeFileSync(
    join(dir, 'templates', 'job.yaml'),
    MIGRATE_JOB.replace('  name: migrate\n', '  name: {{ .Release.Name }}-report\n').replace('"/app/migrate"', '"/app/report"'),
  );
  writeFileSync(
    join(dir, 'templates', 'service.yaml'),
    'apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  ports:\n  - port: 80\n',
  );
  return dir;
}

function helmRun(program: string, args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(program, args, { env, encoding: 'utf8', timeout: 120_000 });
  return { code: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? String(result.error ?? '') };
}

describe(`Helm ${HELM_VERSION}, built from helm.sh/helm/v4, runs the plugin`, { skip: missing ?? false }, () => {
  let program = '';
  test('helm builds, and installs the release tarball of the plugin (unsigned: --verify=false)', (t) => {
    program = helm();
    const version = helmRun(program, ['version', '--short']);
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, new RegExp(`^${HELM_VERSION.replaceAll('.', '\\.')}\\b`));
    t.diagnostic(`helm ${version.stdout.trim()}`);
    process.stdout.write(`# Helm built here: ${version.stdout.trim()}\n`);
    const tarball = pluginTarball();
    const refused = helmRun(program, ['plugin', 'install', tarball]);
    assert.notEqual(refused.code, 0, 'Helm 4 installs an unsigned plugin only when told not to verify it');
    const installed = helmRun(program, ['plugin', 'install', tarball, '--verify=false']);
    assert.equal(installed.code, 0, installed.stderr);
    const list = helmRun(program, ['plugin', 'list']);
    assert.match(list.stdout, new RegExp(`^${HELM_PLUGIN}\\s`, 'm'), list.stdout);
  });

  test('helm template with --post-renderer istio-job-run: the hook and the Job as --inject writes them', () => {
    assert.ok(program !== '', 'helm did not build');
    const dir = chart();
    const plain = helmRun(program, ['template', 'payments', dir]);
    assert.equal(plain.code, 0, plain.stderr);
    const rendered = helmRun(program, ['template', 'payments', dir, '--post-renderer', HELM_PLUGIN]);
    assert.equal(rendered.code, 0, rendered.stderr);
    const injected = spawnSync(WRAPPER, ['--inject', '-'], { input: plain.stdout, encoding: 'utf8', timeout: 60_000 });
    assert.equal(injected.status, 0, injected.stderr);
    assert.notEqual(injected.stdout, plain.stdout, 'the chart has Jobs --inject rewrites');
    assert.match(rendered.stdout, /helm\.sh\/hook: pre-install,pre-upgrade[\s\S]*- name: install-istio-job-run/);
    assert.equal(rendered.stdout, injected.stdout);
  });

  test('--post-renderer-args --native: the hook marked native instead', () => {
    const dir = chart();
    const plain = helmRun(program, ['template', 'payments', dir]);
    const rendered = helmRun(program, ['template', 'payments', dir, '--post-renderer', HELM_PLUGIN, '--post-renderer-args', '--native']);
    assert.equal(rendered.code, 0, rendered.stderr);
    const injected = spawnSync(WRAPPER, ['--inject', '--native', '-'], { input: plain.stdout, encoding: 'utf8', timeout: 60_000 });
    assert.equal(rendered.stdout, injected.stdout);
    assert.match(rendered.stdout, /sidecar\.istio\.io\/nativeSidecar: "true"/);
  });

  test('a hook --inject refuses: Helm stops with the plugin error', () => {
    const dir = chart(MIGRATE_JOB.replace('        command: ["/app/migrate"]\n', ''));
    const rendered = helmRun(program, ['template', 'payments', dir, '--post-renderer', HELM_PLUGIN]);
    assert.notEqual(rendered.code, 0);
    assert.match(rendered.stderr, new RegExp(`plugin "${HELM_PLUGIN}" exited with error`));
  });
});
