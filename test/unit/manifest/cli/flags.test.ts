// The parser of the manifest tools' flags (src/manifest/cli/flags.ts) where the other tests of the command line do
// not reach: the whole line of each refusal, the flags whose last value counts, a value flag waiting for its value
// past other flags, --help anywhere, and the config file that cannot be read.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ConfigFiles } from '../../../../src/manifest/cli/config-file.ts';
import { TOOL_FLAGS } from '../../../../src/config/tool-flags.ts';
import { parseFlags, type Request } from '../../../../src/manifest/cli/flags.ts';

const errorOf = (request: Request): string => (request.kind === 'error' ? request.message : `no error: ${request.kind}`);

describe('each refusal, its whole line', () => {
  const cases: [string[], string][] = [
    [['--check', 'a.yaml', '--inject', 'b.yaml'], '--check and --inject: use one at a time'],
    [[], '--check FILE, --inject FILE or --admission-policy is needed'],
    [['--native'], '--check FILE, --inject FILE or --admission-policy is needed'],
    [['--namespace-selector', 'a=b'], '--namespace-selector: goes with --admission-policy'],
    [['--inject', 'a.yaml', '--native', '--image', 'img:1'], '--image: --inject --native adds no init container, so it takes no image'],
    [['--admission-policy', '--native', '--image', 'img:1'], '--image: --native adds no init container, so it takes no image'],
    [['--inject', 'a.yaml', '--image', ''], '--image: needs a value (--image IMAGE), not ""'],
    [['--check='], '--check: needs a value (--check FILE), not ""'],
    [['--inject', 'a.yaml', '--image'], '--image: needs a value (--image IMAGE)'],
    [['--inject', 'a.yaml', '--image', 'img:1', '--image', 'img:1'], '--image: given twice ("img:1", "img:1"): one IMAGE'],
    [['--check', 'a.yaml', '--config', 'a.yml', '--config=b.yml'], '--config: given twice ("a.yml", "b.yml"): one FILE'],
    [
      ['--check', 'a.yaml', '--failure-threshold', 'info', '--failure-threshold=none'],
      '--failure-threshold: given twice ("info", "none"): one of error|warning|info|none',
    ],
    [['--check', 'a.yaml', '--wrapper=1'], '--wrapper: takes no value ("--wrapper=1"): it is on when given'],
    [['--admission-policy', '--namespace-selector', 'a in (b,c d)'], '--namespace-selector: "a in (b,c d)": a value is not a label value'],
    [
      ['--admission-policy', '--entrypoint', 'job=/app'],
      `--entrypoint: goes with --inject, not --admission-policy: the API server does not show a policy an image's ENTRYPOINT`,
    ],
    [['--check', 'a.yaml', '-x=1'], '"-x=1" is not an option of --check, --inject or --admission-policy ('],
    [['--check', 'a.yaml', '--help=1'], '"--help=1" is not an option of --check, --inject or --admission-policy ('],
  ];
  for (const [argv, message] of cases) {
    test(argv.join(' ') || '(nothing)', () => {
      const error = errorOf(parseFlags(argv, {}));
      if (message.endsWith('(')) assert.ok(error.startsWith(message), error);
      else assert.equal(error, message);
    });
  }
});

test('--help or -h anywhere is the help, whatever else the line holds', () => {
  for (const argv of [
    ['--bogus', '-h'],
    ['--check', 'a.yaml', '--format', 'nope', '--help'],
    ['-h', '--check='],
  ])
    assert.deepEqual(parseFlags(argv, {}), { kind: 'help' }, argv.join(' '));
});

test('the same value twice of a flag given once is no refusal', () => {
  const request = parseFlags(
    ['--check', 'a.yaml', '--format', 'json', '--format=json', '--config', 'c.yml', '--config', 'c.yml'],
    {},
    {
      cwd: '/w',
      read: (path) => (path === 'c.yml' ? 'kubernetes: 1.30\n' : undefined),
      exists: () => false,
    },
  );
  assert.equal(request.kind, 'check');
  if (request.kind === 'check') assert.equal(request.output.format, 'json');
});

test('the last value counts for the flags that are not repeatable and not refused twice', () => {
  const inject = parseFlags(
    [
      '--inject',
      'a.yaml',
      '--kubernetes',
      '1.29',
      '--kubernetes=1.31',
      '--namespace',
      'a',
      '--namespace',
      'b',
      '--entrypoint',
      'job=/x',
      '--entrypoint',
      'job=/y z',
    ],
    {},
  );
  assert.equal(inject.kind, 'inject');
  if (inject.kind !== 'inject') return;
  assert.deepEqual(inject.profile, { kubernetes: [1, 31], meshes: [] });
  assert.equal(inject.settings.namespace, 'b');
  assert.deepEqual([...inject.settings.entrypoints], [['job', ['/y', 'z']]]);
  const policy = parseFlags(
    ['--admission-policy', '--api-version', 'v1beta1', '--api-version=v1', '--namespace-selector', 'a', '--namespace-selector', '!b'],
    {},
  );
  assert.equal(policy.kind, 'policy');
  if (policy.kind !== 'policy') return;
  assert.equal(policy.version, 'v1');
  assert.deepEqual(policy.namespaceSelector, { matchExpressions: [{ key: 'b', operator: 'DoesNotExist' }] });
});

