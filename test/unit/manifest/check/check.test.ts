// --check's rules from a table: manifests that trip each rule, and manifests that must not. The project's own
// manifests (docker/k8s/) and the README's YAML check clean.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { type CheckSettings, check, type Finding, type Level, RULE_SUMMARIES, type RuleId } from '../../../../src/manifest/check/rules.ts';
import { instead } from '../../../../src/manifest/cli/report.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { parseSource } from '../../../../src/manifest/yaml/source.ts';
import { source } from '../../../support/manifest.ts';
import { root } from '../../../support/process.ts';

const indent = (text: string, by: number): string =>
  text
    .split('\n')
    .map((line) => (line === '' ? line : ' '.repeat(by) + line))
    .join('\n');

/** A Job with a pod spec (written at column 0, re-indented here), pod annotations and Job-level extras. */
function job(podSpec: string, options: { podMeta?: string; jobMeta?: string; jobSpec?: string; restartPolicy?: string } = {}): string {
  if (options.restartPolicy !== undefined) podSpec = podSpec.replace('restartPolicy: Never', `restartPolicy: ${options.restartPolicy}`);
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
/** A script's first words: a trap that sends the quit to URL on exit. */
const TRAP = (url: string): string => `trap 'rc=$?; curl -XPOST ${url}; exit $rc' EXIT;`;

before(loadShellParser);

interface Case {
  readonly name: string;
  readonly yaml: string;
  readonly rule: RuleId;
  readonly settings?: CheckSettings;
  /** The finding expected, or none: its level, and what the line it names (the first holding it) holds. */
  readonly expect?: { readonly at: string; readonly level: Level };
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
    name: 'exitOnJobCompletion spelled with an escape in a double-quoted string',
    rule: 'exit-on-job-completion',
    yaml: job(pod(WRAPPED), { podMeta: 'annotations:\n  proxy.istio.io/config: "\\x65xitOnJobCompletion: true"' }),
    expect: { at: 'proxy.istio.io/config', level: 'error' },
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
  // exit-code-lost
  {
    name: 'a script whose last command is the quit',
    rule: 'exit-code-lost',
    yaml: job(pod('command: ["sh", "-c", "./task.sh; curl -X POST http://127.0.0.1:15020/quitquitquit"]'), { podMeta: INJECTED }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a quit that swallows its own failure, on the last line of a literal block',
    rule: 'exit-code-lost',
    yaml: job(pod('command: ["/bin/bash", "-c"]\nargs:\n- |\n  ./task.sh\n  curl -s -XPOST localhost:15020/quitquitquit || true\n')),
    expect: { at: 'curl -s', level: 'error' },
  },
  {
    name: 'a trap that quits, then exits 0',
    rule: 'exit-code-lost',
    yaml: job(
      pod(
        'command: ["bash", "-c"]\nargs:\n- |\n  quit() {\n    curl -XPOST 127.0.0.1:15020/quitquitquit\n    exit 0\n  }\n  trap quit ERR EXIT\n  ./task.sh\n',
      ),
    ),
    expect: { at: 'exit 0', level: 'error' },
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
    name: 'a script under sh -ec whose last command is the quit',
    rule: 'exit-code-lost',
    yaml: job(pod('command: ["sh", "-ec", "./task.sh; curl -X POST http://127.0.0.1:15020/quitquitquit"]'), { restartPolicy: 'OnFailure' }),
  },
  {
    name: 'a script under set -e whose last line is the quit',
    rule: 'exit-code-lost',
    yaml: job(
      pod(
        'command: ["bash", "-c"]\nargs:\n- |\n  set -euo pipefail\n  ./task.sh\n  curl -X POST http://127.0.0.1:15020/quitquitquit\n',
        'OnFailure',
      ),
    ),
  },
  {
    name: 'a trap on EXIT that keeps the status',
    rule: 'exit-code-lost',
    yaml: job(
      pod(
        'command: ["bash", "-c"]\nargs:\n- |\n  trap "rc=\\$?; curl -XPOST localhost:15020/quitquitquit; exit \\$rc" EXIT\n  ./task.sh\n',
      ),
    ),
  },
  {
    name: 'a semicolon inside quotes',
    rule: 'exit-code-lost',
    yaml: job(pod('command: ["sh", "-c", "curl -XPOST \\"localhost:15020/quitquitquit;\\"; ./task.sh"]')),
  },
  // quit-skipped-on-failure
  {
    name: 'a quit after && under restartPolicy Never',
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["/bin/bash", "-c"]\nargs:\n- |\n  ./task.sh && curl -XPOST localhost:15020/quitquitquit # stop the proxy\n')),
    expect: { at: './task.sh &&', level: 'error' },
  },
  {
    name: 'a quit at the end of a set -e script under Never',
    rule: 'quit-skipped-on-failure',
    yaml: job(
      pod('command: ["sh", "-c"]\nargs:\n- |\n  set -e\n  ./migrate\n  wget -q -O- --post-data= http://127.0.0.1:15020/quitquitquit\n'),
    ),
    expect: { at: 'wget', level: 'error' },
  },
  {
    name: "a quit after the job's || exit",
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["sh", "-c", "./task || exit 3\\ncurl -XPOST localhost:15020/quitquitquit"]')),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a Dapr shutdown after &&',
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["sh", "-c", "./task && curl -X POST localhost:3500/v1.0/shutdown"]'), {
      podMeta: 'annotations:\n  dapr.io/enabled: "true"',
    }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'bash -eo pipefail -c: a failed job in a pipeline ends the script before the quit',
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["bash", "-eo", "pipefail", "-c", "./task | tee /tmp/log; curl -XPOST localhost:15020/quitquitquit"]')),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'bash -e -c without pipefail: a failed job in a pipeline goes on to the quit',
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["bash", "-e", "-c", "./task | tee /tmp/log; curl -XPOST localhost:15020/quitquitquit"]')),
  },
  {
    name: 'a quit after && under OnFailure',
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["sh", "-c", "./task && curl -XPOST localhost:15020/quitquitquit"]', 'OnFailure')),
  },
  {
    name: 'a quit in a trap on EXIT under set -e',
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["sh", "-ec", "trap \'curl -XPOST localhost:15020/quitquitquit\' EXIT; ./task"]')),
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
    name: 'OnFailure with a script that quits after a failure too',
    rule: 'onfailure-quit-always',
    yaml: job(
      pod(
        'command: ["/bin/sh", "-c"]\nargs: ["./task; x=$(echo $?); curl -sf -XPOST http://127.0.0.1:15020/quitquitquit && exit $x"]',
        'OnFailure',
      ),
    ),
    expect: { at: 'args:', level: 'error' },
  },
  {
    name: 'OnFailure with a quit in a trap on EXIT',
    rule: 'onfailure-quit-always',
    yaml: job(
      pod('command: ["bash", "-c"]\nargs:\n- |\n  trap "curl -XPOST localhost:15020/quitquitquit" EXIT\n  ./task.sh\n', 'OnFailure'),
    ),
    expect: { at: 'trap', level: 'error' },
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
  {
    name: 'OnFailure with the quit after &&',
    rule: 'onfailure-quit-always',
    yaml: job(pod('command: ["sh", "-c", "./task && curl -XPOST localhost:15020/quitquitquit"]', 'OnFailure')),
  },
  { name: 'Never with the default quit policy', rule: 'onfailure-quit-always', yaml: job(pod(WRAPPED)) },
  // quit-not-enabled
  {
    name: 'a Linkerd shutdown without proxy-admin-shutdown',
    rule: 'quit-not-enabled',
    yaml: job(pod(`command: ["sh", "-c", "${TRAP('http://127.0.0.1:4191/shutdown')} ./task"]`), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled',
    }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'linkerd-await --shutdown without proxy-admin-shutdown',
    rule: 'quit-not-enabled',
    yaml: job(pod('command: ["/linkerd-await", "--shutdown", "--", "./task"]'), { podMeta: 'annotations:\n  linkerd.io/inject: enabled' }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a Vault Agent quit without agent-enable-quit',
    rule: 'quit-not-enabled',
    yaml: job(pod(`command: ["sh", "-c", "${TRAP('http://127.0.0.1:8200/agent/v1/quit')} ./task"]`), {
      podMeta: 'annotations:\n  vault.hashicorp.com/agent-inject: "true"',
    }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a Cloud SQL proxy quit without --quitquitquit',
    rule: 'quit-not-enabled',
    yaml: job(
      `restartPolicy: Never\ncontainers:\n${container(`command: ["sh", "-c", "${TRAP('http://localhost:9091/quitquitquit')} ./task"]`)}\n${container('args: ["--port=5432", "p:r:i"]', 'proxy').replace('image: example', 'image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1')}`,
    ),
    expect: { at: `"sh", "-c", "trap`, level: 'error' },
  },
  {
    name: 'a Linkerd shutdown with proxy-admin-shutdown: enabled',
    rule: 'quit-not-enabled',
    yaml: job(pod('command: ["/linkerd-await", "--shutdown", "--", "./task"]'), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled\n  config.linkerd.io/proxy-admin-shutdown: enabled',
    }),
  },
  // Go's flag packages read a boolean flag's value with strconv.ParseBool; the last one decides.
  ...[
    ['--quitquitquit', true],
    ...['1', 't', 'T', 'TRUE', 'true', 'True'].map((value) => [`--quitquitquit=${value}`, true] as const),
    ...['0', 'f', 'false', 'False'].map((value) => [`--quitquitquit=${value}`, false] as const),
    ['--quitquitquit", "--quitquitquit=false', false],
  ].map(
    ([flag, on]): Case => ({
      name: `a Cloud SQL proxy quit with ${flag}`,
      rule: 'quit-not-enabled',
      yaml: job(
        `restartPolicy: Never\ncontainers:\n${container(`command: ["sh", "-c", "${TRAP('http://localhost:9091/quitquitquit')} ./task"]`)}\n${container(`args: ["${flag}", "p:r:i"]`, 'proxy').replace('image: example', 'image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1')}`,
      ),
      ...(on ? {} : { expect: { at: `"sh", "-c", "trap`, level: 'error' } }),
    }),
  ),
  // quit-wrong-method
  {
    name: "busybox wget's GET to Istio's quitquitquit",
    rule: 'quit-wrong-method',
    yaml: job(pod(`command: ["sh", "-c", "trap 'rc=$?; wget -q -O- http://127.0.0.1:15020/quitquitquit; exit $rc' EXIT; ./task"]`)),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: "curl without -X POST to Linkerd's shutdown",
    rule: 'quit-wrong-method',
    yaml: job(pod(`command: ["sh", "-c", "${TRAP('http://127.0.0.1:4191/shutdown').replace('-XPOST ', '')} ./task"]`), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled\n  config.linkerd.io/proxy-admin-shutdown: enabled',
    }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: "a GET to the Cloud SQL proxy's quitquitquit, which takes GET",
    rule: 'quit-wrong-method',
    yaml: job(pod(`command: ["sh", "-c", "trap 'rc=$?; curl localhost:9091/quitquitquit; exit $rc' EXIT; ./task"]`)),
  },
  {
    name: "wget --post-data to Istio's quitquitquit",
    rule: 'quit-wrong-method',
    yaml: job(
      pod(`command: ["sh", "-c", "trap 'rc=$?; wget -q -O- --post-data= http://127.0.0.1:15020/quitquitquit; exit $rc' EXIT; ./task"]`),
    ),
  },
  // wrapped-wrong-command
  {
    name: 'linkerd-await --shutdown wrapping echo after the job',
    rule: 'wrapped-wrong-command',
    yaml: job(pod('command: ["sh", "-c"]\nargs:\n- >\n  ./report && /linkerd-await --shutdown echo "shutdown linkerd-proxy"\n'), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled\n  config.linkerd.io/proxy-admin-shutdown: enabled',
    }),
    expect: { at: './report', level: 'error' },
  },
  {
    name: 'istio-job-run wrapping true at the end of a script',
    rule: 'wrapped-wrong-command',
    yaml: job(pod('command: ["sh", "-c", "./task; /opt/tools/istio-job-run -- true"]')),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'linkerd-await --shutdown wrapping the job',
    rule: 'wrapped-wrong-command',
    yaml: job(pod('command: ["sh", "-c", "/linkerd-await --shutdown -- ./task"]'), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled\n  config.linkerd.io/proxy-admin-shutdown: enabled',
    }),
  },
  // folded-script
  {
    name: 'a folded script of two commands',
    rule: 'folded-script',
    yaml: job(pod('command:\n- sh\n- -c\n- >\n  ./task --host=127.0.0.1\n  curl http://localhost:9091/quitquitquit\n')),
    expect: { at: 'curl http', level: 'error' },
  },
  {
    name: 'a folded script whose joined loop the shell rejects',
    rule: 'folded-script',
    yaml: job(pod('command:\n- sh\n- -c\n- >\n  ./task\n  for url in $CSQL_PROXY_QUIT_URLS ; do\n    curl $url\n  done\n')),
    expect: { at: 'for url', level: 'error' },
  },
  {
    name: 'a folded command continued by its options',
    rule: 'folded-script',
    yaml: job(pod('command:\n- sh\n- -c\n- >\n  exec ./task\n  --host=127.0.0.1\n  --port=5432\n')),
  },
  {
    name: 'a literal script of two commands',
    rule: 'folded-script',
    yaml: job(pod('command:\n- sh\n- -c\n- |\n  ./task\n  echo done\n')),
  },
  // duplicate-key
  {
    name: 'a name written twice',
    rule: 'duplicate-key',
    yaml: job(pod(WRAPPED), { jobMeta: 'labels: {a: b}\nname: again' }),
    expect: { at: 'name: again', level: 'warning' },
  },
  { name: 'each key once', rule: 'duplicate-key', yaml: job(pod(WRAPPED)) },
  // native-quit
  {
    name: 'a quit of a native Istio sidecar',
    rule: 'native-quit',
    yaml: job(pod('command: ["sh", "-c", "./task; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: 'annotations:\n  sidecar.istio.io/nativeSidecar: "true"',
    }),
    expect: { at: 'command:', level: 'warning' },
  },
  {
    name: 'a quit of a classic Istio sidecar',
    rule: 'native-quit',
    yaml: job(pod('command: ["sh", "-c", "./task; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), { podMeta: INJECTED }),
  },
  // wait-after-work
  {
    name: 'a readiness wait after the work',
    rule: 'wait-after-work',
    yaml: job(
      pod(
        `command: ["bash", "-ec"]\nargs:\n- |\n  psql -c 'select 1'\n  until curl -fsI http://localhost:15021/healthz/ready; do sleep 3; done\n  curl -X POST http://localhost:15020/quitquitquit\n`,
        'OnFailure',
      ),
    ),
    expect: { at: 'until curl', level: 'warning' },
  },
  {
    name: 'a readiness wait before the work',
    rule: 'wait-after-work',
    yaml: job(
      pod(
        `command: ["bash", "-ec"]\nargs:\n- |\n  until curl -fsI http://localhost:15021/healthz/ready; do sleep 3; done\n  psql -c 'select 1'\n  curl -X POST http://localhost:15020/quitquitquit\n`,
        'OnFailure',
      ),
    ),
  },
  // shell-syntax
  {
    name: 'an if without fi',
    rule: 'shell-syntax',
    yaml: job(pod('command: ["sh", "-c", "if ./task; then echo ok"]')),
    expect: { at: 'command:', level: 'warning' },
  },
  { name: 'a script the shell reads', rule: 'shell-syntax', yaml: job(pod('command: ["sh", "-c", "if ./task; then echo ok; fi"]')) },
  {
    name: 'a script ending in a line continuation',
    rule: 'shell-syntax',
    yaml: job(pod('command: ["sh", "-ec"]\nargs:\n- |\n  exec ./task \\\n    --flag \\\n')),
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
  // pod-failure-policy-container
  {
    name: 'an onExitCodes rule without containerName',
    rule: 'pod-failure-policy-container',
    yaml: job(pod(WRAPPED), {
      podMeta: INJECTED,
      jobSpec: 'podFailurePolicy:\n  rules:\n  - action: FailJob\n    onExitCodes: {operator: In, values: [42]}',
    }),
    expect: { at: 'onExitCodes', level: 'warning' },
  },
  {
    name: 'podFailurePolicy under OnFailure',
    rule: 'pod-failure-policy-container',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit", "on-success", "--"]', 'OnFailure'), {
      podMeta: INJECTED,
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
    name: 'a plain Job whose pod asks for injection',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: INJECTED }),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  // Istio takes "true" and "false" only; another value leaves it to the namespace's policy.
  ...['yes', 'on', 'Y', 'TRUE'].flatMap((value): Case[] => [
    {
      name: `sidecar.istio.io/inject: "${value}" in a namespace that injects`,
      rule: 'unwrapped',
      yaml: job(pod('command: ["./task.sh"]'), { podMeta: `annotations:\n  sidecar.istio.io/inject: "${value}"` }),
      settings: { namespaces: new Map([['istio', new Set(['*'])]]) },
      expect: { at: 'command: ["./task.sh"]', level: 'error' },
    },
    {
      name: `sidecar.istio.io/inject: "${value}" in a namespace that does not`,
      rule: 'unwrapped',
      yaml: job(pod('command: ["./task.sh"]'), { podMeta: `annotations:\n  sidecar.istio.io/inject: "${value}"` }),
    },
  ]),
  // Each value the other injectors take as on, and some they do not.
  ...(
    [
      ['dapr.io/enabled', ['y', 'yes', 'on', '1', 'T', ' True '], ['no', 'false', '0', 'enabled']],
      ['vault.hashicorp.com/agent-inject', ['1', 't', 'T', 'TRUE', 'true', 'True'], ['0', 'F', 'yes', 'tRUE']],
      ['consul.hashicorp.com/connect-inject', ['1', 't', 'T', 'TRUE', 'true', 'True'], ['0', 'False', 'on', 'tRUE']],
      ['linkerd.io/inject', ['enabled', 'ingress'], ['disabled', 'Enabled', 'true']],
    ] as const
  ).flatMap(([key, on, off]) =>
    [...on, ...off].map(
      (value): Case => ({
        name: `${key}: "${value}"`,
        rule: 'unwrapped',
        yaml: job(pod('command: ["./task.sh"]'), { podMeta: `annotations:\n  ${key}: "${value}"` }),
        ...((on as readonly string[]).includes(value) ? { expect: { at: 'command: ["./task.sh"]', level: 'error' } } : {}),
      }),
    ),
  ),
  {
    name: 'a plain Job whose pod has a revision label',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'labels: {istio.io/rev: canary}' }),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a bare Pod that asks for injection and never restarts',
    rule: 'unwrapped',
    yaml: 'kind: Pod\nmetadata:\n  name: p\n  labels: {sidecar.istio.io/inject: "true"}\nspec:\n  restartPolicy: Never\n  containers:\n  - {name: job, image: x, command: [./t]}\n',
    expect: { at: '- {name: job', level: 'error' },
  },
  {
    name: 'a plain Job inside a kind: List',
    rule: 'unwrapped',
    yaml: `apiVersion: v1\nkind: List\nitems:\n- ${indent(job(pod('command: ["./task.sh"]'), { podMeta: INJECTED }), 2).trimStart()}`,
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a Linkerd-injected Job',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'annotations:\n  linkerd.io/inject: enabled' }),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a Consul-injected Job',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'annotations:\n  "consul.hashicorp.com/connect-inject": "true"' }),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a Dapr-enabled Job',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'annotations:\n  dapr.io/enabled: "true"' }),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a Vault Agent sidecar',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'annotations:\n  vault.hashicorp.com/agent-inject: "true"' }),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a declared Cloud SQL proxy container',
    rule: 'unwrapped',
    yaml: job(
      `restartPolicy: Never\ncontainers:\n${container('command: ["./task.sh"]')}\n${container('args: ["--quitquitquit"]', 'proxy').replace('image: example', 'image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1')}`,
    ),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a plain Job in a namespace the user says injects',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { jobMeta: 'namespace: payments' }),
    settings: { namespaces: new Map([['istio', new Set(['payments'])]]) },
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a plain Job with no marker and no namespace said',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]')),
  },
  {
    name: 'a plain Job in a namespace the user does not name',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { jobMeta: 'namespace: batch' }),
    settings: { namespaces: new Map([['istio', new Set(['payments'])]]) },
  },
  {
    name: 'a quit in an EXIT trap of a script that then execs the job: the trap never runs',
    rule: 'unwrapped',
    yaml: job(pod(`command: ["sh", "-c", "trap 'curl -XPOST localhost:15020/quitquitquit' EXIT; exec ./task"]`), { podMeta: INJECTED }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a pkill of the Cloud SQL proxy v1 in a pod that shares its process namespace',
    rule: 'unwrapped',
    yaml: job(
      `restartPolicy: Never\nshareProcessNamespace: true\ncontainers:\n${container('command: ["sh", "-c", "./task; rc=$?; pkill -INT cloud_sql_proxy; exit $rc"]')}\n${container('command: ["/cloud_sql_proxy", "-instances=p:r:i=tcp:5432"]', 'proxy').replace('image: example', 'image: gcr.io/cloudsql-docker/gce-proxy:1.33.2')}`,
    ),
  },
  {
    name: 'a pkill of the Cloud SQL proxy in a pod that does not share its process namespace: it finds nothing',
    rule: 'unwrapped',
    yaml: job(
      `restartPolicy: Never\ncontainers:\n${container('command: ["sh", "-c", "./task; rc=$?; pkill -INT cloud_sql_proxy; exit $rc"]')}\n${container('command: ["/cloud_sql_proxy", "-instances=p:r:i=tcp:5432"]', 'proxy').replace('image: example', 'image: gcr.io/cloudsql-docker/gce-proxy:1.33.2')}`,
    ),
    expect: { at: 'command: ["sh", "-c", "./task; rc=$?; pkill', level: 'error' },
  },
  { name: 'a Job that runs the wrapper', rule: 'unwrapped', yaml: job(pod(WRAPPED), { podMeta: INJECTED }) },
  {
    name: 'a Linkerd Job under linkerd-await --shutdown',
    rule: 'unwrapped',
    yaml: job(pod('command: ["/linkerd-await", "--shutdown", "--", "./task"]'), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled\n  config.linkerd.io/proxy-admin-shutdown: enabled',
    }),
  },
  {
    name: 'a Linkerd proxy as a native sidecar',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled\n  config.alpha.linkerd.io/proxy-enable-native-sidecar: "true"',
    }),
  },
  {
    name: 'a Vault Agent that only pre-populates',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), {
      podMeta: 'annotations:\n  vault.hashicorp.com/agent-inject: "true"\n  vault.hashicorp.com/agent-pre-populate-only: "true"',
    }),
  },
  {
    name: 'a native Cloud SQL proxy',
    rule: 'unwrapped',
    yaml: job(
      `restartPolicy: Never\ncontainers:\n${container('command: ["./task.sh"]')}\ninitContainers:\n${container('restartPolicy: Always', 'proxy').replace('image: example', 'image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1')}`,
    ),
  },
  {
    name: 'a Job with native Istio sidecars',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), {
      podMeta: 'annotations:\n  sidecar.istio.io/nativeSidecar: "true"\n  sidecar.istio.io/inject: "true"',
    }),
  },
  // quit-before-job
  {
    name: 'a quit before the job',
    rule: 'quit-before-job',
    yaml: job(pod('command: ["/bin/sh", "-c", "curl -XPOST localhost:15020/quitquitquit; ./task.sh"]'), { podMeta: INJECTED }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a quit after the job',
    rule: 'quit-before-job',
    yaml: job(pod('command: ["/bin/sh", "-c", "./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
  },
  // sh-pipefail
  {
    name: 'set -eo pipefail under sh -ec',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["sh", "-ec", "set -eo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
    expect: { at: 'command:', level: 'warning' },
  },
  {
    name: 'set -o pipefail under sh -c, without -e',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["/bin/sh", "-c", "set -o pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
    expect: { at: 'command:', level: 'warning' },
  },
  {
    name: 'set -euo pipefail under dash',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["dash", "-c", "set -euo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
    expect: { at: 'command:', level: 'warning' },
  },
  {
    name: 'set -o pipefail -e under sh',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["sh", "-c", "set -o pipefail -e; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
    expect: { at: 'command:', level: 'warning' },
  },
  {
    name: 'set -eo pipefail under sh in a Debian image',
    rule: 'sh-pipefail',
    yaml: job(
      pod('command: ["sh", "-ec", "set -eo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]').replace(
        'image: example',
        'image: docker.io/library/debian:12',
      ),
      { podMeta: INJECTED },
    ),
    expect: { at: 'command:', level: 'warning' },
  },
  ...['alpine:3.20', 'docker.io/library/busybox:1.36', 'python:3.12-alpine', 'curlimages/curl:8.6.0'].map((image) => ({
    name: `set -eo pipefail under sh in ${image}, whose sh is ash`,
    rule: 'sh-pipefail' as const,
    yaml: job(
      pod('command: ["sh", "-ec", "set -eo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]').replace(
        'image: example',
        `image: ${image}`,
      ),
      { podMeta: INJECTED },
    ),
  })),
  {
    name: 'set -eo pipefail under bash',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["bash", "-c", "set -eo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
  },
  {
    name: 'set -eo pipefail under ash',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["ash", "-c", "set -eo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
  },
  {
    name: 'set +o pipefail under sh',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["sh", "-c", "set +o pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
  },
  {
    name: 'set -eo pipefail under busybox sh',
    rule: 'sh-pipefail',
    yaml: job(
      pod('command: ["busybox", "sh", "-c", "set -eo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'),
      { podMeta: INJECTED },
    ),
  },
  // quit-only-on-signal
  {
    name: 'a quit only in a trap on TERM',
    rule: 'quit-only-on-signal',
    yaml: job(pod(`command: ["/bin/sh", "-c", "trap 'curl -XPOST localhost:15020/quitquitquit' TERM; ./task.sh"]`), { podMeta: INJECTED }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a quit in a trap on TERM and EXIT',
    rule: 'quit-only-on-signal',
    yaml: job(pod(`command: ["/bin/sh", "-c", "trap 'curl -XPOST localhost:15020/quitquitquit' TERM EXIT; ./task.sh"]`), {
      podMeta: INJECTED,
    }),
  },
  // wrapper-never-quits
  {
    name: 'istio-job-run --quit never under Never',
    rule: 'wrapper-never-quits',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit", "never", "--"]\nargs: ["./task.sh"]'), { podMeta: INJECTED }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'istio-job-run --quit on-success under OnFailure',
    rule: 'wrapper-never-quits',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit", "on-success", "--"]\nargs: ["./task.sh"]', 'OnFailure'), {
      podMeta: INJECTED,
    }),
  },
  {
    name: 'a Job with injection off',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'labels:\n  sidecar.istio.io/inject: "false"' }),
    settings: { namespaces: new Map([['istio', new Set(['*'])]]) },
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
    yaml: job(pod('command: ["scuttle", "./task.sh"]\nenv: [{name: ENVOY_ADMIN_API, value: "http://127.0.0.1:15000"}]'), {
      podMeta: INJECTED,
    }),
  },
  {
    name: 'a Pod that restarts always (a server)',
    rule: 'unwrapped',
    yaml: 'kind: Pod\nmetadata: {name: p, labels: {sidecar.istio.io/inject: "true"}}\nspec:\n  containers:\n  - {name: web, image: x}\n',
  },
  {
    name: 'a Deployment',
    rule: 'unwrapped',
    yaml: 'kind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    metadata: {labels: {sidecar.istio.io/inject: "true"}}\n    spec:\n      containers: [{name: web, image: x}]\n',
  },

  // hand-rolled-quit
  {
    name: 'a quit that works, with no wait before the job: it lacks the wait, the retry and needs curl',
    rule: 'hand-rolled-quit',
    yaml: job(
      pod('command: ["/bin/sh", "-c"]\nargs:\n- |\n  ./task.sh; rc=$?\n  curl -fsS -XPOST http://127.0.0.1:15020/quitquitquit\n  exit $rc'),
      {
        podMeta: INJECTED,
      },
    ),
    expect: { at: 'curl -fsS', level: 'info' },
  },
  {
    name: 'a quit in a trap on EXIT after one wait that is not retried',
    rule: 'hand-rolled-quit',
    yaml: job(
      pod(
        `command: ["sh", "-c"]\nargs:\n- |\n  ${TRAP('localhost:15020/quitquitquit')}\n  wget -q -O- localhost:15021/healthz/ready\n  ./task.sh`,
      ),
      { podMeta: INJECTED },
    ),
    expect: { at: 'trap', level: 'info' },
  },
  {
    name: 'a script that waits in a loop (retries) and quits in a trap: silent',
    rule: 'hand-rolled-quit',
    yaml: job(
      pod(
        `command: ["sh", "-c"]\nargs:\n- |\n  ${TRAP('localhost:15020/quitquitquit')}\n  until curl -fs localhost:15021/healthz/ready; do sleep 1; done\n  ./task.sh`,
      ),
      { podMeta: INJECTED },
    ),
  },
  {
    name: 'a quit that does not work (after &&): its error says so, not this',
    rule: 'hand-rolled-quit',
    yaml: job(pod('command: ["sh", "-c", "./task.sh && curl -XPOST localhost:15020/quitquitquit"]'), { podMeta: INJECTED }),
  },
  {
    name: 'a quit to a native sidecar: native-quit says so, not this',
    rule: 'hand-rolled-quit',
    yaml: job(pod('command: ["sh", "-c", "./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: `${INJECTED}\n  sidecar.istio.io/nativeSidecar: "true"`,
    }),
  },
];

const findingsOf = (yaml: string, rule: RuleId, settings?: CheckSettings): Finding[] =>
  check(source(yaml), settings).filter((finding) => finding.rule === rule);

describe('--check rules, each from manifests that trip it and manifests that must not', () => {
  for (const entry of CASES) {
    test(`${entry.rule}: ${entry.name}: ${entry.expect === undefined ? 'not reported' : `${entry.expect.level} at ${entry.expect.at}`}`, () => {
      const found = findingsOf(entry.yaml, entry.rule, entry.settings);
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
      for (const finding of found) {
        assert.ok(finding.message.length > 40, 'the message says what to do instead');
        // The one message that says what a field needs rather than what to do: JSON has no `instead` for it.
        if (!/needs restartPolicy: Never/.test(finding.message))
          assert.ok(instead(finding.message) !== undefined, `--format json finds what to do instead in: ${finding.message}`);
      }
    });
  }

  test('every rule is tripped by a case, and has a case that must not trip it', () => {
    for (const rule of Object.keys(RULE_SUMMARIES) as RuleId[]) {
      assert.ok(
        CASES.some((entry) => entry.rule === rule && entry.expect !== undefined),
        `${rule} is tripped by a case`,
      );
      assert.ok(
        CASES.some((entry) => entry.rule === rule && entry.expect === undefined),
        `${rule} has a clean case`,
      );
    }
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
  test('a key written twice is no parse error: the last one counts, as kubectl reads it', () => {
    const parsed = source('kind: Job\nkind: Pod\n', 'twice.yaml');
    assert.equal(parsed.duplicates.length, 1);
    assert.equal(parsed.duplicates[0]?.key, 'kind');
  });
});
