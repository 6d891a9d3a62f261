// --check's rules from a table: manifests that trip each rule, and manifests that must not. The project's own
// manifests (docker/k8s/) and the README's YAML check clean.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { check, type Finding, RULES, type RuleId } from '../../src/manifest/rules.ts';
import { parseSource } from '../../src/manifest/source.ts';
import { source } from '../support/manifest.ts';
import { root } from '../support/process.ts';

const indent = (text: string, by: number): string =>
  text
    .split('\n')
    .map((line) => (line === '' ? line : ' '.repeat(by) + line))
    .join('\n');

/** A Job with a pod spec (written at column 0, re-indented here), pod annotations and Job-level extras. */
function job(podSpec: string, options: { podMeta?: string; jobMeta?: string; jobSpec?: string } = {}): string {
  return [
    'apiVersion: batch/v1',
    'kind: Job',
    'metadata:',
    '  name: task',
    ...(options.jobMeta === undefined ? [] : [indent(options.jobMeta, 2)]),
    'spec:',
    ...(options.jobSpec === undefined ? [] : [indent(options.jobSpec, 2)]),
    '  template:',
    ...(options.podMeta === undefined ? [] : ['    metadata:', indent(options.podMeta, 6)]),
    '    spec:',
    indent(podSpec, 6),
    '',
  ].join('\n');
}

const WRAPPED = 'command: ["/opt/tools/istio-job-run", "--"]\nargs: ["./task.sh"]';
const container = (body: string, name = 'job'): string => `- name: ${name}\n  image: example\n${indent(body, 2)}`;
const pod = (body: string, restartPolicy = 'Never'): string => `restartPolicy: ${restartPolicy}\ncontainers:\n${container(body)}`;
const INJECTED = 'annotations:\n  sidecar.istio.io/inject: "true"';

interface Case {
  readonly name: string;
  readonly yaml: string;
  readonly rule: RuleId;
  /** The finding expected, or none: its level, and what the line it names (the first holding it) holds. */
  readonly expect?: { readonly at: string; readonly level: 'error' | 'warning' };
}