test('a value flag followed by flags waits for the next argument that is none; the FILEs after fill in order', () => {
  const request = parseFlags(['--inject', '--native', 'a.yaml', 'b.yaml'], {});
  assert.equal(request.kind, 'inject');
  if (request.kind === 'inject') assert.deepEqual([request.files, request.native], [['a.yaml', 'b.yaml'], true]);
  const two = parseFlags(['--check', '--format', '--ignore', 'hand-rolled-quit', 'a.yaml', 'json'], {});
  assert.equal(two.kind, 'check');
  if (two.kind === 'check')
    assert.deepEqual([two.files, two.output.format, [...two.output.ignore]], [['a.yaml'], 'json', ['hand-rolled-quit']]);
});

test('a config file that cannot be read: one line with its error code', () => {
  const files: ConfigFiles = {
    cwd: '/w',
    read: () => {
      throw Object.assign(new Error('denied'), { code: 'EACCES' });
    },
    exists: () => false,
  };
  assert.equal(errorOf(parseFlags(['--check', 'a.yaml', '--config', 'c.yml'], {}, files)), '--config: c.yml: cannot be read (EACCES)');
});

/** A field of a request, by its path. */
const field = (request: Request, ...path: string[]): unknown =>
  path.reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], request);

/** Each flag of the table given, and where its value shows in what is asked for. */
const READ: Readonly<Record<string, readonly [readonly string[], readonly string[], unknown]>> = {
  '--check': [['--check', 'a.yaml'], ['files'], ['a.yaml']],
  '--inject': [['--inject=a.yaml'], ['files'], ['a.yaml']],
  '--admission-policy': [['--admission-policy'], ['kind'], 'policy'],
  '--image': [['--inject', 'a.yaml', '--image', 'reg/img:1'], ['image'], 'reg/img:1'],
  '--native': [['--inject', 'a.yaml', '--native'], ['native'], true],
  '--wrapper': [['--inject', 'a.yaml', '--wrapper'], ['wrapper'], true],
  '--image-volume': [['--inject', 'a.yaml', '--image-volume'], ['imageVolume'], true],
  '--entrypoint': [['--inject', 'a.yaml', '--entrypoint', 'job=/a b'], ['settings', 'entrypoints'], new Map([['job', ['/a', 'b']]])],
  '--injected-namespaces': [
    ['--check', 'a.yaml', '--injected-namespaces', 'x,linkerd=*'],
    ['settings', 'namespaces'],
    new Map([
      ['istio', new Set(['x'])],
      ['linkerd', new Set(['*'])],
    ]),
  ],
  '--namespace': [['--check', 'a.yaml', '--namespace', 'ns'], ['settings', 'namespace'], 'ns'],
  '--kubernetes': [
    ['--admission-policy', '--kubernetes', '1.32'],
    ['profile', 'kubernetes'],
    [1, 32],
  ],
  '--mesh': [['--check', 'a.yaml', '--mesh', 'linkerd=2.20'], ['profile', 'meshes'], [{ name: 'linkerd', version: [2, 20] }]],
  '--config': [
    ['--check', 'a.yaml', '--config', 'c.yml'],
    ['profile', 'kubernetes'],
    [1, 30],
  ],
  '--format': [['--check', 'a.yaml', '--format', 'sarif'], ['output', 'format'], 'sarif'],
  '--failure-threshold': [['--check', 'a.yaml', '--failure-threshold', 'info'], ['output', 'threshold'], 'info'],
  '--ignore': [['--check', 'a.yaml', '--ignore', 'hand-rolled-quit'], ['output', 'ignore'], new Set(['hand-rolled-quit'])],
  '--api-version': [['--admission-policy', '--api-version', 'v1beta1'], ['version'], 'v1beta1'],
  '--namespace-selector': [['--admission-policy', '--namespace-selector', 'a=b'], ['namespaceSelector'], { matchLabels: { a: 'b' } }],
  '--help': [['--check', 'a.yaml', '--help'], ['kind'], 'help'],
};

test('every flag of the table is read into what is asked for', () => {
  assert.deepEqual(
    TOOL_FLAGS.map((row) => row.flag).filter((flag) => READ[flag] === undefined),
    [],
  );
  const files: ConfigFiles = { cwd: '/w', read: (path) => (path === 'c.yml' ? 'kubernetes: 1.30\n' : undefined), exists: () => false };
  for (const [flag, [argv, path, expected]] of Object.entries(READ))
    assert.deepEqual(field(parseFlags(argv, {}, files), ...path), expected, flag);
});
