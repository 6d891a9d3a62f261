// --admission-policy: the printed MutatingAdmissionPolicy and binding pass the API's schema for v1 and v1beta1,
// their CEL is what Kubernetes' compiler takes (literals of one type), and run over pods made from every row of the
// sidecar kinds table, the project's own manifests and the shared samples (../shared/corpus and corpus2, skipped
// where absent) the policy writes exactly the object --inject writes, or leaves alone what --inject refuses or
// leaves; a second pass changes nothing, an UPDATE with the first-written object comes back as the stored one, and
// --check finds no `unwrapped` on what it wrote. Run by test/support/admission.ts, as the API server runs a policy.
// The kinds table's pods and the shared samples are its slow part: the fast loop takes a seeded part of them, test:all
// every one (test/support/sample.ts).

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { parseAllDocuments } from 'yaml';
import { POLICY_VERSIONS, type PolicyVersion } from '../../../../src/config/tool-flags.ts';
import { admissionPolicy, literal, type PolicySettings, SKIPPED } from '../../../../src/manifest/inject/policy.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { admit, type Json, mixedLiterals } from '../../../support/admission.ts';
import { openApiValidators } from '../../../support/k8s-openapi.ts';
import { agreement, objectsOf, type Verdict } from '../../../support/policy-agreement.ts';
import { cases, job } from '../../../support/policy-cases.ts';
import { root } from '../../../support/process.ts';
import { sample, sampleNote, sampling } from '../../../support/sample.ts';
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

  test('its CEL builds no Object{} value (the kind Kubernetes 1.36.0-1.36.4 and 1.35.0-1.35.7 cannot convert)', () => {
    // kubernetes/kubernetes pull 140419 and issue 142181: an Object initializer's value in a JSON Patch fails to
    // convert, or crashes the API server inside a list. The policy writes its values as map and list literals.
    for (const mode of MODES) {
      const [policy] = documents({ ...SETTINGS, ...mode, namespaces: new Map() });
      const spec = policy.spec as PolicySpec;
      for (const { name, expression } of [
        ...spec.variables,
        { name: 'mutation', expression: spec.mutations[0]?.jsonPatch.expression ?? '' },
      ])
        assert.doesNotMatch(expression, /\bObject(\.[A-Za-z_]+)*\s*\{/, name);
    }
  });

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

describe('the policy does what --inject does, on pods made from the kinds table', () => {
  for (const mode of MODES) {
    test(mode.mode, (t) => {
      let rewritten = 0;
      const all = cases();
      const picked = sample(all, 4, `kinds ${mode.mode}`);
      t.diagnostic(sampleNote(picked.length, all.length));
      for (const { name, yaml, namespace, injected, leftToInject } of picked) {
        for (const verdict of agreement(name, yaml, { ...SETTINGS, ...mode }, namespace, injected)) {
          if (leftToInject !== undefined && verdict.inject === 'rewritten') {
            assert.deepEqual([verdict.policy, verdict.why], ['skipped', 'nothing-inject-refuses'], `${name}: ${leftToInject}`);
            continue;
          }
          agrees(verdict, mode, true);
          if (verdict.policy === 'patched') rewritten++;
        }
      }
      assert.ok(rewritten > (sampling().whole ? 20 : 0), `the cases rewrite pods (${rewritten} of ${picked.length})`);
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
          const picked = sample(files, 4, `${dir} ${mode.mode} ${namespace}`);
          t.diagnostic(sampleNote(picked.length, files.length));
          for (const file of picked) {
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