const CASES: readonly Case[] = [
  // prestop-quit
  {
    name: 'a preStop exec that curls quitquitquit',
    rule: 'prestop-quit',
    yaml: job(pod(`${WRAPPED}\nlifecycle:\n  preStop:\n    exec:\n      command: ["curl", "-X", "POST", "localhost:15020/quitquitquit"]`)),
    expect: { at: 'preStop:', level: 'error' },
  },
  {
    name: 'a preStop httpGet on /quitquitquit',
    rule: 'prestop-quit',
    yaml: job(pod(`${WRAPPED}\nlifecycle:\n  preStop:\n    httpGet: {path: /quitquitquit, port: 15020}`)),
    expect: { at: 'preStop:', level: 'error' },
  },
  {
    name: 'a preStop that sleeps',
    rule: 'prestop-quit',
    yaml: job(pod(`${WRAPPED}\nlifecycle:\n  preStop:\n    exec: {command: [sleep, "5"]}`)),
  },
  // misplaced-annotation
  {
    name: "the inject annotation on the Job's own metadata",
    rule: 'misplaced-annotation',
    yaml: job(pod(WRAPPED), { jobMeta: INJECTED }),
    expect: { at: 'sidecar.istio.io/inject', level: 'error' },
  },
  {
    name: "proxy.istio.io/config on a CronJob's Job template",
    rule: 'misplaced-annotation',
    yaml: [
      'kind: CronJob',
      'metadata: {name: c}',
      'spec:',
      '  jobTemplate:',
      '    metadata:',
      '      annotations:',
      '        proxy.istio.io/config: "{}"',
      '    spec:',
      '      template:',
      '        spec:',
      indent(pod(WRAPPED), 10),
      '',
    ].join('\n'),
    expect: { at: 'proxy.istio.io/config', level: 'error' },
  },
  { name: 'the inject annotation on the pod template', rule: 'misplaced-annotation', yaml: job(pod(WRAPPED), { podMeta: INJECTED }) },
  {
    name: 'an unrelated annotation on the Job',
    rule: 'misplaced-annotation',
    yaml: job(pod(WRAPPED), { jobMeta: 'annotations:\n  team: data' }),
  },
  // exit-on-job-completion
  {
    name: 'exitOnJobCompletion in proxy.istio.io/config',
    rule: 'exit-on-job-completion',
    yaml: job(pod(WRAPPED), { podMeta: 'annotations:\n  proxy.istio.io/config: "exitOnJobCompletion: true"' }),
    expect: { at: 'proxy.istio.io/config', level: 'error' },
  },
  {
    name: 'exitOnJobCompletion as an annotation',
    rule: 'exit-on-job-completion',
    yaml: job(pod(WRAPPED), { podMeta: 'annotations:\n  proxy.istio.io/exitOnJobCompletion: "true"' }),
    expect: { at: 'exitOnJobCompletion', level: 'error' },
  },
  {
    name: 'exitOnJobCompletion in a comment only',
    rule: 'exit-on-job-completion',
    yaml: job(pod(WRAPPED), { podMeta: '# not exitOnJobCompletion: it does not exist\nannotations: {}' }),
  },
  // quit-admin-port
  {
    name: "a quit URL on Envoy's admin port",
    rule: 'quit-admin-port',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit-url", "http://127.0.0.1:15000/quitquitquit", "--", "./task.sh"]')),
    expect: { at: 'command:', level: 'warning' },
  },
  {
    name: "a script quitting Envoy's admin port",
    rule: 'quit-admin-port',
    yaml: job(
      pod('command: ["/bin/sh", "-c"]\nargs: ["./task.sh; code=$?; curl -sf -XPOST http://localhost:15000/quitquitquit; exit $code"]'),
    ),
    expect: { at: 'args:', level: 'warning' },
  },
  {
    name: "a preStop httpGet on Envoy's admin port",
    rule: 'quit-admin-port',
    yaml: job(pod(`${WRAPPED}\nlifecycle:\n  preStop:\n    httpGet:\n      path: /quitquitquit\n      port: 15000`)),
    expect: { at: 'port: 15000', level: 'warning' },
  },
  {
    name: 'a quit on 15020',
    rule: 'quit-admin-port',
    yaml: job(pod('command: ["/bin/sh", "-c", "./t; c=$?; curl -XPOST localhost:15020/quitquitquit; exit $c"]')),
  },
  {
    name: 'a port 15000 that is no quit',
    rule: 'quit-admin-port',
    yaml: job(pod(`${WRAPPED}\nenv: [{name: ADMIN, value: "localhost:15000/ready"}]`)),
  },
  // shell-quit and exit-code-lost
  {
    name: 'a script that quits and keeps its code',
    rule: 'shell-quit',
    yaml: job(
      pod(
        'command: ["/bin/sh", "-c"]\nargs:\n- |\n  ./task.sh\n  code=$?\n  curl -fsS -X POST http://127.0.0.1:15020/quitquitquit\n  exit $code',
      ),
    ),
    expect: { at: 'args:', level: 'warning' },
  },
  {
    name: 'a script that keeps its code',
    rule: 'exit-code-lost',
    yaml: job(
      pod(
        'command: ["/bin/sh", "-c"]\nargs:\n- |\n  ./task.sh\n  code=$?\n  curl -fsS -X POST http://127.0.0.1:15020/quitquitquit\n  exit $code',
      ),
    ),
  },
  {
    name: 'a script whose last command is the quit',
    rule: 'exit-code-lost',
    yaml: job(pod('command: ["sh", "-ec", "./task.sh; curl -X POST http://127.0.0.1:15020/quitquitquit"]')),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a quit chained after the task, with a comment after it',
    rule: 'exit-code-lost',
    yaml: job(pod('command: ["/bin/bash", "-c"]\nargs:\n- |\n  ./task.sh && curl -XPOST localhost:15020/quitquitquit # stop the proxy\n')),
    expect: { at: 'args:', level: 'error' },
  },
  {
    name: 'a trap that quits on exit',
    rule: 'exit-code-lost',
    yaml: job(pod('command: ["sh", "-c", "./task.sh; trap \'curl -XPOST localhost:15020/quitquitquit\' EXIT"]')),
  },
  {
    name: 'a semicolon inside quotes',
    rule: 'exit-code-lost',
    yaml: job(pod('command: ["sh", "-c", "curl -XPOST \\"localhost:15020/quitquitquit;\\"; ./task.sh"]')),
  },
  { name: 'a container that runs the wrapper', rule: 'shell-quit', yaml: job(pod(WRAPPED)) },
  {
    name: "the wrapper's own --quit-url",
    rule: 'shell-quit',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit-url", "http://127.0.0.1:15020/quitquitquit", "--", "./task.sh"]')),
  },
  // proxy-command-override
  {
    name: 'an istio-proxy container with a command',
    rule: 'proxy-command-override',
    yaml: job(
      `restartPolicy: Never\ncontainers:\n${container(WRAPPED)}\n${container('command: ["/bin/sh", "-c", "sleep 5; pilot-agent proxy"]', 'istio-proxy')}`,
    ),
    expect: { at: 'sleep 5', level: 'error' },
  },
  {
    name: 'an istio-proxy overlay with resources only',
    rule: 'proxy-command-override',
    yaml: job(
      `restartPolicy: Never\ncontainers:\n${container(WRAPPED)}\n${container('resources: {limits: {memory: 1Gi}}', 'istio-proxy')}`,
    ),
  },
  // onfailure-quit-always
  {
    name: 'OnFailure with the default quit policy',
    rule: 'onfailure-quit-always',
    yaml: job(pod(WRAPPED, 'OnFailure')),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'OnFailure with --quit always written out',
    rule: 'onfailure-quit-always',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit=always", "--", "./task.sh"]', 'OnFailure')),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'OnFailure with --quit on-success',
    rule: 'onfailure-quit-always',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit", "on-success", "--"]', 'OnFailure')),
  },
  {
    name: 'OnFailure with ISTIO_JOB_RUN_QUIT=on-success',
    rule: 'onfailure-quit-always',
    yaml: job(pod(`${WRAPPED}\nenv: [{name: ISTIO_JOB_RUN_QUIT, value: on-success}]`, 'OnFailure')),
  },
  { name: 'Never with the default quit policy', rule: 'onfailure-quit-always', yaml: job(pod(WRAPPED)) },
  // pod-failure-policy-container
  {
    name: 'an onExitCodes rule without containerName',
    rule: 'pod-failure-policy-container',
    yaml: job(pod(WRAPPED), { jobSpec: 'podFailurePolicy:\n  rules:\n  - action: FailJob\n    onExitCodes: {operator: In, values: [42]}' }),
    expect: { at: 'onExitCodes', level: 'warning' },
  },
  {
    name: 'podFailurePolicy under OnFailure',
    rule: 'pod-failure-policy-container',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit", "on-success", "--"]', 'OnFailure'), {
      jobSpec: 'podFailurePolicy:\n  rules:\n  - action: FailJob\n    onExitCodes: {containerName: job, operator: In, values: [42]}',
    }),
    expect: { at: 'podFailurePolicy:', level: 'warning' },
  },
  {
    name: 'an onExitCodes rule with containerName',
    rule: 'pod-failure-policy-container',
    yaml: job(pod(WRAPPED), {
      jobSpec: 'podFailurePolicy:\n  rules:\n  - action: FailJob\n    onExitCodes: {containerName: job, operator: In, values: [42]}',
    }),
  },
  {
    name: 'an onExitCodes rule without containerName where injection is off',
    rule: 'pod-failure-policy-container',
    yaml: job(pod('command: ["./task.sh"]'), {
      podMeta: 'labels:\n  sidecar.istio.io/inject: "false"',
      jobSpec: 'podFailurePolicy:\n  rules:\n  - action: FailJob\n    onExitCodes: {operator: In, values: [42]}',
    }),
  },
  // exit-on-zero-connections
  {
    name: 'EXIT_ON_ZERO_ACTIVE_CONNECTIONS in proxyMetadata',
    rule: 'exit-on-zero-connections',
    yaml: job(pod(WRAPPED), {
      podMeta: 'annotations:\n  proxy.istio.io/config: |\n    proxyMetadata:\n      EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"',
    }),
    expect: { at: 'proxy.istio.io/config', level: 'warning' },
  },
  {
    name: 'EXIT_ON_ZERO_ACTIVE_CONNECTIONS on the job container',
    rule: 'exit-on-zero-connections',
    yaml: job(pod(`${WRAPPED}\nenv:\n- name: EXIT_ON_ZERO_ACTIVE_CONNECTIONS\n  value: "true"`)),
    expect: { at: 'name: EXIT_ON_ZERO', level: 'warning' },
  },
  {
    name: 'another proxyMetadata setting',
    rule: 'exit-on-zero-connections',
    yaml: job(pod(WRAPPED), { podMeta: 'annotations:\n  proxy.istio.io/config: "holdApplicationUntilProxyStarts: true"' }),
  },
  // unwrapped
  {
    name: 'a plain Job in a namespace that may inject',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]')),
    expect: { at: '    spec:', level: 'warning' },
  },
  {
    name: 'a plain Job whose pod asks for injection',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: INJECTED }),
    expect: { at: '    spec:', level: 'error' },
  },
  {
    name: 'a plain Job whose pod has a revision label',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'labels: {istio.io/rev: canary}' }),
    expect: { at: '    spec:', level: 'error' },
  },
  {
    name: 'a bare Pod that asks for injection and never restarts',
    rule: 'unwrapped',
    yaml: 'kind: Pod\nmetadata:\n  name: p\n  labels: {sidecar.istio.io/inject: "true"}\nspec:\n  restartPolicy: Never\n  containers:\n  - {name: job, image: x}\n',
    expect: { at: 'spec:', level: 'error' },
  },
  {
    name: 'a plain Job inside a kind: List',
    rule: 'unwrapped',
    yaml: `apiVersion: v1\nkind: List\nitems:\n- ${indent(job(pod('command: ["./task.sh"]'), { podMeta: INJECTED }), 2).trimStart()}`,
    expect: { at: '      spec:', level: 'error' },
  },
  { name: 'a Job that runs the wrapper', rule: 'unwrapped', yaml: job(pod(WRAPPED), { podMeta: INJECTED }) },
  {
    name: "a Job whose image's ENTRYPOINT is the wrapper (its variable set)",
    rule: 'unwrapped',
    yaml: job(pod('args: ["./task.sh"]\nenv: [{name: ISTIO_JOB_RUN_SIDECAR_STATUS, valueFrom: {fieldRef: {fieldPath: x}}}]'), {
      podMeta: INJECTED,
    }),
  },
  {
    name: 'a Job with native sidecars',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'annotations:\n  sidecar.istio.io/nativeSidecar: "true"' }),
  },
  {
    name: 'a Job with injection off',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'labels:\n  sidecar.istio.io/inject: "false"' }),
  },
  {
    name: 'an already injected pod with a native proxy',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), {
      podMeta: `annotations:\n  sidecar.istio.io/status: '${JSON.stringify({ initContainers: ['istio-init', 'istio-proxy'], containers: null })}'`,
    }),
  },
  {
    name: 'a Job that uses scuttle',
    rule: 'unwrapped',
    yaml: job(pod('command: ["scuttle", "./task.sh"]\nenv: [{name: ENVOY_ADMIN_API, value: "http://127.0.0.1:15000"}]')),
  },
  {
    name: 'a Pod that restarts always (a server)',
    rule: 'unwrapped',
    yaml: 'kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: web, image: x}\n',
  },
  {
    name: 'a Deployment',
    rule: 'unwrapped',
    yaml: 'kind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers: [{name: web, image: x}]\n',
  },
];

