// --admission-policy: the printed MutatingAdmissionPolicy and binding pass the API's schema for v1 and v1beta1,
// their CEL is what Kubernetes' compiler takes (literals of one type), and run over pods made from every row of the
// sidecar kinds table, the project's own manifests and the shared samples (../shared/corpus and corpus2, skipped
// where absent) the policy writes exactly the object --inject writes, or leaves alone what --inject refuses or
// leaves; a second pass changes nothing, an UPDATE with the first-written object comes back as the stored one, and
// --check finds no `unwrapped` on what it wrote. Run by test/support/admission.ts, as the API server runs a policy.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { parseAllDocuments, stringify } from 'yaml';
import { type KindName, type Reading, SIDECAR_KINDS, type SidecarKind } from '../../../../src/config/kinds.ts';
import { POLICY_VERSIONS, type PolicyVersion } from '../../../../src/config/tool-flags.ts';
import { admissionPolicy, literal, type PolicySettings, SKIPPED } from '../../../../src/manifest/inject/policy.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { admit, type Json, mixedLiterals } from '../../../support/admission.ts';
import { openApiValidators } from '../../../support/k8s-openapi.ts';
import { agreement, type NamespaceMarks, objectsOf, type Verdict } from '../../../support/policy-agreement.ts';
import { root } from '../../../support/process.ts';
import { SHAPES } from '../../../support/sidecar-shapes.ts';

await loadShellParser();
const IMAGE = 'registry.example/istio-job-run:9.9.9';
const MODES = [
  { mode: 'emptyDir', native: false, imageVolume: false },
  { mode: '--image-volume', native: false, imageVolume: true },
  { mode: '--native', native: true, imageVolume: false },
] as const;
const SETTINGS = { image: IMAGE, version: 'v1' } as const;

// biome-ignore lint/suspicious/noExplicitAny: the printed YAML, read back as the tests need it
const documents = (settings: PolicySettings): any[] => parseAllDocuments(admissionPolicy(settings)).map((document) => document.toJS());

/** What a policy skipped for, written by a pod whose commands speak to a sidecar: left to --inject. */
const SPEAKS = 'no-container-speaks-to-a-sidecar';

/**
 * --inject's refusals for what a script does by itself, which CEL cannot read: it ends with 0 after its job failed,
 * or its own shell ends it otherwise than bash would (a construct sh lacks).
 */
const SCRIPT_STATUS = /script ends with 0 after the job failed|--check finds bashism-under-sh/;

/** Whether the policy agrees with --inject on one object: true where it leaves to --inject what speaks to a sidecar. */
function agrees(verdict: Verdict, mode: (typeof MODES)[number], strict: boolean): boolean | 'script-status' {
  const where = `${verdict.name} (${mode.mode})`;
  assert.notEqual(verdict.policy, 'error', `${where}: the policy fails: ${verdict.why}`);
  // A script's own statuses are beyond CEL: where --inject refuses only for what the script does by itself, the
  // policy wraps it (the pod completes, with the status the script gives).
  if (
    verdict.inject === 'refused' &&
    (verdict.refusals ?? []).length > 0 &&
    (verdict.refusals ?? []).every((why) => SCRIPT_STATUS.test(why))
  )
    return 'script-status';
  if (verdict.inject !== 'rewritten') {
    assert.notEqual(
      verdict.policy,
      'patched',
      `${where}: the policy rewrites what --inject ${verdict.inject === 'left' ? 'leaves' : 'refuses'}`,
    );
    return false;
  }
  if (verdict.policy === 'skipped' && verdict.why === SPEAKS && !strict) return true;
  assert.equal(verdict.policy, 'patched', `${where}: --inject rewrites it, the policy skips it (${verdict.why})`);
  assert.equal(verdict.differs, undefined, `${where}: the policy's object differs from --inject's at ${verdict.differs}`);
  assert.equal(verdict.notIdempotent, undefined, `${where}: a second pass of the policy changes it`);
  assert.equal(verdict.updateDiffers, undefined, `${where}: an UPDATE with the object as first written does not come back as stored`);
  if (!mode.native) assert.ok(!(verdict.errors ?? []).includes('unwrapped'), `${where}: --check finds unwrapped on the policy's output`);
  return false;
}

