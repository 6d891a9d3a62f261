// --check and --inject agree, over real manifests (../shared/corpus and ../shared/corpus2, not kept here: each is
// skipped with a reason where absent) and the project's own (docker/k8s/, the README's YAML, the shapes of
// test/support/sidecar-shapes.ts): where --check reports an error that advises --inject, --inject either rewrites
// the file (and --check on its output finds nothing left that advises --inject, and no `unwrapped`) or refuses it,
// naming that pod and why; --check's advice says which, for each finding (its `inject` field). Over the shared
// samples also: every Job whose script quits its sidecar by hand and that --check calls broken is rewritten (but
// the few named below, refused for the reason given), idempotent, and its output checks clean.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { check } from '../../../../src/manifest/check/rules.ts';
import { handQuits } from '../../../../src/manifest/inject/hand-rolled.ts';
import { advised, inject } from '../../../../src/manifest/inject/inject.ts';
import { readPod } from '../../../../src/manifest/pod/pod.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { workloads } from '../../../../src/manifest/yaml/workloads.ts';
import { source } from '../../../support/manifest.ts';
import { root } from '../../../support/process.ts';
import { SHAPES } from '../../../support/sidecar-shapes.ts';

await loadShellParser();
const IMAGE = 'registry.example/istio-job-run:9.9.9';
const NAMESPACES = { namespaces: new Map() };

/**
 * The Jobs of the shared samples whose hand-rolled quit --inject refuses, and a piece of the reason a reviewer
 * agrees with: FILE -> reason.
 */
const REFUSED: Readonly<Record<string, string>> = {
  // The proxy is a v1 Cloud SQL proxy in a custom image: no quit endpoint a wrapper could use.
  '04-k8s-job-sidecar-terminator.yaml': 'without a quit endpoint',
  // Without its quit and exit 0 the ERR/EXIT trap script waits in loops that retry until a service answers.
  '19-control-plane.yaml': 'cannot be known (a loop that may not end)',
  // A watcher container quits Linkerd for another job container: which ends last is not the wrapper's to know.
  '21-linkerd-poc.yaml': '2 job containers',
};

const yamlFiles = (dir: string): { name: string; text: string }[] =>
  readdirSync(dir)
    .filter((file) => /\.ya?ml$/.test(file))
    .sort()
    .map((file) => ({ name: file, text: readFileSync(join(dir, file), 'utf8') }));

/** The line of each workload of TEXT, with its kind and name, as --inject names a pod. */
function podsOf(text: string, name: string): { first: number; last: number; named: string }[] {
  const parsed = source(text, name);
  return workloads(parsed).map((workload) => {
    const [start = 0, end = start] = workload.object.range ?? [];
    const first = parsed.lines.linePos(start).line;
    return { first, last: parsed.lines.linePos(end).line, named: `${name}:${first}: ${workload.kind} ${workload.name}: ` };
  });
}

function agrees(name: string, text: string): void {
  const findings = check(source(text, name));
  const advising = findings.filter((finding) => finding.level === 'error' && finding.advisesInject);
  const result = inject(source(text, name), { image: IMAGE, native: false });
  const printed = advised(source(text, name), NAMESPACES);
  if (printed.some((finding) => finding.inject?.will === 'rewrite')) assert.equal(result.kind, 'done', 'advised, so rewritten');
  if (advising.length === 0) return;
  if (result.kind === 'refused') {
    const pods = podsOf(text, name).filter((pod) => advising.some((finding) => finding.line >= pod.first && finding.line <= pod.last));
    assert.ok(
      result.problems.some((problem) => pods.some((pod) => problem.startsWith(pod.named))),
      `a refusal names the pod --check advises --inject for:\n${result.problems.join('\n')}`,
    );
    assert.ok(
      printed.every((finding) => finding.inject === undefined || finding.inject.will === 'refuse'),
      'no advice that --inject rewrites a file it refuses',
    );
    assert.ok(
      printed.some((finding) => {
        const verdict = finding.inject;
        return (
          verdict?.will === 'refuse' && result.problems.some((problem) => problem.endsWith(verdict.why) || verdict.why.includes(problem))
        );
      }),
      'the advice says why --inject refuses',
    );
    return;
  }
  assert.notEqual(result.text, text, `--check advises --inject (${advising.map((finding) => finding.rule).join(', ')}), so it rewrites`);
  assert.deepEqual(
    advised(source(result.text, name), NAMESPACES)
      .filter((finding) => finding.level === 'error' && (finding.inject !== undefined || finding.rule === 'unwrapped'))
      .map((finding) => `${finding.line} ${finding.rule}`),
    [],
    'nothing left on the output that advises --inject',
  );
}

