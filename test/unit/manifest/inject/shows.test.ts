// A sidecar shows itself: a script's quit of its endpoint or process, or the sidecar's own settings on the pod
// template, give the pod that sidecar (unless the template declines it, or Istio runs ambient). --check and
// --inject then agree: a pod --check calls broken is rewritten, or --inject says why it cannot, and --check's
// advice to run --inject is said only where --inject rewrites that pod. One row per shape.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ManifestIo, runManifest } from '../../../../src/manifest/cli/cli.ts';
import { check, INJECT_ADVICE } from '../../../../src/manifest/check/rules.ts';
import { inject } from '../../../../src/manifest/inject/inject.ts';
import { readPod } from '../../../../src/manifest/pod/pod.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { workloads } from '../../../../src/manifest/yaml/workloads.ts';
import { source } from '../../../support/manifest.ts';

await loadShellParser();
const IMAGE = 'registry.example/istio-job-run:9.9.9';

/** A Job (or a CronJob) whose pod template has META (under metadata) and one container running SCRIPT in sh -c. */
function job(script: string, options: { meta?: string; spec?: string; kind?: 'Job' | 'CronJob'; command?: boolean } = {}): string {
  const pod = [
    ...(options.meta === undefined ? [] : ['metadata:', ...options.meta.split('\n').map((line) => `  ${line}`)]),
    'spec:',
    '  restartPolicy: Never',
    ...(options.spec === undefined ? [] : [`  ${options.spec}`]),
    '  containers:',
    '  - name: job',
    '    image: registry.example/job:1.0',
    ...(options.command === false ? ['    args: ["--all"]'] : ['    command: ["/bin/sh", "-c"]', `    args: [${JSON.stringify(script)}]`]),
  ];
  const template = (indent: number): string[] => ['template:', ...pod.map((line) => `  ${line}`)].map((line) => ' '.repeat(indent) + line);
  return [
    'apiVersion: batch/v1',
    `kind: ${options.kind ?? 'Job'}`,
    'metadata:',
    '  name: task',
    'spec:',
    ...(options.kind === 'CronJob' ? ['  schedule: "0 3 * * *"', '  jobTemplate:', '    spec:', ...template(6)] : template(2)),
    '',
  ].join('\n');
}

const QUIT = 'curl -fsS -X POST http://127.0.0.1:15020/quitquitquit';

interface Shape {
  readonly name: string;
  readonly yaml: string;
  /** The sidecar the pod has, as "kind form", or none. */
  readonly sidecar?: string;
  /** What --inject does: rewrites it, refuses it (its message holds this), or leaves it (--check finds no error). */
  readonly inject: 'rewritten' | { readonly refused: string } | 'unchanged';
}

/** A Job whose pod template has one ANNOTATION (`key: value`), and so the pod has SIDECAR. */
const annotated = (name: string, annotation: string, sidecar: string | undefined, inject: Shape['inject'] = 'rewritten'): Shape => ({
  name,
  yaml: job('./migrate', { meta: `annotations:\n  ${annotation}` }),
  ...(sidecar === undefined ? {} : { sidecar }),
  inject,
});

/** A Job that runs SCRIPT, and so the pod has SIDECAR. */
const scripted = (name: string, script: string, sidecar: string, inject: Shape['inject'], spec?: string): Shape => ({
  name,
  yaml: job(script, spec === undefined ? {} : { spec }),
  sidecar,
  inject,
});

