// Prints where the model disagrees with the real shell on the scripts of the shared samples
// (test/support/script-oracle.ts): each disagreement with the combination, what the shell did and what the model
// predicted, then the counts. Needs root and the build.
//
//   npx node test/support/script-oracle-main.ts [--seed N] [--only TEXT] [--all]
//
// --only runs the scripts whose id holds TEXT; --all prints the undetermined runs too.

import { parseArgs } from 'node:util';
import { loadShellParser } from '../../src/manifest/script/shell.ts';
import { proofUnavailable } from './script-proof.ts';
import { describeJudged, describeRewritten, runOracle, sampleScripts } from './script-oracle.ts';

const { values } = parseArgs({
  options: { seed: { type: 'string', default: '1' }, only: { type: 'string' }, all: { type: 'boolean', default: false } },
});
const seed = Number(values.seed);
if (!Number.isInteger(seed)) {
  process.stderr.write(`script-oracle: --seed ${values.seed}: a whole number\n`);
  process.exit(2);
}
const unavailable = proofUnavailable();
if (unavailable !== undefined) {
  process.stderr.write(`script-oracle: ${unavailable}\n`);
  process.exit(2);
}
await loadShellParser();
const scripts = sampleScripts().filter((script) => values.only === undefined || script.id.includes(values.only));
const result = await runOracle(scripts, { seed });
for (const one of result.judged)
  if (one.verdict === 'disagrees' || (values.all && one.verdict !== 'agrees')) process.stdout.write(`${describeJudged(one)}\n\n`);
for (const one of result.rewritten)
  if (one.verdict === 'disagrees' || (values.all && one.verdict !== 'agrees')) process.stdout.write(`${describeRewritten(one)}\n\n`);
const count = (verdict: string): number => result.judged.filter((one) => one.verdict === verdict).length;
const rewrites = (verdict: string): number => result.rewritten.filter((one) => one.verdict === verdict).length;
process.stdout.write(
  `${scripts.length} scripts, ${result.judged.length + result.unfollowed.length} combinations (${result.judged.length} run, ${result.unfollowed.length} the model follows nowhere to its end) in ${result.seconds.toFixed(1)} s: ${count('agrees')} agree, ${count('disagrees')} disagree, ${count('undetermined')} undetermined\n`,
);
process.stdout.write(
  `--inject's rewrites of ${new Set(result.rewritten.map((one) => one.script.id)).size} scripts, ${result.rewritten.length} runs: ${rewrites('agrees')} agree, ${rewrites('disagrees')} disagree, ${rewrites('undetermined')} undetermined (the original hung)\n`,
);
process.exitCode = count('disagrees') + rewrites('disagrees') === 0 ? 0 : 1;