/** Each Job of TEXT whose script quits its sidecar by hand while --check finds an error in it: its line. */
function handRolledJobs(name: string, text: string): number[] {
  const parsed = source(text, name);
  const errors = check(parsed).filter((finding) => finding.level === 'error');
  return workloads(parsed)
    .map((workload) => ({ workload, pod: readPod(workload, new Map(), undefined) }))
    .filter(({ pod }) => pod.jobs.some((job) => handQuits(job).length > 0 || job.scriptWrappers.some((wrapper) => wrapper.quits)))
    .filter(({ workload }) => {
      const [start = 0, end = start] = workload.object.range ?? [];
      const [first, last] = [parsed.lines.linePos(start).line, parsed.lines.linePos(end).line];
      return errors.some((finding) => finding.line >= first && finding.line <= last);
    })
    .map(({ workload }) => parsed.lines.linePos(workload.object.range?.[0] ?? 0).line);
}

/** A file whose Jobs quit by hand and are broken: rewritten, idempotent and clean, or refused for the reason known. */
function handRolledRewritten(name: string, text: string): void {
  const jobs = handRolledJobs(name, text);
  if (jobs.length === 0) return;
  const result = inject(source(text, name), { image: IMAGE, native: false });
  const reason = REFUSED[name];
  if (reason !== undefined) {
    assert.equal(result.kind, 'refused');
    assert.ok(result.kind === 'refused' && result.problems.some((problem) => problem.includes(reason)), JSON.stringify(result));
    return;
  }
  assert.equal(result.kind, 'done', result.kind === 'refused' ? result.problems.join('\n') : '');
  const out = (result as { text: string }).text;
  assert.notEqual(out, text, 'rewritten');
  assert.deepEqual(
    check(source(out, name))
      .filter((finding) => finding.level === 'error')
      .map((finding) => `${finding.line} ${finding.rule}`),
    [],
    'the output checks clean',
  );
  const again = inject(source(out, name), { image: IMAGE, native: false });
  assert.equal(again.kind === 'done' ? again.text : again.problems.join('\n'), out, 'idempotent');
}

for (const dir of ['corpus', 'corpus2']) {
  const path = join(root, '..', 'shared', dir);
  const available = existsSync(path);
  describe(`--check and --inject agree on ../shared/${dir}`, { skip: !available && `${path} is missing` }, () => {
    const files = available ? yamlFiles(path) : [];
    for (const { name, text } of files) test(name, () => agrees(name, text));
    test('every Job that quits by hand and is broken is rewritten, idempotent and clean (or refused, for a reason named)', () => {
      const found = files.filter(({ name, text }) => handRolledJobs(name, text).length > 0).map(({ name }) => name);
      assert.ok(found.length > 0, 'the sample has Jobs that quit by hand');
      for (const { name, text } of files) handRolledRewritten(name, text);
    });
  });
}

describe("--check and --inject agree on the project's own manifests", () => {
  for (const { name, text } of yamlFiles(join(root, 'docker', 'k8s'))) test(`docker/k8s/${name}`, () => agrees(name, text));
  const readme = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  test("the README's YAML blocks", () => {
    for (const block of readme) agrees('README.md', block);
  });
  for (const shape of SHAPES) test(shape.name, () => agrees('shape.yaml', shape.yaml));
});