describe('the printed policy and binding', () => {
  // Each version against an extract of Kubernetes' own OpenAPI file of it (see each file's $comment): v1beta1 from
  // release-1.35, v1 from release-1.36. Then what the API server's validation requires besides, the same in both.
  const schemas = join(root, 'test', 'support', 'schemas');
  const openApi = new Map(
    POLICY_VERSIONS.map((version) => [version, openApiValidators(join(schemas, `mutating-admission-policy-${version}.openapi.json`))]),
  );
  const ajv = new Ajv2019({ allErrors: true, strict: false });
  const rules = ajv.compile(JSON.parse(readFileSync(join(schemas, 'mutating-admission-policy.rules.schema.json'), 'utf8')));
  /** Whether the document passes its version's OpenAPI schema and the server's rules; the errors when not. */
  const check = (version: PolicyVersion, document: Record<string, unknown>): string | undefined => {
    const kind = openApi.get(version)?.get(String(document.kind));
    if (kind === undefined) return `no ${version} schema of kind ${String(document.kind)}`;
    if (document.apiVersion !== kind.apiVersion) return `apiVersion ${String(document.apiVersion)}, not ${kind.apiVersion}`;
    if (!kind.validate(document)) return JSON.stringify(kind.validate.errors, null, 1);
    return rules(document) ? undefined : JSON.stringify(rules.errors, null, 1);
  };
  for (const version of POLICY_VERSIONS) {
    for (const mode of MODES) {
      test(`${version}, ${mode.mode}: pass the API's schema, and their CEL has literals of one type`, () => {
        const printed = documents({
          ...SETTINGS,
          ...mode,
          version,
          namespaces: new Map([['istio', new Set(['payments'])]]),
          namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['a'] }] },
        });
        assert.deepEqual(
          printed.map((document) => [(document as { apiVersion: string }).apiVersion, (document as { kind: string }).kind]),
          [
            [`admissionregistration.k8s.io/${version}`, 'MutatingAdmissionPolicy'],
            [`admissionregistration.k8s.io/${version}`, 'MutatingAdmissionPolicyBinding'],
          ],
        );
        for (const document of printed) assert.equal(check(version, document), undefined);
        const spec = (printed[0] as { spec: PolicySpec }).spec;
        for (const { name, expression } of [
          ...spec.variables,
          ...spec.matchConditions,
          { name: 'mutation', expression: spec.mutations[0]?.jsonPatch.expression ?? '' },
        ]) {
          assert.deepEqual(mixedLiterals(expression), [], `${name}: a literal whose items may differ in type`);
        }
      });
    }
  }

  test('no match condition reads the variables (the API server refuses one that does)', () => {
    for (const mode of MODES) {
      const [policy] = documents({ ...SETTINGS, ...mode, namespaces: new Map() });
      for (const condition of policy.spec.matchConditions) assert.doesNotMatch(condition.expression, /\bvariables\b/, condition.name);
    }
  });

  for (const version of POLICY_VERSIONS) {
    test(`the ${version} schema and rules refuse a policy or binding the API server refuses`, () => {
      const [policy, binding] = documents({ ...SETTINGS, ...MODES[0], version, namespaces: new Map() }) as Record<
        string,
        Record<string, unknown>
      >[];
      assert.ok(policy !== undefined && binding !== undefined);
      const mutations = policy.spec?.mutations as Record<string, unknown>[];
      const [{ jsonPatch, ...noPatch } = {}] = mutations;
      const other = POLICY_VERSIONS.find((each) => each !== version);
      const broken = [
        { ...policy, spec: { ...policy.spec, mutation: mutations } },
        { ...policy, spec: { ...policy.spec, mutations: [{ ...noPatch, jsonpatch: jsonPatch }] } },
        { ...policy, spec: { ...policy.spec, mutations: [{ jsonPatch }] } },
        { ...policy, spec: { ...policy.spec, mutations: mutations[0] } },
        { ...policy, spec: { ...policy.spec, mutations: [] } },
        { ...policy, spec: { ...policy.spec, failurePolicy: 'Sometimes' } },
        { ...policy, metadata: { ...policy.metadata, label: {} } },
        { ...policy, apiVersion: `admissionregistration.k8s.io/${other}` },
        { ...binding, spec: { ...binding.spec, policy: binding.spec?.policyName } },
        { ...binding, spec: { ...binding.spec, policyName: undefined } },
      ];
      for (const document of broken) {
        const json = JSON.parse(JSON.stringify(document)) as Record<string, unknown>;
        assert.notEqual(check(version, json), undefined, JSON.stringify(json).slice(0, 300));
      }
    });
  }

  test('a literal whose items differ in type is found, one in dyn() is not', () => {
    assert.deepEqual(mixedLiterals(`['a', 1]`), ['list of const:stringValue, const:int64Value']);
    assert.deepEqual(mixedLiterals(`{'a': 'b', 'c': true}`), ['map values of const:stringValue, const:boolValue']);
    assert.deepEqual(mixedLiterals(literal({ a: 'b', c: true, d: { e: ['f'] } })), []);
  });
});

