// Prints where --check disagrees with dash and bash on generated job scripts (test/support/script-proof.ts): the
// counts by kind, then each disagreement with its script, what each shell did, the truth and --check's findings.
// Needs root.
//
//   npx node test/support/script-proof-main.ts [--seed N] [--count N] [--variants N] [--shapes N] [--samples N] [--all]
//
// --samples N prints N generated manifests and runs nothing; --all prints every script, not only disagreements.

import { parseArgs } from 'node:util';
import { loadShellParser } from '../../src/manifest/script/shell.ts';
import { DEFAULT_COUNT, DEFAULT_SEED, DEFAULT_VARIANTS, generateScripts, generateVariants } from './script-grammar.ts';
import { describe, proofUnavailable, prove } from './script-proof.ts';
import { DEFAULT_SHAPES, generateShapes } from './script-shapes.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: String(DEFAULT_SEED) },
    count: { type: 'string', default: String(DEFAULT_COUNT) },
    variants: { type: 'string', default: String(DEFAULT_VARIANTS) },
    shapes: { type: 'string', default: String(DEFAULT_SHAPES) },
    samples: { type: 'string' },
    all: { type: 'boolean', default: false },
  },
});
const seed = Number(values.seed);
const count = Number(values.count);
if (!Number.isInteger(seed) || !Number.isInteger(count) || count < 1) {
  process.stderr.write(`script-proof: --seed ${values.seed} --count ${values.count}: both are whole numbers, the count 1 or more\n`);
  process.exit(2);
}
const variants = Number(values.variants);
if (!Number.isInteger(variants) || variants < 0) {
  process.stderr.write(`script-proof: --variants ${values.variants}: a whole number, 0 or more\n`);
  process.exit(2);
}
const shapes = Number(values.shapes);
if (!Number.isInteger(shapes) || shapes < 0) {
  process.stderr.write(`script-proof: --shapes ${values.shapes}: a whole number, 0 or more\n`);
  process.exit(2);
}
const scripts = [...generateScripts(seed, count), ...generateVariants(seed, variants), ...generateShapes(seed, shapes)];
if (values.samples !== undefined) {
  for (const script of scripts.slice(0, Number(values.samples)))
    process.stdout.write(`# ${script.id}: ${script.shapes.join(', ')}\n${script.manifest}---\n`);
  process.exit(0);
}
const unavailable = proofUnavailable();
if (unavailable !== undefined) {
  process.stderr.write(`script-proof: ${unavailable}\n`);
  process.exit(2);
}
await loadShellParser();
const started = performance.now();
const proven = await prove(scripts);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
const broken = proven.filter((one) => one.problems.length > 0);
const tally = (items: readonly string[]): string =>
  [...items.reduce((map, item) => map.set(item, (map.get(item) ?? 0) + 1), new Map<string, number>())]
    .sort((a, b) => b[1] - a[1])
    .map(([item, n]) => `${item} ${n}`)
    .join(', ');
/** For each shape (the manifest's form aside): how many of the scripts made with it disagree, of how many. */
function byShape(): string {
  const counts = new Map<string, { disagree: number; all: number }>();
  for (const one of proven) {
    for (const shape of new Set(one.script.shapes.filter((name) => !name.startsWith('manifest:')))) {
      const count = counts.get(shape) ?? { disagree: 0, all: 0 };
      counts.set(shape, { disagree: count.disagree + (one.agreement === 'agrees' ? 0 : 1), all: count.all + 1 });
    }
  }
  return [...counts]
    .sort((a, b) => b[1].disagree - a[1].disagree)
    .slice(0, 20)
    .map(([shape, { disagree, all }]) => `${shape} ${disagree}/${all}`)
    .join(', ');
}
for (const one of proven) if (values.all || one.agreement !== 'agrees') process.stdout.write(`${describe(one)}\n\n`);
process.stdout.write(
  [
    `seed ${seed}: ${scripts.length} scripts, ${scripts.length * 6} runs in ${seconds} s; ${broken.length} broken, ${scripts.length - broken.length} work (by the manifest's shell)`,
    `agreement: ${tally(proven.map((one) => one.agreement))}`,
    `problems of the broken: ${tally(broken.flatMap((one) => one.problems))}`,
    `missed, by problem: ${tally(proven.filter((one) => one.agreement === 'missed').flatMap((one) => one.problems))}`,
    `false errors, by rule: ${tally(proven.filter((one) => one.agreement === 'false-error').flatMap((one) => one.findings.filter((f) => f.level === 'error').map((f) => f.rule)))}`,
    `another rule, by rule found: ${tally(proven.filter((one) => one.agreement === 'other-rule').flatMap((one) => one.findings.filter((f) => f.level === 'error').map((f) => f.rule)))}`,
    `disagreements of the scripts with each shape (the most first): ${byShape()}`,
    `the shells differ on ${proven.filter((one) => one.otherProblems !== undefined).length} scripts (the manifest's shell decides)`,
    '',
  ].join('\n'),
);
process.exitCode = proven.every((one) => one.agreement === 'agrees') ? 0 : 1;
