// The measurements behind docs/RELIABILITY.md, as a program of the test suite: the fault matrix, the bad
// inputs, a soak of randomised pods and the adversarial suite, each pod in a namespace of its own. Prints one
// JSON line per result on stdout (progress on stderr); scripts/reliability.ts reads the lines and writes the
// report, so the report's code and the suite's never import each other.
//   reliability-main.ts --part legend|matrix|bad-inputs|soak|hostile [--pods N] [--seed N] [--parallel N] [--tries N]
// Needs root (network and PID namespaces) and a built dist/istio-job-run.

import { parseArgs } from 'node:util';
import { badInputPod, badInputs, judgeBadInput } from './bad-inputs.ts';
import { HOSTILE_CASES } from './hostile/index.ts';
import { runHostile, type TryLine } from './hostile-run.ts';
import { podsUnavailable, simulatePod, simulatePods } from './pods.ts';
import {
  expectedCode,
  expectedPhase,
  JOBS,
  matrix,
  measure,
  POLICIES,
  podSpec,
  randomScenario,
  type Scenario,
  SIDECAR_EXIT_BOUND_MS,
  SIDECARS,
  STOPS,
  scenarioId,
  seeded,
  violations,
} from './scenarios.ts';

const { values } = parseArgs({
  options: {
    part: { type: 'string' },
    pods: { type: 'string', default: '200' },
    seed: { type: 'string', default: '1' },
    parallel: { type: 'string', default: '2' },
    tries: { type: 'string' },
  },
});
const parallel = Number(values.parallel);
const print = (record: object): void => void process.stdout.write(`${JSON.stringify(record)}\n`);

/** One pod per scenario, `parallel` at a time; a line per pod, in the order of the list. */
async function runScenarios(scenarios: readonly Scenario[], label: string): Promise<void> {
  const lines = new Map<Scenario, object>();
  await simulatePods(scenarios, parallel, async (scenario) => {
    const result = await simulatePod(podSpec(scenario));
    const last = result.job.runs.at(-1);
    lines.set(scenario, {
      id: scenarioId(scenario),
      ...scenario,
      expected: { phase: expectedPhase(scenario), code: expectedCode(scenario) },
      measured: measure(result),
      violations: violations(scenario, result),
      jobMs: last?.exitedAt === undefined ? null : last.exitedAt - last.startedAt,
    });
    if (lines.size % 20 === 0 || lines.size === scenarios.length) process.stderr.write(`${label}: ${lines.size}/${scenarios.length}\n`);
  });
  for (const scenario of scenarios) {
    const line = lines.get(scenario);
    if (line !== undefined) print(line);
  }
}

async function runBadInputs(): Promise<void> {
  const inputs = badInputs();
  const lines = new Map<string, object>();
  await simulatePods(inputs, parallel, async (input) => {
    const outcome = judgeBadInput(input, await simulatePod(badInputPod(input)));
    const { violations: wrong, ...rest } = outcome;
    lines.set(input.name, { name: input.name, expected: input.code, ...rest, ok: wrong.length === 0 });
  });
  for (const input of inputs) {
    const line = lines.get(input.name);
    if (line !== undefined) print(line);
  }
}

/** Every hostile case in its long size (`tries` overrides each case's count): its outcomes, counted. */
async function runHostileCases(tries: number | undefined): Promise<void> {
  const lines = new Map<string, object>();
  await simulatePods(HOSTILE_CASES, parallel, async (hostile) => {
    const count = tries ?? hostile.tries.long;
    const results = await runHostile('long', [hostile.name], { tries: count, timeoutMs: 120_000 + count * 30_000 });
    const ok = results.filter((l) => l.ok).length;
    lines.set(hostile.name, { name: hostile.name, about: hostile.about, tries: results.length, ok, outcomes: tally(results) });
    process.stderr.write(`hostile: ${hostile.name}: ${ok}/${results.length}\n`);
  });
  for (const hostile of HOSTILE_CASES) {
    const line = lines.get(hostile.name);
    if (line !== undefined) print(line);
  }
}

/** Distinct outcomes, the unexpected and then the most frequent first, each with one example of what was sent. */
function tally(lines: readonly TryLine[]): { got: string; ok: boolean; count: number; example: string }[] {
  const byGot = new Map<string, { got: string; ok: boolean; count: number; example: string }>();
  for (const line of lines) {
    const key = `${line.ok}\n${line.got}`;
    const entry = byGot.get(key) ?? { got: line.got, ok: line.ok, count: 0, example: line.sent };
    entry.count += 1;
    byGot.set(key, entry);
  }
  return [...byGot.values()].sort((a, b) => Number(a.ok) - Number(b.ok) || b.count - a.count);
}

const about = (table: Readonly<Record<string, { readonly about: string }>>): [string, string][] =>
  Object.entries(table).map(([name, entry]) => [name, entry.about]);

const unavailable = podsUnavailable();
if (unavailable !== undefined && values.part !== 'legend') throw new Error(`cannot simulate pods here: ${unavailable}`);
switch (values.part) {
  case 'legend':
    print({
      sidecars: about(SIDECARS),
      jobs: about(JOBS),
      policies: Object.keys(POLICIES),
      stops: about(STOPS),
      sidecarExitBoundMs: SIDECAR_EXIT_BOUND_MS,
    });
    break;
  case 'matrix':
    await runScenarios(matrix(), 'matrix');
    break;
  case 'bad-inputs':
    await runBadInputs();
    break;
  case 'soak': {
    const random = seeded(Number(values.seed));
    await runScenarios(
      Array.from({ length: Number(values.pods) }, () => randomScenario(random)),
      'soak',
    );
    break;
  }
  case 'hostile':
    await runHostileCases(values.tries === undefined ? undefined : Number(values.tries));
    break;
  default:
    throw new Error(`--part: ${JSON.stringify(values.part)} is not one of legend, matrix, bad-inputs, soak, hostile`);
}