const SHAPES: readonly Shape[] = [
  scripted("a POST to pilot-agent's quit after && (no marker)", `./migrate && ${QUIT}`, 'istio classic', {
    refused: 'script sends its own quit (line 13) and --check finds quit-skipped-on-failure on line 13',
  }),
  scripted(
    "wget's POST to pilot-agent's quit after the job, its status lost",
    "./migrate; wget -q --post-data='' http://localhost:15020/quitquitquit",
    'istio classic',
    { refused: 'exit-code-lost' },
  ),
  scripted('pilot-agent request POST quitquitquit after &&', './migrate && pilot-agent request POST quitquitquit', 'istio classic', {
    refused: 'quit-skipped-on-failure',
  }),
  scripted(
    "a POST to Dapr's shutdown after && (no marker)",
    './publish && curl -X POST http://localhost:3500/v1.0/shutdown',
    'dapr classic',
    { refused: 'quit-skipped-on-failure' },
  ),
  scripted(
    'pkill pilot-agent without a shared process namespace: it reaches nothing, so nothing stops the proxy',
    './migrate; rc=$?; pkill pilot-agent; exit $rc',
    'istio classic',
    'rewritten',
  ),
  scripted(
    'pkill pilot-agent across a shared process namespace, the status kept: it works',
    './migrate; rc=$?; pkill pilot-agent; exit $rc',
    'istio classic',
    'unchanged',
    'shareProcessNamespace: true',
  ),
  scripted(
    "a quit of pilot-agent that keeps the job's status: it works",
    `./migrate; rc=$?; ${QUIT}; exit $rc`,
    'istio classic',
    'unchanged',
  ),
  annotated('proxy.istio.io/config on the pod template', 'proxy.istio.io/config: "holdApplicationUntilProxyStarts: true"', 'istio classic'),
  {
    name: 'a CronJob with exitOnJobCompletion in proxy.istio.io/config',
    yaml: job('./rotate', { kind: 'CronJob', meta: 'annotations:\n  proxy.istio.io/config: "{ exitOnJobCompletion: true }"' }),
    sidecar: 'istio classic',
    inject: 'rewritten',
  },
  annotated('sidecar.istio.io/proxyCPU', 'sidecar.istio.io/proxyCPU: 100m', 'istio classic'),
  annotated('traffic.sidecar.istio.io/excludeOutboundPorts', 'traffic.sidecar.istio.io/excludeOutboundPorts: "5432"', 'istio classic'),
  annotated(
    'sidecar.istio.io/nativeSidecar: "true": a native sidecar, which kubelet stops',
    'sidecar.istio.io/nativeSidecar: "true"',
    'istio native',
    'unchanged',
  ),
  {
    name: 'Istio settings, and inject: "false"',
    yaml: job('./migrate', { meta: 'annotations:\n  proxy.istio.io/config: "{}"\n  sidecar.istio.io/inject: "false"' }),
    inject: 'unchanged',
  },
  {
    name: 'Istio settings in ambient mode: no sidecar at all',
    yaml: job('./migrate', { meta: 'labels:\n  istio.io/dataplane-mode: ambient\nannotations:\n  proxy.istio.io/config: "{}"' }),
    inject: 'unchanged',
  },
  {
    name: 'a quit of pilot-agent under inject: "false" shows no sidecar',
    yaml: job(`./migrate; rc=$?; ${QUIT}; exit $rc`, { meta: 'annotations:\n  sidecar.istio.io/inject: "false"' }),
    inject: 'unchanged',
  },
  annotated("Linkerd's own setting config.linkerd.io/proxy-cpu-limit", 'config.linkerd.io/proxy-cpu-limit: "1"', 'linkerd classic'),
  annotated(
    "Consul's own setting consul.hashicorp.com/connect-service-upstreams",
    'consul.hashicorp.com/connect-service-upstreams: "db:5432"',
    'consul-dataplane classic',
  ),
  annotated(
    "Vault's role alone: its injector adds nothing without agent-inject",
    'vault.hashicorp.com/role: "migrate"',
    undefined,
    'unchanged',
  ),
  {
    name: 'Istio settings on a container without a command: refused, naming --entrypoint',
    yaml: job('', { meta: 'annotations:\n  proxy.istio.io/config: "{}"', command: false }),
    sidecar: 'istio classic',
    inject: { refused: '--entrypoint job=ENTRYPOINT' },
  },
];

/** Each of --check's errors that advises --inject, and every error at all, of a text. */
const errorsOf = (text: string): { advising: string[]; all: string[] } => {
  const errors = check(source(text)).filter((finding) => finding.level === 'error');
  return { advising: errors.filter((finding) => finding.advisesInject).map((finding) => finding.rule), all: errors.map((f) => f.rule) };
};

/** The CLI's --check of TEXT: its lines. */
async function cliCheck(text: string): Promise<string> {
  let out = '';
  const io: ManifestIo = {
    readFile: () => text,
    listDir: () => undefined,
    stdout: (written) => {
      out += written;
    },
    stderr: () => {},
  };
  await runManifest(['--check', 'job.yaml'], 'istio-job-run', '9.9.9', io);
  return out;
}

describe('a sidecar shows itself, and --inject agrees with --check', () => {
  for (const shape of SHAPES) {
    test(shape.name, async () => {
      const [workload] = workloads(source(shape.yaml));
      assert.ok(workload !== undefined);
      const sidecars = readPod(workload, new Map(), undefined)
        .sidecars.filter((sidecar) => sidecar.known)
        .map((sidecar) => `${sidecar.kind.name} ${sidecar.form}`);
      assert.deepEqual(sidecars, shape.sidecar === undefined ? [] : [shape.sidecar], 'the sidecars the pod has');

      const before = errorsOf(shape.yaml);
      const result = inject(source(shape.yaml), { image: IMAGE, native: false });
      const printed = await cliCheck(shape.yaml);
      if (shape.inject === 'unchanged') {
        assert.deepEqual(before.all, [], '--check finds no error');
        assert.equal(result.kind === 'done' && result.text, shape.yaml, 'byte for byte');
        return;
      }
      assert.notDeepEqual(before.advising, [], '--check advises --inject');
      if (shape.inject === 'rewritten') {
        assert.equal(result.kind, 'done', result.kind === 'refused' ? result.problems.join('\n') : '');
        const out = (result as { text: string }).text;
        assert.notEqual(out, shape.yaml);
        assert.ok(printed.includes(INJECT_ADVICE), printed);
        const after = check(source(out)).filter((finding) => finding.level === 'error');
        assert.deepEqual(
          after.filter((finding) => finding.rule === 'unwrapped').map((finding) => finding.message),
          [],
          'nothing left unstopped',
        );
        assert.ok(!(await cliCheck(out)).includes(INJECT_ADVICE), 'no advice to run --inject on its output');
      } else {
        assert.equal(result.kind, 'refused');
        const problems = (result as { problems: readonly string[] }).problems;
        assert.equal(problems.length, 1, problems.join('\n'));
        assert.match(problems[0] ?? '', /^test\.yaml:1: (Cron)?Job task: /);
        assert.ok(problems[0]?.includes(shape.inject.refused), problems.join('\n'));
        assert.ok(!printed.includes(INJECT_ADVICE), printed);
        assert.match(printed, /"istio-job-run --inject FILE" refuses this file, and says why/);
      }
    });
  }
});