const findingsOf = (yaml: string, rule: RuleId): Finding[] => check(source(yaml)).filter((finding) => finding.rule === rule);

describe('--check rules, each from manifests that trip it and manifests that must not', () => {
  for (const entry of CASES) {
    test(`${entry.rule}: ${entry.name}: ${entry.expect === undefined ? 'not reported' : `${entry.expect.level} at ${entry.expect.at}`}`, () => {
      const found = findingsOf(entry.yaml, entry.rule);
      if (entry.expect === undefined) assert.deepEqual(found, []);
      else {
        const { at, level } = entry.expect;
        const line = entry.yaml.split('\n').findIndex((text) => text.includes(at)) + 1;
        assert.ok(line > 0, `${at} is in the manifest`);
        assert.deepEqual(
          found.map((finding) => ({ line: finding.line, level: finding.level })),
          [{ line, level }],
          entry.yaml,
        );
      }
      for (const finding of found) assert.ok(finding.message.length > 40, 'the message says what to do instead');
    });
  }

  test('every rule is tripped by a case, and has a case that must not trip it', () => {
    for (const rule of Object.keys(RULES) as RuleId[]) {
      assert.ok(
        CASES.some((entry) => entry.rule === rule && entry.expect !== undefined),
        `${rule} is tripped by a case`,
      );
      assert.ok(
        CASES.some((entry) => entry.rule === rule && entry.expect === undefined),
        `${rule} has a clean case`,
      );
    }
    const levels = new Set(CASES.filter((entry) => entry.rule === 'unwrapped').map((entry) => entry.expect?.level));
    assert.deepEqual([...levels].sort(), ['error', 'warning', undefined].sort());
  });
});

