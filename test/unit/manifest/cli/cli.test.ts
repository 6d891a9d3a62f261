// The manifest tools' command line, through runManifest with files, directories and stdout in memory: flags in
// any order, bad values named, the size limit, a stdout that cannot be written, and the kubectl plugin's -f DIR.
// Deep nesting: test/e2e/manifest-size.test.ts.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { type ManifestIo, MAX_INPUT_MIB, runManifest } from '../../../../src/manifest/cli/cli.ts';
import { isManifestInvocation, PLUGIN_NAME } from '../../../../src/manifest/cli/select.ts';
import { parsePlugin } from '../../../../src/manifest/cli/flags.ts';
import { TOOL_FLAG, TOOL_FLAGS } from '../../../../src/config/tool-flags.ts';
import { RULE_SUMMARIES } from '../../../../src/manifest/check/rules.ts';
import { NO_PROFILE } from '../../../../src/config/profile.ts';
import { MIGRATE_JOB } from '../../../support/manifest.ts';
import { root } from '../../../support/process.ts';

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
  env: Record<string, string> = {},
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
    env,
  };
  const code = await runManifest(argv, plugin ? `/usr/local/bin/${PLUGIN_NAME}` : 'istio-job-run', '9.9.9', io);
  // Said once by every run that states no profile (profile-flags.test.ts), left out of what the tests here compare.
  const noted = stderr.filter((line) => line === NO_PROFILE).length;
  assert.ok(noted <= 1, stderr.join('\n'));
  return { code, stdout, stderr: stderr.filter((line) => line !== NO_PROFILE) };
}

