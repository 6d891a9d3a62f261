// --admission-policy judged by Kubernetes' own admission code: the Go program of test/engines/admission (built by
// scripts/engines.ts on k8s.io/apiserver at the release each policy version targets) reads the policy the built
// executable prints, compiles it with Kubernetes' CEL compiler, runs it with the MutatingAdmissionPolicy plugin on
// every Job, CronJob and bare Pod of the generated cases (test/support/policy-cases.ts), the project's own
// manifests and the shared samples (../shared/corpus and corpus2, skipped where absent), as CREATE, again over its
// result and as an UPDATE, and compares each result with what `--inject` writes. Each run prints the largest cost
// of one expression and of one request beside Kubernetes' limits. Without Go the file is skipped in one line,
// except under CI=true, where that fails.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { admissionJudge, apiserverRelease, goCommand, goRequired, NO_GO } from '../../scripts/engines.ts';
import type { KindName } from '../../src/config/kinds.ts';
import { POLICY_VERSIONS, type PolicyVersion } from '../../src/config/tool-flags.ts';
import { type NamespaceMarks, objectsOf } from '../support/policy-agreement.ts';
import { cases, flagCases, job, readingCases } from '../support/policy-cases.ts';
import { SHAPES } from '../support/sidecar-shapes.ts';
import { root, start, WRAPPER } from '../support/process.ts';

const IMAGE = 'registry.example/istio-job-run:9.9.9';
const MODES = [
  { mode: 'emptyDir', flags: [] },
  { mode: '--image-volume', flags: ['--image-volume'] },
  { mode: '--native', flags: ['--native'] },
] as const;
/** The policy's reason to leave to --inject a pod whose commands speak to a sidecar, which CEL cannot read. */
const SPEAKS = 'no-container-speaks-to-a-sidecar';

const missing = goCommand() === undefined ? NO_GO : undefined;
if (missing !== undefined && goRequired()) throw new Error(`${NO_GO} (CI=true: the engines tests may not be skipped)`);

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-engines-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let files = 0;

interface Input {
  readonly name: string;
  readonly file: string;
  readonly allowSkip: readonly string[];
}

/**
 * A file of the objects of YAML in the scratch folder, for the judge to read: as JSON, which kubectl's reader (YAML
 * 1.1, where `y` and `on` are booleans) reads as this project's (YAML 1.2) does.
 */
function written(yaml: string): string {
  const file = join(scratch, `case-${files++}.json`);
  writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objectsOf(yaml) }));
  return file;
}

interface Group {
  readonly name: string;
  readonly inputs: Input[];
  readonly namespace: NamespaceMarks;
  readonly injectedKinds: readonly KindName[];
}

/** The generated cases, grouped by what their namespace carries (one judge run each). */
function generated(): Group[] {
  const groups = new Map<string, Group>();
  const istio = { labels: { 'sidecar.istio.io/inject': 'true' } };
  const scripts = [
    ['bash syntax under sh', ['sh', '-c', 'function run { ./task.sh; }; run']],
    ['ends 0 after the job failed', ['sh', '-c', './task.sh || echo failed']],
  ] as const;
  const all = [
    ...cases(),
    ...readingCases(),
    ...flagCases(),
    ...scripts.map(([name, command]) => ({ name, yaml: job(istio, { job: { image: 'debian:12', command: [...command] } }) })),
  ];
  for (const entry of all) {
    const namespace = 'namespace' in entry && entry.namespace !== undefined ? entry.namespace : {};
    const injectedKinds = 'injected' in entry && entry.injected !== undefined ? entry.injected : [];
    const id = JSON.stringify([namespace, injectedKinds]);
    let group = groups.get(id);
    if (group === undefined) {
      group = { name: `generated cases, namespace ${id}`, inputs: [], namespace, injectedKinds };
      groups.set(id, group);
    }
    const allowSkip = 'leftToInject' in entry && entry.leftToInject !== undefined ? ['nothing-inject-refuses'] : [];
    group.inputs.push({ name: entry.name, file: written(entry.yaml), allowSkip });
  }
  return [...groups.values()];
}

function own(): Group {
  const k8s = join(root, 'docker', 'k8s');
  return {
    name: "the project's own manifests",
    inputs: [
      ...SHAPES.map((shape) => ({ name: shape.name, file: written(shape.yaml), allowSkip: [SPEAKS] })),
      ...readdirSync(k8s).map((file) => ({ name: file, file: join(k8s, file), allowSkip: [SPEAKS] })),
    ],
    namespace: {},
    injectedKinds: [],
  };
}

