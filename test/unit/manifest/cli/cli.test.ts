// The manifest tools' command line, through runManifest with files, directories and stdout in memory: flags in
// any order, bad values named, the size limit, deep nesting, a stdout that cannot be written, and the kubectl
// plugin's -f DIR.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ManifestIo, MAX_INPUT_MIB, runManifest } from '../../../../src/manifest/cli/cli.ts';
import { PLUGIN_NAME } from '../../../../src/manifest/cli/select.ts';
import { MIGRATE_JOB } from '../../../support/manifest.ts';

const JOB = MIGRATE_JOB;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: readonly string[];
}

/** runManifest over FILES (a directory is an array of names); stdout throws WRITE_ERROR when given. */
async function run(
  argv: readonly string[],
  files: Record<string, string | readonly string[]> = {},
  writeError?: string,
  plugin = false,
): Promise<Run> {
  let stdout = '';
  const stderr: string[] = [];
  const io: ManifestIo = {
    readFile: (path, maxBytes) => {
      const file = files[path];
      if (file === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
      if (typeof file !== 'string') throw Object.assign(new Error('a directory'), { code: 'EISDIR' });
      if (Buffer.byteLength(file) > maxBytes) throw Object.assign(new Error('too large'), { code: 'EFBIG' });
      return file;
    },
    listDir: (path) => {
      const file = files[path.replace(/\/$/, '')];
      if (file === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
      return typeof file === 'string' ? undefined : file;
    },
    stdout: (text) => {
      if (writeError !== undefined) throw Object.assign(new Error(writeError), { code: writeError });
      stdout += text;
    },
    stderr: (line) => stderr.push(line),
  };
  const code = await runManifest(argv, plugin ? `/usr/local/bin/${PLUGIN_NAME}` : 'istio-job-run', '9.9.9', io);
  return { code, stdout, stderr };
}

describe('flags in any order', () => {
  test('--native, --image and the mode flag before or after FILE give the same bytes', async () => {
    const files = { 'job.yaml': JOB };
    const native = await run(['--inject', 'job.yaml', '--native'], files);
    assert.equal(native.code, 0, native.stderr.join('\n'));
    assert.match(native.stdout, /nativeSidecar: "true"/);
    for (const argv of [
      ['--inject', '--native', 'job.yaml'],
      ['--native', '--inject', 'job.yaml'],
      ['--native', '--inject=job.yaml'],
    ]) {
      assert.deepEqual(await run(argv, files), native, argv.join(' '));
    }
    const image = await run(['--inject', 'job.yaml', '--image', 'mirror.example/ijr:1'], files);
    assert.match(image.stdout, /image: "mirror\.example\/ijr:1"/);
    for (const argv of [
      ['--image', 'mirror.example/ijr:1', '--inject', 'job.yaml'],
      ['--inject', '--image', 'mirror.example/ijr:1', 'job.yaml'],
      ['--image=mirror.example/ijr:1', '--inject', 'job.yaml'],
    ]) {
      assert.deepEqual(await run(argv, files), image, argv.join(' '));
    }
  });
  test('bad input: one line naming the flag and the value and what is allowed, exit 2', async () => {
    const cases: [readonly string[], RegExp][] = [
      [['--inject', 'job.yaml', '--native=yes'], /^--native: takes no value \("--native=yes"\)/],
      [
        ['--inject', 'job.yaml', '--image', 'Not An Image'],
        /^--image: "Not An Image" is not an image reference \(REGISTRY\/NAME\[:TAG\]\[@DIGEST\]\)/,
      ],
      [['--inject', 'job.yaml', '--image', ''], /^--image: needs a value \(--image IMAGE\)/],
      [['--inject', 'job.yaml', '--image'], /^--image: needs a value \(--image IMAGE\)/],
      [['--inject', '--native'], /^--inject: needs a value \(--inject FILE\)/],
      [
        ['--inject', 'job.yaml', '--colour'],
        /^"--colour" is not an option of --check or --inject \(--check FILE, --inject FILE, --image IMAGE, --native/,
      ],
      [['job.yaml'], /^"job\.yaml": a FILE goes after --check or --inject/],
      [['--inject', 'job.yaml', '--image', 'a:1', '--image', 'b:2'], /^--image: given twice \("a:1", "b:2"\)/],
    ];
    for (const [argv, message] of cases) {
      const result = await run(argv, { 'job.yaml': JOB });
      assert.equal(result.code, 2, argv.join(' '));
      assert.equal(result.stdout, '');
      assert.equal(result.stderr.length, 1, result.stderr.join('\n'));
      assert.match(result.stderr[0] ?? '', message);
    }
  });
});

describe('hostile files', () => {
  test(`past ${MAX_INPUT_MIB} MiB: one line naming the file and the limit, exit 2`, async () => {
    const result = await run(['--check', 'big.yaml', '--check', 'job.yaml'], {
      'big.yaml': ' '.repeat(MAX_INPUT_MIB * 1024 * 1024 + 1),
      'job.yaml': JOB,
    });
    assert.equal(result.code, 2);
    assert.deepEqual(result.stderr, [`big.yaml: larger than ${MAX_INPUT_MIB} MiB, the limit of a manifest file`]);
    assert.match(result.stdout, /^job\.yaml:\d+: error: unwrapped: /, 'the other file is still checked');
  });
  test('100,000 [ or nested maps: one line naming the file, exit 2, no stack', async () => {
    const deep = {
      'brackets.yaml': '['.repeat(100_000),
      'closed.yaml': `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
      'maps.yaml': `${'{a: '.repeat(100_000)}1${'}'.repeat(100_000)}`,
      'block.yaml': Array.from({ length: 3_000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n'),
    };
    for (const mode of ['--check', '--inject']) {
      for (const file of Object.keys(deep)) {
        const result = await run([mode, file], deep);
        assert.equal(result.code, 2, `${mode} ${file}`);
        assert.equal(result.stderr.length, 1, result.stderr.join('\n'));
        assert.match(result.stderr[0] ?? '', new RegExp(`^${file.replace('.', '\\.')}:(\\d+:)? not YAML: nested too deeply$`));
      }
    }
  });
});

describe('stdout', () => {
  test('a reader that left (EPIPE): quiet, and the exit code the findings give', async () => {
    assert.deepEqual(await run(['--check', 'job.yaml'], { 'job.yaml': JOB }, 'EPIPE'), { code: 1, stdout: '', stderr: [] });
    assert.deepEqual(await run(['--inject', 'job.yaml'], { 'job.yaml': JOB }, 'EPIPE'), { code: 0, stdout: '', stderr: [] });
    assert.deepEqual(await run(['--help'], {}, 'EPIPE'), { code: 0, stdout: '', stderr: [] });
  });
  test('a full disk or a closed stdout: one line with the errno, exit 2', async () => {
    for (const errno of ['ENOSPC', 'EBADF']) {
      for (const mode of ['--check', '--inject']) {
        assert.deepEqual(await run([mode, 'job.yaml'], { 'job.yaml': JOB }, errno), {
          code: 2,
          stdout: '',
          stderr: [`stdout cannot be written (${errno})`],
        });
      }
    }
  });
});

describe('the kubectl plugin', () => {
  const files = {
    manifests: ['b.yaml', 'a.yml', 'c.json', 'notes.txt', 'd.yaml.orig'],
    'manifests/a.yml': JOB.replaceAll('migrate', 'alpha'),
    'manifests/b.yaml': JOB.replaceAll('migrate', 'beta'),
    'manifests/c.json': JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gamma' } }),
    'job.yaml': JOB,
    empty: ['README.md'],
  };
  test('-f DIR: its .yaml, .yml and .json files, in name order; -f repeats', async () => {
    const result = await run(['check', '-f', 'manifests', '-f', 'job.yaml'], files, undefined, true);
    assert.equal(result.code, 1, result.stderr.join('\n'));
    assert.deepEqual(
      result.stdout.split('\n').map((line) => line.split(':')[0]),
      ['manifests/a.yml', 'manifests/b.yaml', 'job.yaml', ''],
    );
    const injected = await run(['inject', '-f', 'manifests/', '--native'], files, undefined, true);
    assert.equal(injected.code, 0, injected.stderr.join('\n'));
    assert.deepEqual(
      [...injected.stdout.matchAll(/^ {2}name: (\w+)$|"name":"(\w+)"/gm)].map((match) => match[1] ?? match[2]),
      ['alpha', 'beta', 'gamma'],
    );
    assert.equal(injected.stdout.split('\n---\n').length, 3, 'a --- between two files');
  });
  test('-f DIR with no manifest in it: one line, exit 2', async () => {
    const result = await run(['check', '-f', 'empty'], files, undefined, true);
    assert.deepEqual([result.code, result.stderr], [2, ['empty: a directory with no .yaml, .yml or .json file in it']]);
  });
});

test("--check a.yaml b.yaml: FILEs after the first are the same flag's, as the shell expands *.yaml", async () => {
  const files = { 'a.yaml': JOB, 'b.yaml': JOB.replace('migrate', 'other') };
  const both = await run(['--check', 'a.yaml', 'b.yaml'], files);
  assert.deepEqual(both, await run(['--check', 'a.yaml', '--check', 'b.yaml'], files));
  assert.equal(both.stdout.split('\n').filter(Boolean).length, 2);
});

describe('which namespaces inject, and commands the manifest does not show', () => {
  const PLAIN_JOB = JOB.replace('    metadata:\n      labels:\n        sidecar.istio.io/inject: "true"\n', '').replace(
    'metadata:\n  name: migrate\n',
    'metadata:\n  name: migrate\n  namespace: payments\n',
  );
  test('a plain Job is clean, and unwrapped once --injected-namespaces names its namespace', async () => {
    const files = { 'job.yaml': PLAIN_JOB };
    assert.deepEqual(await run(['--check', 'job.yaml'], files), { code: 0, stdout: '', stderr: [] });
    const named = await run(['--check', 'job.yaml', '--injected-namespaces', 'batch,payments'], files);
    assert.equal(named.code, 1);
    assert.match(named.stdout, /^job\.yaml:\d+: error: unwrapped: .*namespace payments injects it/);
    assert.equal((await run(['--check', 'job.yaml', '--injected-namespaces=linkerd=payments'], files)).code, 1);
    assert.equal((await run(['--check', 'job.yaml', '--injected-namespaces', 'batch'], files)).code, 0);
  });
  test('--namespace names the namespace of objects that name none', async () => {
    const files = { 'job.yaml': PLAIN_JOB.replace('  namespace: payments\n', '') };
    assert.equal((await run(['--check', 'job.yaml', '--injected-namespaces', 'payments'], files)).code, 0);
    assert.equal((await run(['--check', 'job.yaml', '--injected-namespaces', 'payments', '--namespace', 'payments'], files)).code, 1);
    assert.equal((await run(['--check', 'job.yaml', '--injected-namespaces', 'default'], files)).code, 1);
  });
  test('the variable ISTIO_JOB_RUN_INJECTED_NAMESPACES, which the flag beats', async () => {
    const files = { 'job.yaml': PLAIN_JOB };
    const io = (env: Record<string, string>): Promise<number> =>
      runManifest(
        ['--check', 'job.yaml', ...(env['flag'] === undefined ? [] : ['--injected-namespaces', env['flag']])],
        'istio-job-run',
        '9.9.9',
        {
          readFile: () => PLAIN_JOB,
          listDir: () => undefined,
          stdout: () => {},
          stderr: () => {},
          env,
        },
      );
    assert.equal(await io({ ISTIO_JOB_RUN_INJECTED_NAMESPACES: 'payments' }), 1);
    assert.equal(await io({ ISTIO_JOB_RUN_INJECTED_NAMESPACES: 'payments', flag: 'batch' }), 0);
    void files;
  });
  test('bad values name the flag, the value and what is allowed', async () => {
    const files = { 'job.yaml': PLAIN_JOB };
    for (const [argv, message] of [
      [
        ['--check', 'job.yaml', '--injected-namespaces', 'nginx=payments'],
        /--injected-namespaces: "nginx" is not a sidecar an injector adds \(istio, linkerd/,
      ],
      [['--check', 'job.yaml', '--injected-namespaces', 'Payments'], /--injected-namespaces: "Payments" is not a namespace name/],
      [['--check', 'job.yaml', '--namespace', 'a_b'], /--namespace: "a_b" is not a namespace name/],
      [['--inject', 'job.yaml', '--entrypoint', 'job'], /--entrypoint: "job" is not CONTAINER=COMMAND/],
      [['--check', 'job.yaml', '--entrypoint', 'job=/app/run'], /--entrypoint: goes with --inject, not --check/],
    ] as const) {
      const result = await run(argv, files);
      assert.equal(result.code, 2, argv.join(' '));
      assert.match(result.stderr.join('\n'), message);
    }
  });
  test('--entrypoint gives the command of a container with args only, so --inject can wrap it', async () => {
    const files = { 'job.yaml': JOB.replace('command: ["/app/migrate"]', 'args: ["--now"]') };
    const refused = await run(['--inject', 'job.yaml'], files);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr.join('\n'), /give it with --entrypoint job=ENTRYPOINT/);
    const given = await run(['--inject', 'job.yaml', '--entrypoint', 'job=/app/migrate --verbose'], files);
    assert.equal(given.code, 0, given.stderr.join('\n'));
    assert.match(given.stdout, /command: \["\/istio-job-run\/istio-job-run", "--", "\/app\/migrate", "--verbose"\]/);
  });
  test('the plugin passes -n, --injected-namespaces and --entrypoint on', async () => {
    const files = { 'job.yaml': PLAIN_JOB.replace('  namespace: payments\n', '') };
    const result = await run(['check', '-f', 'job.yaml', '-n', 'payments', '--injected-namespaces', 'payments'], files, undefined, true);
    assert.equal(result.code, 1, result.stderr.join('\n'));
  });
});

describe('--image-volume', () => {
  test('the flags in any order and the plugin give the same bytes: the image as a volume, no init container', async () => {
    const files = { 'job.yaml': JOB };
    const flags = await run(['--inject', 'job.yaml', '--image-volume', '--image', 'mirror.example/ijr:1'], files);
    assert.equal(flags.code, 0, flags.stderr.join('\n'));
    assert.match(
      flags.stdout,
      /^ {6}- name: istio-job-run\n {8}image:\n {10}reference: "mirror\.example\/ijr:1"\n {10}pullPolicy: IfNotPresent\n/m,
    );
    assert.doesNotMatch(flags.stdout, /initContainers|emptyDir/);
    for (const argv of [
      ['--image-volume', '--inject', 'job.yaml', '--image=mirror.example/ijr:1'],
      ['--inject', '--image-volume', 'job.yaml', '--image', 'mirror.example/ijr:1'],
    ]) {
      assert.deepEqual(await run(argv, files), flags, argv.join(' '));
    }
    const plugin = await run(['inject', '-f', 'job.yaml', '--image-volume', '--image', 'mirror.example/ijr:1'], files, undefined, true);
    assert.deepEqual(plugin, flags);
  });
  test('bad input: one line naming the flag, exit 2', async () => {
    const cases: [readonly string[], RegExp][] = [
      [['--inject', 'job.yaml', '--image-volume=yes'], /^--image-volume: takes no value \("--image-volume=yes"\)/],
      [['--check', 'job.yaml', '--image-volume'], /^--image-volume: goes with --inject, not --check/],
      [['--inject', 'job.yaml', '--native', '--image-volume'], /^--image-volume: --inject --native adds no wrapper/],
    ];
    for (const [argv, message] of cases) {
      const result = await run(argv, { 'job.yaml': JOB });
      assert.deepEqual([result.code, result.stdout, result.stderr.length], [2, '', 1], argv.join(' '));
      assert.match(result.stderr[0] ?? '', message);
    }
  });
});