interface PolicySpec {
  readonly variables: { name: string; expression: string }[];
  readonly matchConditions: { name: string; expression: string }[];
  readonly mutations: { jsonPatch: { expression: string } }[];
}

/** A Job with one job container running a script, MARKS on its pod template, CONTAINERS beside it. */
function job(
  marks: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
  extra: { containers?: Json[]; restartPolicy?: string; kind?: string; spec?: Record<string, Json>; job?: Record<string, Json> } = {},
): string {
  const pod = {
    ...(marks.labels === undefined && marks.annotations === undefined ? {} : { metadata: marks }),
    spec: {
      restartPolicy: extra.restartPolicy ?? 'Never',
      containers: [
        { name: 'task', image: 'registry.example/task:1', command: ['sh', '-c', './task.sh'], ...extra.job },
        ...(extra.containers ?? []),
      ],
      ...extra.spec,
    },
  };
  const kind = extra.kind ?? 'Job';
  const spec =
    kind === 'CronJob' ? { schedule: '@daily', jobTemplate: { spec: { template: pod } } } : kind === 'Pod' ? pod.spec : { template: pod };
  return stringify({
    apiVersion: kind === 'Pod' ? 'v1' : 'batch/v1',
    kind,
    metadata: {
      name: 'case',
      namespace: 'team',
      ...(kind === 'Pod' ? (marks.labels === undefined && marks.annotations === undefined ? {} : marks) : {}),
    },
    spec,
  });
}

/** A value the reading makes other than on and off, for the case of a value the injector refuses or ignores. */
const odd = (reading: Reading): string => (reading.on.includes('maybe') ? 'perhaps' : 'maybe');

interface Case {
  readonly name: string;
  readonly yaml: string;
  /** Why the policy leaves to --inject a pod --inject rewrites, where it does. */
  readonly leftToInject?: string;
  readonly namespace?: NamespaceMarks;
  readonly injected?: readonly KindName[];
}

