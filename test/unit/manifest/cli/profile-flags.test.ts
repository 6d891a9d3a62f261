// The profile on the command line and in the config file: --kubernetes, --mesh (repeatable), --config FILE or
// .istio-job-run.yaml (here, else at the top of the git work tree), a flag beating the file, and every bad value
// one line naming the flag, or the file and its line, and what is allowed.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseFlags, parsePlugin, type Request } from '../../../../src/manifest/cli/flags.ts';
import type { ConfigFiles } from '../../../../src/manifest/cli/config-file.ts';
import { type ManifestIo, runManifest } from '../../../../src/manifest/cli/cli.ts';
import { MESH_NAMES, NO_PROFILE } from '../../../../src/config/profile.ts';

/** Files in memory, the current directory CWD; a directory is a path that ends in `/`. */
function files(cwd: string, tree: Record<string, string>): ConfigFiles {
  return {
    cwd,
    read: (path) => tree[path],
    exists: (path) => tree[path] !== undefined || Object.keys(tree).some((name) => name.startsWith(`${path}/`)),
  };
}

const profileOf = (request: Request): unknown =>
  request.kind === 'error' || request.kind === 'help' ? request : 'profile' in request ? request.profile : undefined;
const errorOf = (request: Request): string => (request.kind === 'error' ? request.message : `no error: ${request.kind}`);