describe("the project's own YAML checks clean", () => {
  for (const file of readdirSync(join(root, 'docker', 'k8s'))) {
    test(`docker/k8s/${file}`, () => {
      assert.deepEqual(check(source(readFileSync(join(root, 'docker', 'k8s', file), 'utf8'), file)), []);
    });
  }
  test("the README's YAML blocks", () => {
    const blocks = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
    assert.ok(blocks.length >= 3);
    for (const block of blocks) assert.deepEqual(check(source(block, 'README.md')), [], block);
  });
});

describe('parse errors name the file and the line', () => {
  test('a tab where YAML wants spaces', () => {
    assert.deepEqual(parseSource('bad.yaml', 'a: 1\nb:\n\t- x\n'), parseSource('bad.yaml', 'a: 1\nb:\n\t- x\n'));
    const parsed = parseSource('bad.yaml', 'kind: Job\nmetadata:\n  name: [unclosed\n');
    assert.ok('error' in parsed);
    assert.match(parsed.error, /^bad\.yaml:\d+: not YAML: /);
  });
  test('a key written twice', () => {
    const parsed = parseSource('twice.yaml', 'kind: Job\nkind: Pod\n');
    assert.ok('error' in parsed);
    assert.match(parsed.error, /^twice\.yaml:2: not YAML: /);
  });
});