/** Pods made from every row of the kinds table: each marker with each kind of value, and each shape --inject handles. */
function cases(): Case[] {
  const list: Case[] = [];
  for (const kind of SIDECAR_KINDS as readonly SidecarKind[]) {
    const m = kind.template;
    const inject = m.inject;
    const on: Record<string, string> = {};
    if (inject !== undefined) {
      for (const [where, keys] of [
        ['labels', inject.labels],
        ['annotations', inject.annotations],
      ] as const) {
        for (const key of keys) {
          for (const value of [inject.reading.on[0], inject.reading.off[0], odd(inject.reading), '', ' ']) {
            if (value === undefined) continue;
            list.push({ name: `${kind.name}: ${where} ${key}: ${JSON.stringify(value)}`, yaml: job({ [where]: { [key]: value } }) });
          }
        }
      }
      const first = inject.labels[0] ?? inject.annotations[0] ?? '';
      const where = inject.labels.length > 0 ? 'labels' : 'annotations';
      Object.assign(on, { [first]: inject.reading.on[0] ?? 'true' });
      const asked = (annotations: Record<string, string>): { labels?: Record<string, string>; annotations: Record<string, string> } =>
        where === 'labels' ? { labels: on, annotations } : { annotations: { ...on, ...annotations } };
      const quitSwitch = m.quitSwitch;
      if (typeof quitSwitch === 'object' && 'annotation' in quitSwitch) {
        for (const value of [quitSwitch.reading.on[0], quitSwitch.reading.off[0], odd(quitSwitch.reading), '']) {
          if (value !== undefined)
            list.push({
              name: `${kind.name}: its quit switch ${JSON.stringify(value)}`,
              yaml: job(asked({ [quitSwitch.annotation]: value })),
            });
        }
      }
      for (const key of m.native?.keys ?? []) {
        for (const value of ['true', 'false', odd(m.native?.reading as Reading)])
          list.push({ name: `${kind.name}: native ${key}: ${value}`, yaml: job(asked({ [key]: value })) });
      }
      if (m.initOnly !== undefined) {
        list.push({ name: `${kind.name}: init container only`, yaml: job(asked({ [m.initOnly.annotation]: 'true' })) });
        list.push({ name: `${kind.name}: init container only, off`, yaml: job(asked({ [m.initOnly.annotation]: 'false' })) });
      }
      if (m.sidecarless !== undefined) {
        list.push({ name: `${kind.name}: sidecarless`, yaml: job({ labels: { [m.sidecarless.key]: m.sidecarless.value } }) });
        list.push({
          name: `${kind.name}: sidecarless, but asked for`,
          yaml: job({ labels: { ...on, [m.sidecarless.key]: m.sidecarless.value } }),
        });
      }
      if (m.revisionLabel !== undefined)
        list.push({ name: `${kind.name}: revision label`, yaml: job({ labels: { [m.revisionLabel]: 'canary' } }) });
      if (m.injectedAnnotation !== undefined) {
        for (const value of ['injected', '{"containers":["istio-proxy"]}', '{"initContainers":["istio-proxy"]}', ''])
          list.push({
            name: `${kind.name}: already injected ${JSON.stringify(value)}`,
            yaml: job({ annotations: { [m.injectedAnnotation]: value } }),
          });
      }
      for (const domain of m.settings ?? []) {
        list.push({ name: `${kind.name}: its own setting ${domain}`, yaml: job({ annotations: { [`${domain}/x`]: '1' } }) });
        list.push({ name: `${kind.name}: its own setting under ${domain}`, yaml: job({ annotations: { [`sub.${domain}/x`]: '1' } }) });
      }
      for (const rule of m.namespace ?? []) {
        const key = rule.label ?? rule.annotation ?? '';
        const marks = { [key]: rule.values?.[0] ?? 'canary' };
        const namespace = rule.label !== undefined ? { labels: marks } : { annotations: marks };
        list.push({ name: `${kind.name}: its namespace's ${key}`, yaml: job(), namespace, injected: [kind.name as KindName] });
        list.push({
          name: `${kind.name}: its namespace's ${key}, declined by the pod`,
          yaml: job(inject.reading.off[0] === undefined ? {} : { [where]: { [first]: inject.reading.off[0] } }),
          namespace,
          injected: [kind.name as KindName],
        });
      }
    }
    const container = m.container;
    if (container !== undefined) {
      const image = `registry.example/${container.images[0]}:2`;
      for (const args of [
        [],
        ['--quitquitquit'],
        ['--quitquitquit=false'],
        ['--health-check=true'],
        ['--admin-port=9191'],
        ['--admin-port=9091'],
        ['--admin-port', '9191'],
      ]) {
        list.push({
          name: `${kind.name}: its container, args ${JSON.stringify(args)}`,
          yaml: job({}, { containers: [{ name: 'proxy', image, args }] }),
        });
      }
      list.push({ name: `${kind.name}: its container without args`, yaml: job({}, { containers: [{ name: 'proxy', image }] }) });
      for (const program of [...container.programs, ...(m.noQuitPrograms ?? [])])
        list.push({
          name: `${kind.name}: program ${program}`,
          yaml: job({}, { containers: [{ name: 'proxy', image: 'registry.example/other:1', command: [`/bin/${program}`], args: [] }] }),
        });
      list.push({
        name: `${kind.name}: native container`,
        yaml: job({}, { spec: { initContainers: [{ name: 'proxy', image, restartPolicy: 'Always' }] } }),
      });
      list.push({
        name: `${kind.name}: two containers`,
        yaml: job(
          {},
          {
            containers: [
              { name: 'proxy', image, args: [] },
              { name: 'proxy2', image, args: [] },
            ],
          },
        ),
        leftToInject: 'two proxies of one kind: --also twice, which needs a list flattened, which Kubernetes CEL lacks',
      });
    }
  }
  const istio = { labels: { 'sidecar.istio.io/inject': 'true' } };
  const shapes: [string, string][] = [
    ['OnFailure', job(istio, { restartPolicy: 'OnFailure' })],
    ['a CronJob', job(istio, { kind: 'CronJob' })],
    ['a bare Pod', job(istio, { kind: 'Pod' })],
    ['a bare Pod that restarts always', job(istio, { kind: 'Pod', restartPolicy: 'Always' })],
    ['two job containers', job(istio, { containers: [{ name: 'other', image: 'x', command: ['true'] }] })],
    ['no command', job(istio, { job: { command: undefined as unknown as Json, args: ['x'] } })],
    [
      'lists already there',
      job(istio, {
        job: { env: [{ name: 'A', value: '1' }], volumeMounts: [{ name: 'v', mountPath: '/v' }] },
        spec: { volumes: [{ name: 'v', emptyDir: {} }], initContainers: [{ name: 'i', image: 'x' }] },
      }),
    ],
    ['a volume of its name', job(istio, { spec: { volumes: [{ name: 'istio-job-run', emptyDir: {} }] } })],
    ['an init container of its name', job(istio, { spec: { initContainers: [{ name: 'install-istio-job-run', image: 'x' }] } })],
    [
      'a mount at its path',
      job(istio, { job: { volumeMounts: [{ name: 'v', mountPath: '/istio-job-run' }] }, spec: { volumes: [{ name: 'v', emptyDir: {} }] } }),
    ],
    [
      'a podinfo volume',
      job({ annotations: { 'linkerd.io/inject': 'enabled' } }, { spec: { volumes: [{ name: 'istio-job-run-podinfo', emptyDir: {} }] } }),
    ],
    [
      'podinfo mounted',
      job(
        { annotations: { 'linkerd.io/inject': 'enabled' } },
        { job: { volumeMounts: [{ name: 'p', mountPath: '/etc/podinfo' }] }, spec: { volumes: [{ name: 'p', emptyDir: {} }] } },
      ),
    ],
    ['wrapped already', job(istio, { job: { command: ['/istio-job-run/istio-job-run', '--', 'sh', '-c', './task.sh'] } })],
    ['istio and linkerd', job({ labels: istio.labels, annotations: { 'linkerd.io/inject': 'enabled' } })],
    ['istio and an auth proxy', job(istio, { containers: [{ name: 'proxy', image: 'registry.example/cloud-sql-proxy:2', args: [] }] })],
    ['an istio-proxy container', job({}, { containers: [{ name: 'istio-proxy', image: 'x' }] })],
  ];
  for (const [name, yaml] of shapes) list.push({ name, yaml });
  return list;
}