describe('flags in any order', () => {
  test("the selector takes every flag of the table before its tool's flag, and the plugin takes it after its command", () => {
    for (const { flag, argument, tools, mode } of TOOL_FLAGS) {
      if (mode === true) continue;
      for (const tool of tools) {
        const given = argument === undefined ? [flag] : [flag, 'x'];
        for (const argv of [
          [...given, TOOL_FLAG[tool], 'job.yaml'],
          [`${given.join('=')}`, TOOL_FLAG[tool], 'job.yaml'],
        ])
          assert.ok(isManifestInvocation(argv, 'istio-job-run'), argv.join(' '));
        if (tool === 'policy') continue;
        const plugin = parsePlugin([tool, '-f', 'job.yaml', ...given], {});
        assert.ok(plugin.kind !== 'error' || !/is not an option/.test(plugin.message), `${tool} ${given.join(' ')}`);
      }
    }
    // The wrapper's own options and a command stay the wrapper's.
    for (const argv of [
      ['--', '--check', 'x'],
      ['--quit', 'always', '--check'],
      ['job', '--check'],
      ['--format', 'json', 'job', '--check'],
    ])
      assert.equal(isManifestInvocation(argv, 'istio-job-run'), false, argv.join(' '));
  });
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
        /^"--colour" is not an option of --check, --inject or --admission-policy \(--check FILE, --inject FILE, --admission-policy, --image IMAGE, --native/,
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
  test('--check DIR and --inject DIR read a directory as -f DIR does', async () => {
    const pairs: [string[], string[]][] = [
      [
        ['--check', 'manifests', 'job.yaml'],
        ['check', '-f', 'manifests', '-f', 'job.yaml'],
      ],
      [
        ['--inject', 'manifests/', '--native'],
        ['inject', '-f', 'manifests/', '--native'],
      ],
      [
        ['--check', 'empty'],
        ['check', '-f', 'empty'],
      ],
    ];
    for (const [flags, plugin] of pairs) {
      const byFlags = await run(flags, files);
      assert.deepEqual(byFlags, await run(plugin, files, undefined, true), flags.join(' '));
      assert.ok(byFlags.stdout !== '' || byFlags.stderr.length > 0, flags.join(' '));
    }
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

/** A Job of the mesh whose one container runs SCRIPT, with ANNOTATIONS on the Job's own metadata. */
const meshJob = (script: string, annotations = ''): string =>
  [
    'apiVersion: batch/v1',
    'kind: Job',
    'metadata:',
    '  name: task',
    ...(annotations === '' ? [] : ['  annotations:', `    ${annotations}`]),
    'spec:',
    '  template:',
    '    metadata:',
    '      labels: {sidecar.istio.io/inject: "true"}',
    '    spec:',
    '      restartPolicy: Never',
    '      containers:',
    '      - name: job',
    '        image: x',
    '        command: ["sh", "-c"]',
    '        args:',
    '        - |',
    ...script.split('\n').map((line) => `          ${line}`),
    '',
  ].join('\n');
const SKIPPED = './task.sh && curl -XPOST localhost:15020/quitquitquit';
const HAND_ROLLED = './task.sh; rc=$?\ncurl -XPOST localhost:15020/quitquitquit\nexit $rc';
/** An error (line 17), a warning (a key written twice, line 14) and an info (line 18, a hand-rolled quit). */
const LEVELLED = {
  'error.yaml': meshJob(SKIPPED),
  'warning.yaml': meshJob(`./task.sh; rc=$?\ncurl -XPOST localhost:15020/quitquitquit\nexit $rc`).replace(
    '        image: x\n',
    '        image: x\n        image: y\n',
  ),
  'info.yaml': meshJob(HAND_ROLLED),
};

describe('--check for CI: formats, levels and the failure threshold', () => {
  test('without the new flags: the text lines and exit codes as always (error 1, warning and info 0)', async () => {
    const error = await run(['--check', 'error.yaml'], LEVELLED);
    assert.equal(error.code, 1);
    assert.match(
      error.stdout,
      /^error\.yaml:17: error: quit-skipped-on-failure: container job: this quit runs only after the job succeeded, .*\n$/,
    );
    assert.deepEqual(error.stderr, []);
    const info = await run(['--check', 'info.yaml'], LEVELLED);
    assert.equal(info.code, 0);
    assert.match(
      info.stdout,
      /^info\.yaml:18: info: hand-rolled-quit: container job: this quit works, but has no wait .*curl.*istio-job-run replaces it/,
    );
    assert.equal((await run(['--check', 'warning.yaml'], LEVELLED)).code, 0);
    for (const file of Object.keys(LEVELLED))
      assert.deepEqual(await run(['--check', file, '--format', 'text'], LEVELLED), await run(['--check', file], LEVELLED));
  });

  test('--failure-threshold: exit 1 when a finding at or above it remains', async () => {
    const cases: [string, string, number][] = [
      ['error.yaml', 'error', 1],
      ['error.yaml', 'none', 0],
      ['warning.yaml', 'error', 0],
      ['warning.yaml', 'warning', 1],
      ['warning.yaml', 'info', 1],
      ['info.yaml', 'warning', 0],
      ['info.yaml', 'info', 1],
      ['info.yaml', 'none', 0],
    ];
    for (const [file, threshold, code] of cases) {
      const result = await run(['--check', file, `--failure-threshold=${threshold}`], LEVELLED);
      assert.equal(result.code, code, `${file} --failure-threshold ${threshold}`);
    }
  });

  test("--format json: one array of every file's findings, with file, line, column where known, level, rule, message, instead", async () => {
    const result = await run(['--check', 'error.yaml', 'warning.yaml', '--format', 'json'], LEVELLED);
    assert.equal(result.code, 1);
    const findings = JSON.parse(result.stdout) as Record<string, unknown>[];
    assert.deepEqual(
      findings.map(({ file, line, column, level, rule }) => ({ file, line, column, level, rule })),
      [
        { file: 'error.yaml', line: 17, column: undefined, level: 'error', rule: 'quit-skipped-on-failure' },
        { file: 'warning.yaml', line: 14, column: 9, level: 'warning', rule: 'duplicate-key' },
        { file: 'warning.yaml', line: 19, column: undefined, level: 'info', rule: 'hand-rolled-quit' },
      ],
    );
    assert.match(String(findings[0]?.['instead']), /^quit in a trap on EXIT, or run the job's command under istio-job-run/);
    for (const finding of findings) assert.ok(String(finding['message']).endsWith(String(finding['instead'] ?? '')));
    assert.equal((await run(['--check', 'info.yaml', '--format=json'], LEVELLED)).code, 0);
    assert.equal(
      (
        await run(['--check', 'info.yaml', '--format=json'], {
          'info.yaml': 'kind: ConfigMap\n',
        })
      ).stdout,
      '[]\n',
    );
  });

  test('--format sarif: one run, every rule with a link to its row of docs/MANIFESTS.md, each result at its file and line', async () => {
    const result = await run(['--check', 'ci/error.yaml', '--format', 'sarif'], { 'ci/error.yaml': LEVELLED['error.yaml'] });
    assert.equal(result.code, 1);
    const log = JSON.parse(result.stdout);
    assert.equal(log.version, '2.1.0');
    assert.equal(log.runs.length, 1);
    const [run0] = log.runs;
    assert.equal(run0.tool.driver.version, '9.9.9');
    const docs = readFileSync(join(root, 'docs', 'MANIFESTS.md'), 'utf8');
    assert.deepEqual(
      run0.tool.driver.rules.map((rule: { id: string }) => rule.id),
      Object.keys(RULE_SUMMARIES),
    );
    for (const rule of run0.tool.driver.rules) {
      assert.ok(rule.shortDescription.text.length > 10);
      const anchor = /docs\/MANIFESTS\.md#([\w-]+)/.exec(rule.help.text)?.[1];
      assert.ok(anchor !== undefined && docs.includes(`<a id="${anchor}"></a>`), `${rule.id}: ${anchor} is an anchor of docs/MANIFESTS.md`);
    }
    assert.deepEqual(run0.results, [
      {
        ruleId: 'quit-skipped-on-failure',
        ruleIndex: Object.keys(RULE_SUMMARIES).indexOf('quit-skipped-on-failure'),
        level: 'error',
        message: {
          text: JSON.parse((await run(['--check', 'e.yaml', '--format', 'json'], { 'e.yaml': LEVELLED['error.yaml'] })).stdout)[0].message,
        },
        locations: [{ physicalLocation: { artifactLocation: { uri: 'ci/error.yaml', uriBaseId: 'SRCROOT' }, region: { startLine: 17 } } }],
      },
    ]);
  });

  test('bad values: one line naming the flag, the value and what is allowed, exit 2', async () => {
    const cases: [readonly string[], string][] = [
      [['--check', 'error.yaml', '--format', 'xml'], '--format: "xml" is not one of text|json|sarif'],
      [['--check', 'error.yaml', '--failure-threshold=style'], '--failure-threshold: "style" is not one of error|warning|info|none'],
      [
        ['--check', 'error.yaml', '--format', 'json', '--format', 'sarif'],
        '--format: given twice ("json", "sarif"): one of text|json|sarif',
      ],
      [['--inject', 'error.yaml', '--format', 'json'], '--format: goes with --check, not --inject'],
      [['--inject', 'error.yaml', '--ignore=unwrapped'], '--ignore: goes with --check, not --inject'],
    ];
    for (const [argv, message] of cases) {
      const result = await run(argv, LEVELLED);
      assert.deepEqual([result.code, result.stdout, result.stderr], [2, '', [`${message} (see istio-job-run --help)`]], argv.join(' '));
    }
  });

  test('the plugin passes --format, --failure-threshold and --ignore on', async () => {
    const result = await run(['check', '-f', 'info.yaml', '--format', 'json', '--failure-threshold', 'info'], LEVELLED, undefined, true);
    assert.equal(result.code, 1);
    assert.equal(JSON.parse(result.stdout)[0].rule, 'hand-rolled-quit');
    assert.equal((await run(['check', '-f', 'info.yaml', '--ignore', 'hand-rolled-quit'], LEVELLED, undefined, true)).stdout, '');
  });
});

describe('--check suppressions', () => {
  const SUMMARY = '--check: 1 finding suppressed';
  test('--ignore RULE (repeatable, or a list) and ISTIO_JOB_RUN_IGNORE, which the flag beats', async () => {
    const ignored = await run(['--check', 'error.yaml', '--ignore', 'quit-skipped-on-failure'], LEVELLED);
    assert.deepEqual(ignored, { code: 0, stdout: '', stderr: [`${SUMMARY} (1 by --ignore or ISTIO_JOB_RUN_IGNORE)`] });
    const both = await run(
      ['--check', 'error.yaml', 'info.yaml', '--ignore=hand-rolled-quit', '--ignore', 'duplicate-key,quit-skipped-on-failure'],
      LEVELLED,
    );
    assert.deepEqual([both.code, both.stdout], [0, '']);
    const env = { ISTIO_JOB_RUN_IGNORE: 'quit-skipped-on-failure, hand-rolled-quit' };
    assert.deepEqual((await run(['--check', 'error.yaml'], LEVELLED, undefined, false, env)).code, 0);
    const beaten = await run(['--check', 'error.yaml', '--ignore', 'hand-rolled-quit'], LEVELLED, undefined, false, env);
    assert.equal(beaten.code, 1);
  });

  test('an unknown rule id is a warning naming it and where the ids are; the rest still apply', async () => {
    const result = await run(['--check', 'error.yaml', '--ignore', 'quit-skiped-on-failure'], LEVELLED);
    assert.equal(result.code, 1);
    assert.deepEqual(result.stderr, [
      '--ignore: "quit-skiped-on-failure" is not a rule of --check, ignored (the rules: istio-job-run --check --help)',
    ]);
    const env = await run(['--check', 'info.yaml'], LEVELLED, undefined, false, { ISTIO_JOB_RUN_IGNORE: 'nope,hand-rolled-quit' });
    assert.deepEqual(env.stderr, [
      'ISTIO_JOB_RUN_IGNORE: "nope" is not a rule of --check, ignored (the rules: istio-job-run --check --help)',
      `${SUMMARY} (1 by --ignore or ISTIO_JOB_RUN_IGNORE)`,
    ]);
  });

  test('the istio-job-run.io/ignore annotation, on the object or its pod template, for that object only', async () => {
    const onJob = meshJob(SKIPPED, 'istio-job-run.io/ignore: "hand-rolled-quit,quit-skipped-on-failure"');
    const onTemplate = meshJob(SKIPPED).replace(
      '      labels: {sidecar.istio.io/inject: "true"}\n',
      '      labels: {sidecar.istio.io/inject: "true"}\n      annotations: {istio-job-run.io/ignore: "quit-skipped-on-failure, nope"}\n',
    );
    for (const manifest of [onJob, onTemplate]) {
      const result = await run(['--check', 'j.yaml'], { 'j.yaml': `${manifest}---\n${meshJob(SKIPPED)}` });
      assert.equal(result.code, 1, 'the second Job is not suppressed');
      assert.deepEqual(result.stdout.split('\n').filter((line) => line !== '').length, 1, result.stdout);
      assert.match(
        result.stdout,
        manifest === onJob ? /^j\.yaml:37: error: quit-skipped-on-failure/ : /^j\.yaml:36: error: quit-skipped-on-failure/,
      );
      assert.equal(result.stderr.at(-1), `${SUMMARY} (1 by istio-job-run.io/ignore)`);
    }
    const warned = await run(['--check', 'j.yaml'], { 'j.yaml': onTemplate });
    assert.deepEqual(
      warned.stderr[0],
      'j.yaml:9: istio-job-run.io/ignore: "nope" is not a rule of --check, ignored (the rules: istio-job-run --check --help)',
    );
  });

  test('a # istio-job-run ignore=RULE comment on the line above or at the end of the line at fault, for that finding', async () => {
    const above = meshJob(`./task.sh; rc=$?\n# istio-job-run ignore=hand-rolled-quit\ncurl -XPOST localhost:15020/quitquitquit\nexit $rc`);
    const atEnd = meshJob(
      `./task.sh && curl -XPOST localhost:15020/quitquitquit  # istio-job-run ignore=duplicate-key,quit-skipped-on-failure`,
    );
    const yamlComment = LEVELLED['warning.yaml'].replace('        image: y\n', '        image: y # istio-job-run ignore=duplicate-key\n');
    for (const manifest of [above, atEnd, yamlComment]) {
      const result = await run(['--check', 'j.yaml', '--failure-threshold', 'info'], { 'j.yaml': manifest });
      assert.equal(result.stderr.at(-1), `${SUMMARY} (1 by comment)`, manifest);
    }
    assert.equal((await run(['--check', 'j.yaml'], { 'j.yaml': atEnd })).code, 0);
    const below = meshJob(`./task.sh && curl -XPOST localhost:15020/quitquitquit\n# istio-job-run ignore=quit-skipped-on-failure`);
    const far = await run(['--check', 'j.yaml'], { 'j.yaml': below });
    assert.deepEqual([far.code, far.stderr], [1, []], 'a comment below the line at fault suppresses nothing');
    const unknown = await run(['--check', 'j.yaml'], { 'j.yaml': meshJob(`# istio-job-run ignore=everything\n${SKIPPED}`) });
    assert.deepEqual(unknown.stderr, [
      'j.yaml:17: # istio-job-run ignore=: "everything" is not a rule of --check, ignored (the rules: istio-job-run --check --help)',
    ]);
    assert.equal(unknown.code, 1);
  });

  test('the comment counts only as a comment: of the YAML or of a script, never inside a string or a value', async () => {
    const marker = '# istio-job-run ignore=quit-skipped-on-failure';
    const keyMarker = '# istio-job-run ignore=duplicate-key';
    const suppressedBy = async (manifest: string): Promise<string | undefined> => {
      const result = await run(['--check', 'j.yaml', '--failure-threshold', 'info'], { 'j.yaml': manifest });
      return result.stderr.find((line) => line.startsWith(SUMMARY));
    };
    const comments = {
      'a YAML comment': LEVELLED['warning.yaml'].replace('        image: y\n', `        image: y  ${keyMarker}\n`),
      'a YAML comment after a block header': meshJob(SKIPPED).replace('        - |\n', `        - |  ${marker}\n`),
      'a comment of a script': meshJob(`${SKIPPED}  ${marker}`),
      'a comment of a script in a quoted YAML string': meshJob(SKIPPED).replace(
        `        - |\n          ${SKIPPED}\n`,
        `        - "${SKIPPED}  ${marker}"\n`,
      ),
    };
    for (const [where, manifest] of Object.entries(comments)) {
      assert.equal(await suppressedBy(manifest), `${SUMMARY} (1 by comment)`, where);
    }
    const notComments = {
      "a script's double-quoted string": meshJob(`./task.sh && echo "see ${marker} here" && curl -XPOST localhost:15020/quitquitquit`),
      "a script's single-quoted string": meshJob(`./task.sh && echo '${marker} here' && curl -XPOST localhost:15020/quitquitquit`),
      "a script's word": meshJob(`./task.sh && echo see${marker} && curl -XPOST localhost:15020/quitquitquit`),
      'a quoted YAML value': LEVELLED['warning.yaml'].replace('        image: x\n', `        image: "x ${keyMarker} here"\n`),
      'a plain YAML value': LEVELLED['warning.yaml'].replace('        image: x\n', `        image: x${keyMarker}\n`),
      'a block YAML value that is no script': LEVELLED['warning.yaml'].replace(
        '        image: x\n',
        `        image: x\n        env:\n        - name: NOTES\n          value: |\n            ${keyMarker}\n`,
      ),
    };
    for (const [where, manifest] of Object.entries(notComments)) {
      assert.equal(await suppressedBy(manifest), undefined, where);
    }
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
      [['--check', 'job.yaml', '--image-volume'], /^--image-volume: goes with --inject or --admission-policy, not --check/],
      [['--inject', 'job.yaml', '--native', '--image-volume'], /^--image-volume: --inject --native adds no wrapper/],
    ];
    for (const [argv, message] of cases) {
      const result = await run(argv, { 'job.yaml': JOB });
      assert.deepEqual([result.code, result.stdout, result.stderr.length], [2, '', 1], argv.join(' '));
      assert.match(result.stderr[0] ?? '', message);
    }
  });
});

describe('--admission-policy', () => {
  test('prints the policy and its binding, v1 unless --api-version says v1beta1, the selector as a LabelSelector', async () => {
    const printed = await run(['--admission-policy']);
    assert.equal(printed.code, 0, printed.stderr.join('\n'));
    assert.match(printed.stdout, /^apiVersion: admissionregistration\.k8s\.io\/v1\nkind: MutatingAdmissionPolicy\n/);
    assert.match(printed.stdout, /\n---\napiVersion: admissionregistration\.k8s\.io\/v1\nkind: MutatingAdmissionPolicyBinding\n/);
    assert.match(printed.stdout, /"istio-job-run:9\.9\.9"/, "the default image is this version's");
    const beta = await run([
      '--image=registry.example/istio-job-run:1',
      '--admission-policy',
      '--api-version',
      'v1beta1',
      '--namespace-selector',
      'env=prod,team in (a, b),!legacy,tier!=web,batch',
    ]);
    assert.equal(beta.code, 0, beta.stderr.join('\n'));
    const [policy] = parseAllDocuments(beta.stdout).map((document) => document.toJS());
    assert.equal(policy.apiVersion, 'admissionregistration.k8s.io/v1beta1');
    assert.deepEqual(policy.spec.matchConstraints.namespaceSelector, {
      matchLabels: { env: 'prod' },
      matchExpressions: [
        { key: 'team', operator: 'In', values: ['a', 'b'] },
        { key: 'legacy', operator: 'DoesNotExist' },
        { key: 'tier', operator: 'NotIn', values: ['web'] },
        { key: 'batch', operator: 'Exists' },
      ],
    });
    assert.match(beta.stdout, /registry\.example\/istio-job-run:1/);
  });

  test('bad input: one line naming the flag, the value and what is allowed, exit 2', async () => {
    const cases: [readonly string[], RegExp][] = [
      [['--admission-policy', '--api-version', 'v2'], /^--api-version: "v2" is not one of v1\|v1beta1/],
      [['--admission-policy', '--namespace-selector', 'a=b=c'], /^--namespace-selector: "a=b=c" is not KEY=VALUE/],
      [['--admission-policy', '--namespace-selector', ','], /^--namespace-selector: an empty selector/],
      [['--api-version', 'v1'], /^--api-version: goes with --admission-policy/],
      [['--admission-policy', '--inject', 'job.yaml'], /^--admission-policy: reads no FILE/],
      [
        ['--admission-policy', '--namespace', 'x'],
        /^--namespace: goes with --check or --inject, not --admission-policy: the policy reads each object's own namespace/,
      ],
      [['--admission-policy', '--entrypoint', 'job=/app'], /^--entrypoint: goes with --inject, not --admission-policy: the API server/],
      [['--admission-policy', '--native', '--image-volume'], /^--image-volume: --native adds no wrapper/],
      [['--admission-policy=yes'], /^--admission-policy: takes no value/],
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
