// --check and --inject agree, over real manifests (../shared/corpus and ../shared/corpus2, not kept here: each is
// skipped with a reason where absent) and the project's own (docker/k8s/, the README's YAML, the shapes of
// test/support/sidecar-shapes.ts): where --check reports an error that advises --inject, --inject either rewrites
// the file (and --check on its output finds nothing left that advises --inject, and no `unwrapped`) or refuses it,
// naming that pod and why; and --check prints the advice only where --inject rewrites that pod.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { check, INJECT_ADVICE } from '../../../../src/manifest/check/rules.ts';
import { advised, inject } from '../../../../src/manifest/inject/inject.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { workloads } from '../../../../src/manifest/yaml/workloads.ts';
import { source } from '../../../support/manifest.ts';
import { root } from '../../../support/process.ts';
import { SHAPES } from '../../../support/sidecar-shapes.ts';

await loadShellParser();
const IMAGE = 'registry.example/istio-job-run:9.9.9';
const NAMESPACES = { namespaces: new Map() };

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
  if (printed.some((finding) => finding.message.includes(INJECT_ADVICE))) {
    assert.equal(result.kind, 'done', 'advised, so rewritten');
  }
  if (advising.length === 0) return;
  if (result.kind === 'refused') {
    const pods = podsOf(text, name).filter((pod) => advising.some((finding) => finding.line >= pod.first && finding.line <= pod.last));
    assert.ok(
      result.problems.some((problem) => pods.some((pod) => problem.startsWith(pod.named))),
      `a refusal names the pod --check advises --inject for:\n${result.problems.join('\n')}`,
    );
    assert.ok(
      printed.every((finding) => !finding.message.includes(INJECT_ADVICE)),
      'no advice that --inject rewrites a file it refuses',
    );
    return;
  }
  assert.notEqual(result.text, text, `--check advises --inject (${advising.map((finding) => finding.rule).join(', ')}), so it rewrites`);
  assert.deepEqual(
    advised(source(result.text, name), NAMESPACES)
      .filter((finding) => finding.level === 'error' && (finding.advisesInject || finding.rule === 'unwrapped'))
      .map((finding) => `${finding.line} ${finding.rule}`),
    [],
    'nothing left on the output that advises --inject',
  );
}

for (const dir of ['corpus', 'corpus2']) {
  const path = join(root, '..', 'shared', dir);
  const available = existsSync(path);
  describe(`--check and --inject agree on ../shared/${dir}`, { skip: !available && `${path} is missing` }, () => {
    for (const { name, text } of available ? yamlFiles(path) : []) test(name, () => agrees(name, text));
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