describe('the policy does what --inject does, on pods made from the kinds table', () => {
  for (const mode of MODES) {
    test(mode.mode, () => {
      let rewritten = 0;
      for (const { name, yaml, namespace, injected, leftToInject } of cases()) {
        for (const verdict of agreement(name, yaml, { ...SETTINGS, ...mode }, namespace, injected)) {
          if (leftToInject !== undefined && verdict.inject === 'rewritten') {
            assert.deepEqual([verdict.policy, verdict.why], ['skipped', 'nothing-inject-refuses'], `${name}: ${leftToInject}`);
            continue;
          }
          agrees(verdict, mode, true);
          if (verdict.policy === 'patched') rewritten++;
        }
      }
      assert.ok(rewritten > 20, `the cases rewrite pods (${rewritten})`);
    });
  }
});

test('a script --inject refuses for what it does by itself: the policy wraps it, the pod completes', () => {
  const istio = { labels: { 'sidecar.istio.io/inject': 'true' } };
  const scripts = [
    ["bash syntax under the image's sh, dash", ['sh', '-c', 'function run { ./task.sh; }; run']],
    ['ends 0 after the job failed', ['sh', '-c', './task.sh || echo failed']],
  ] as const;
  for (const [name, command] of scripts) {
    for (const mode of MODES.filter((each) => !each.native)) {
      const yaml = job(istio, { job: { image: 'debian:12', command: [...command] } });
      for (const verdict of agreement(name, yaml, { ...SETTINGS, ...mode })) {
        assert.equal(verdict.inject, 'refused', `${name} (${mode.mode})`);
        assert.equal(agrees(verdict, mode, true), 'script-status', `${name} (${mode.mode}): ${verdict.refusals?.join('; ')}`);
        assert.equal(verdict.policy, 'patched', `${name} (${mode.mode})`);
      }
    }
  }
});