describe('the profile flags', () => {
  test('--kubernetes and --mesh make the profile of every tool; none stated, none made', () => {
    for (const tool of [['--check', 'a.yaml'], ['--inject', 'a.yaml'], ['--admission-policy']]) {
      const request = parseFlags([...tool, '--kubernetes', '1.31', '--mesh', 'linkerd=2.20', '--mesh=istio=1.28:native'], {});
      assert.deepEqual(profileOf(request), {
        kubernetes: [1, 31],
        meshes: [
          { name: 'linkerd', version: [2, 20] },
          { name: 'istio', version: [1, 28], setting: 'native' },
        ],
      });
      assert.equal(profileOf(parseFlags(tool, {})), undefined);
    }
    const plugin = parsePlugin(['check', '-f', 'a.yaml', '--kubernetes', '1.33'], {});
    assert.deepEqual(profileOf(plugin), { kubernetes: [1, 33], meshes: [] });
  });
  test('a bad value is one line naming the flag and what is allowed', () => {
    assert.match(errorOf(parseFlags(['--check', 'a', '--kubernetes', 'x'], {})), /^--kubernetes: "x" is not a Kubernetes minor version/);
    assert.match(
      errorOf(parseFlags(['--check', 'a', '--mesh', 'kuma=2.14'], {})),
      /^--mesh: "kuma" is not a NAME of NAME=VERSION\[:native\|classic\] \(istio, linkerd,/,
    );
    assert.match(errorOf(parseFlags(['--inject', 'a', '--native', '--wrapper'], {})), /^--wrapper: --native asks for native sidecars only/);
    assert.match(errorOf(parseFlags(['--check', 'a', '--wrapper'], {})), /^--wrapper: goes with --inject, not --check/);
  });
});

describe('the config file', () => {
  const FILE = '/repo/.istio-job-run.yaml';
  test('read from the current directory, else from the top of its git work tree; a flag beats it', () => {
    const text =
      'kubernetes: 1.30\nmesh:\n  - linkerd=2.20\n  - istio=1.28\nformat: json\nfailure-threshold: warning\nignore: [hand-rolled-quit]\n';
    for (const cwd of ['/repo', '/repo/deploy/jobs']) {
      const request = parseFlags(['--check', 'a.yaml'], {}, files(cwd, { [FILE]: text, '/repo/.git/HEAD': '' }));
      assert.equal(request.kind, 'check');
      if (request.kind !== 'check') continue;
      assert.deepEqual(request.profile, {
        kubernetes: [1, 30],
        meshes: [
          { name: 'linkerd', version: [2, 20] },
          { name: 'istio', version: [1, 28] },
        ],
      });
      assert.deepEqual(
        [request.output.format, request.output.threshold, [...request.output.ignore]],
        ['json', 'warning', ['hand-rolled-quit']],
      );
    }
    const flags = parseFlags(
      ['--check', 'a.yaml', '--kubernetes', '1.33', '--mesh', 'istio=1.29', '--format', 'sarif', '--ignore', 'unwrapped'],
      {},
      files('/repo', { [FILE]: text }),
    );
    assert.ok(flags.kind === 'check');
    assert.deepEqual(flags.profile, {
      kubernetes: [1, 33],
      meshes: [
        { name: 'istio', version: [1, 29] },
        { name: 'linkerd', version: [2, 20] },
      ],
    });
    assert.deepEqual([flags.output.format, flags.output.threshold, [...flags.output.ignore]], ['sarif', 'warning', ['unwrapped']]);
    // The variable beats the file's ignore too.
    const env = parseFlags(['--check', 'a.yaml'], { ISTIO_JOB_RUN_IGNORE: 'duplicate-key' }, files('/repo', { [FILE]: text }));
    assert.ok(env.kind === 'check');
    assert.deepEqual([...env.output.ignore], ['duplicate-key']);
  });
  test('none outside a git work tree without one here, and none past the top of the work tree', () => {
    assert.equal(profileOf(parseFlags(['--check', 'a'], {}, files('/elsewhere', { [FILE]: 'kubernetes: "1.31"\n' }))), undefined);
    const nested = files('/repo/sub', { [FILE]: 'kubernetes: "1.31"\n', '/repo/sub/.git/HEAD': '' });
    assert.equal(profileOf(parseFlags(['--check', 'a'], {}, nested)), undefined);
  });
  test('--config FILE names the file; a missing one is an error', () => {
    const request = parseFlags(
      ['--check', 'a', '--config', 'ci/profile.yaml'],
      {},
      files('/w', { 'ci/profile.yaml': 'mesh: linkerd=2.20\n' }),
    );
    assert.deepEqual(profileOf(request), { meshes: [{ name: 'linkerd', version: [2, 20] }] });
    assert.equal(errorOf(parseFlags(['--check', 'a', '--config', 'none.yaml'], {}, files('/w', {}))), '--config: none.yaml: no such file');
  });
  test('an unknown key or a bad value names the file, the line and what is allowed', () => {
    const cases: [string, string][] = [
      [
        'kubernetes: "1.31"\nmeshes: [linkerd=2.20]\n',
        `${FILE}:2: "meshes" is not a setting of the file: one of kubernetes, mesh, format, failure-threshold, ignore`,
      ],
      [
        'image: x\n',
        `${FILE}:1: "image" is not a setting of the file (--image is for the command line only): one of kubernetes, mesh, format, failure-threshold, ignore`,
      ],
      [
        'mesh:\n  - linkerd=2.20\n  - kuma=2.14\n',
        `${FILE}:3: mesh: "kuma" is not a NAME of NAME=VERSION[:native|classic] (${MESH_NAMES.join(', ')})`,
      ],
      ['\n\nkubernetes: latest\n', `${FILE}:3: kubernetes: "latest" is not a Kubernetes minor version (X.Y, the oldest kubelet's: 1.31)`],
      ['kubernetes: [1.31]\n', `${FILE}:1: kubernetes takes one value, not a list (kubernetes: VALUE, as --kubernetes VALUE)`],
      ['format: yaml\n', `${FILE}:1: format: "yaml" is not one of text|json|sarif`],
      ['ignore:\n  - unwraped\n', `${FILE}:2: ignore: "unwraped" is not a rule of --check (the rules: istio-job-run --check --help)`],
      ['kubernetes:\n', `${FILE}:1: kubernetes needs a value, as --kubernetes takes it`],
      ['- kubernetes\n', `${FILE}:1: not a map of settings (kubernetes, mesh, format, failure-threshold, ignore)`],
    ];
    for (const [text, message] of cases)
      assert.equal(errorOf(parseFlags(['--check', 'a'], {}, files('/repo', { [FILE]: text }))), message, text);
    assert.match(
      errorOf(parseFlags(['--check', 'a'], {}, files('/repo', { [FILE]: 'kubernetes: [\n' }))),
      /^\/repo\/\.istio-job-run\.yaml:\d+: not YAML: /,
    );
  });
  test('an empty file states nothing', () => {
    assert.equal(profileOf(parseFlags(['--check', 'a'], {}, files('/repo', { [FILE]: '# nothing yet\n' }))), undefined);
  });
});

describe('a run without a profile', () => {
  /** runManifest over one file, its stdout and stderr. */
  async function run(argv: readonly string[]): Promise<{ code: number; stdout: string; stderr: string[] }> {
    let stdout = '';
    const stderr: string[] = [];
    const io: ManifestIo = {
      readFile: () =>
        'apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {spec: {containers: [{name: a, image: x}]}}}\n',
      listDir: () => undefined,
      stdout: (text) => {
        stdout += text;
      },
      stderr: (line) => stderr.push(line),
    };
    return { code: await runManifest(argv, 'istio-job-run', '9.9.9', io), stdout, stderr };
  }
  test('says once what it assumes and how to state the cluster, on stderr; a stated profile is not told', async () => {
    for (const tool of [['--check', 'a.yaml'], ['--inject', 'a.yaml'], ['--admission-policy']]) {
      const plain = await run(tool);
      assert.deepEqual(plain.stderr, [NO_PROFILE], tool.join(' '));
      assert.match(NO_PROFILE, /^info: no cluster profile: .*--kubernetes X\.Y .* --mesh NAME=VERSION, or in \.istio-job-run\.yaml$/);
      const stated = await run([...tool, '--kubernetes', '1.31']);
      assert.deepEqual(stated.stderr, [], tool.join(' '));
      assert.equal(stated.stdout, plain.stdout);
    }
  });
});