function shared(dir: string): Group[] {
  const path = join(root, '..', 'shared', dir);
  if (!existsSync(path)) return [];
  const inputs = readdirSync(path)
    .filter((file) => /\.ya?ml$/.test(file))
    .sort()
    .map((file) => ({ name: `${dir}/${file}`, file: join(path, file), allowSkip: [SPEAKS] }));
  return (
    [
      ['no namespace injects', {}, []],
      ['istio-injection: enabled', { labels: { 'istio-injection': 'enabled' } }, ['istio']],
      ['linkerd.io/inject: enabled', { annotations: { 'linkerd.io/inject': 'enabled' } }, ['linkerd']],
    ] as const
  ).map(([name, namespace, injectedKinds]) => ({ name: `../shared/${dir}, ${name}`, inputs, namespace, injectedKinds }));
}

interface Summary {
  readonly apiserver: string;
  readonly objects: number;
  readonly rewritten: number;
  readonly same: number;
  readonly leftToInject: readonly string[];
  readonly scriptStatus: readonly string[];
  readonly notTaken: readonly string[];
  readonly failures: readonly string[];
  readonly cost: {
    expression: number;
    expressionName: string;
    expressionAt: string;
    request: number;
    requestAt: string;
    perCallLimit: number;
    runtimeBudget: number;
  };
}

const injectCache = join(scratch, 'inject-cache');

async function judge(judgeProgram: string, version: PolicyVersion, mode: (typeof MODES)[number], group: Group): Promise<Summary> {
  const plan = {
    exe: WRAPPER,
    // --native adds no image, and takes none.
    policyArgs: [...(mode.mode === '--native' ? [] : ['--image', IMAGE]), ...mode.flags],
    injectArgs: [...(mode.mode === '--native' ? [] : ['--image', IMAGE]), ...mode.flags],
    namespace: group.namespace,
    injectedKinds: group.injectedKinds,
    inputs: group.inputs,
    injectCache,
  };
  const planFile = join(scratch, `plan-${version}-${files++}.json`);
  writeFileSync(planFile, JSON.stringify(plan));
  const running = start(judgeProgram, [planFile], { timeoutMs: 600_000 });
  running.process.stdin?.end();
  const result = await running.finished;
  assert.notEqual(result.stdout.trim(), '', `the judge printed nothing: ${result.stderr}`);
  const summary = JSON.parse(result.stdout) as Summary;
  assert.deepEqual(summary.failures, [], `${group.name} (${mode.mode}, ${version}):\n${result.stderr}`);
  assert.equal(result.code, 0, result.stderr);
  return summary;
}

for (const version of POLICY_VERSIONS) {
  describe(`--api-version ${version}, by k8s.io/apiserver ${apiserverRelease(version)}'s admission plugin`, {
    skip: missing ?? false,
  }, () => {
    let program = '';
    const most = { expression: 0, expressionName: '', expressionAt: '', request: 0, requestAt: '', perCallLimit: 0, runtimeBudget: 0 };
    after(() => {
      if (most.perCallLimit === 0) return;
      process.stdout.write(
        `# ${version} (k8s.io/apiserver ${apiserverRelease(version)}): the costliest expression ${most.expression} (${most.expressionName}, ${most.expressionAt}) ` +
          `beside PerCallLimit ${most.perCallLimit}; the costliest request ${most.request} (${most.requestAt}) beside RuntimeCELCostBudget ${most.runtimeBudget}\n`,
      );
    });
    test('the judge builds', () => {
      program = admissionJudge(version);
    });
    const groups = [...generated(), own(), ...shared('corpus'), ...shared('corpus2')];
    for (const mode of MODES) {
      for (const group of groups) {
        test(`${mode.mode}: ${group.name}`, async (t) => {
          assert.ok(program !== '', 'the judge did not build');
          const summary = await judge(program, version, mode, group);
          if (summary.cost.expression > most.expression)
            Object.assign(most, {
              expression: summary.cost.expression,
              expressionName: summary.cost.expressionName,
              expressionAt: `${summary.cost.expressionAt}, ${mode.mode}`,
            });
          if (summary.cost.request > most.request)
            Object.assign(most, { request: summary.cost.request, requestAt: `${summary.cost.requestAt}, ${mode.mode}` });
          Object.assign(most, { perCallLimit: summary.cost.perCallLimit, runtimeBudget: summary.cost.runtimeBudget });
          t.diagnostic(
            `${summary.objects} objects; --inject rewrites ${summary.rewritten}, the policy the same ${summary.same}; ` +
              `left to --inject: ${summary.leftToInject.length}; refused by --inject for the script's own status: ${summary.scriptStatus.length}; ` +
              `not taken by the API server's types: ${summary.notTaken.length}; costliest expression ${summary.cost.expression}, request ${summary.cost.request}`,
          );
          assert.ok(summary.cost.expression < summary.cost.perCallLimit, `${summary.cost.expressionName}: ${summary.cost.expression}`);
          assert.ok(summary.cost.request < summary.cost.runtimeBudget, `${summary.cost.requestAt}: ${summary.cost.request}`);
        });
      }
    }
  });
}