describe("the policy does what --inject does, on the project's own manifests", () => {
  const inputs = [
    ...SHAPES.map((shape) => ({ name: shape.name, text: shape.yaml })),
    ...readdirSync(join(root, 'docker', 'k8s')).map((file) => ({
      name: file,
      text: readFileSync(join(root, 'docker', 'k8s', file), 'utf8'),
    })),
  ];
  for (const mode of MODES) {
    test(mode.mode, () => {
      for (const { name, text } of inputs)
        for (const verdict of agreement(name, text, { ...SETTINGS, ...mode })) agrees(verdict, mode, false);
    });
  }
});

for (const dir of ['corpus', 'corpus2']) {
  const path = join(root, '..', 'shared', dir);
  const available = existsSync(path);
  describe(`the policy does what --inject does on ../shared/${dir}`, { skip: !available && `${path} is missing` }, () => {
    const files = available
      ? readdirSync(path)
          .filter((file) => /\.ya?ml$/.test(file))
          .sort()
      : [];
    for (const mode of MODES) {
      for (const [namespace, marks, injected] of [
        ['no namespace injects', {}, []],
        ['istio-injection: enabled', { labels: { 'istio-injection': 'enabled' } }, ['istio']],
        ['linkerd.io/inject: enabled', { annotations: { 'linkerd.io/inject': 'enabled' } }, ['linkerd']],
      ] as const) {
        test(`${mode.mode}, ${namespace}`, (t) => {
          const counts = { rewritten: 0, same: 0, leftToInject: [] as string[], scriptStatus: [] as string[] };
          for (const file of files) {
            for (const verdict of agreement(
              `${dir}/${file}`,
              readFileSync(join(path, file), 'utf8'),
              { ...SETTINGS, ...mode },
              marks,
              injected,
            )) {
              if (verdict.inject === 'rewritten') counts.rewritten++;
              const agreed = agrees(verdict, mode, false);
              if (agreed === 'script-status') counts.scriptStatus.push(verdict.name);
              else if (agreed) counts.leftToInject.push(verdict.name);
              else if (verdict.policy === 'patched') counts.same++;
            }
          }
          t.diagnostic(
            `--inject rewrites ${counts.rewritten}, the policy the same ${counts.same}; left to --inject (their commands speak to a sidecar): ${counts.leftToInject.join(', ') || 'none'}; refused by --inject for what the script does by itself: ${counts.scriptStatus.join(', ') || 'none'}`,
          );
          assert.equal(counts.same + counts.leftToInject.length, counts.rewritten);
        });
      }
    }
    test("the search for a sidecar's address stays within Kubernetes' cost limit of an expression", (t) => {
      // cel-go's runtime cost of matches: ceil(0.1 * (1 + the string's length)) * ceil(0.25 * the pattern's length)
      // (common/costs.go); Kubernetes' limit is 1,000,000 an expression (apiserver pkg/apis/cel/config.go).
      const [policy] = documents({ ...SETTINGS, ...MODES[0], namespaces: new Map() });
      const speaks = policy.spec.variables.find((variable: { name: string }) => variable.name === 'speaks').expression as string;
      const pattern = JSON.parse([...speaks.matchAll(/w\.matches\(("(?:[^"\\]|\\.)*")\)/g)].at(-1)?.[1] ?? '""') as string;
      assert.ok(pattern.includes('quitquitquit'), pattern);
      let most = 0;
      for (const file of files) {
        // biome-ignore lint/suspicious/noExplicitAny: a Job, CronJob or Pod as parsed
        for (const object of objectsOf(readFileSync(join(path, file), 'utf8')) as any[]) {
          const template =
            object.kind === 'CronJob' ? object.spec.jobTemplate.spec.template : object.kind === 'Job' ? object.spec.template : object;
          const containers: Record<string, string[]>[] = [...(template.spec.initContainers ?? []), ...template.spec.containers];
          const words = containers.flatMap((c) => [...(c.command ?? []), ...(c.args ?? [])]);
          const cost = words.reduce((sum, word) => sum + Math.ceil(0.1 * (1 + String(word).length)) * Math.ceil(0.25 * pattern.length), 0);
          most = Math.max(most, cost);
        }
      }
      t.diagnostic(`the costliest pod: ${most}`);
      assert.ok(most < 1_000_000, `${most}`);
    });
  });
}

/** What the policy did: matched or not, the condition or check that skipped it, or patched. */
function outcome(admitted: ReturnType<typeof admit>): string {
  if (admitted.kind === 'skipped') return `skipped: ${admitted.condition}`;
  if (admitted.kind === 'patched' && admitted.patch.length === 0) return `skipped: ${admitted.variables.get(SKIPPED)}`;
  return admitted.kind;
}

describe('the policy on requests', () => {
  const [policy] = documents({ ...SETTINGS, ...MODES[0], namespaces: new Map() }) as [Parameters<typeof admit>[0]];
  const namespace = { metadata: { name: 'team', labels: {} } };
  const object = (yaml: string): Json => parseAllDocuments(yaml)[0]?.toJS() as Json;
  const istio = object(job({ labels: { 'sidecar.istio.io/inject': 'true' } }));

  test("an UPDATE of a Job stored before the policy existed is left alone (its template can't change)", () => {
    const update = admit(policy, { operation: 'UPDATE', object: istio, oldObject: istio, namespace });
    assert.equal(outcome(update), 'skipped: stored-object-was-admitted-so');
  });

  test("a Job's pod (owned) is left alone, and a namespace the selector leaves out is not matched", () => {
    const pod = object(job({ labels: { 'sidecar.istio.io/inject': 'true' } }, { kind: 'Pod' })) as { metadata: Record<string, Json> };
    pod.metadata.ownerReferences = [{ apiVersion: 'batch/v1', kind: 'Job', name: 'case', uid: 'u' }];
    assert.equal(outcome(admit(policy, { operation: 'CREATE', object: pod, namespace })), 'skipped: bare-pod');
    const [selective] = documents({
      ...SETTINGS,
      ...MODES[0],
      namespaces: new Map(),
      namespaceSelector: { matchLabels: { team: 'a' } },
    }) as [Parameters<typeof admit>[0]];
    assert.equal(outcome(admit(selective, { operation: 'CREATE', object: istio, namespace })), 'unmatched');
    const selected = { metadata: { name: 'team', labels: { team: 'a' } } };
    assert.equal(outcome(admit(selective, { operation: 'CREATE', object: istio, namespace: selected })), 'patched');
  });

  test('--injected-namespaces names namespaces whose pods get a sidecar', () => {
    const plain = object(job());
    const [named] = documents({ ...SETTINGS, ...MODES[0], namespaces: new Map([['istio', new Set(['team'])]]) }) as [
      Parameters<typeof admit>[0],
    ];
    assert.equal(outcome(admit(policy, { operation: 'CREATE', object: plain, namespace })), 'skipped: a-classic-sidecar-nothing-stops');
    assert.equal(outcome(admit(named, { operation: 'CREATE', object: plain, namespace })), 'patched');
  });

  test('an annotation key with / is escaped in the patch path (jsonpatch.escapeKey)', () => {
    const linkerd = object(job({ annotations: { 'linkerd.io/inject': 'enabled' } }));
    const result = admit(policy, { operation: 'CREATE', object: linkerd, namespace });
    assert.equal(result.kind, 'patched');
    const paths = result.kind === 'patched' ? result.patch.map((operation) => operation.path) : [];
    assert.ok(paths.includes('/spec/template/metadata/annotations/config.linkerd.io~1proxy-admin-shutdown'), paths.join('\n'));
  });
});
