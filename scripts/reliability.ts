// npm run reliability: runs the fault matrix, the bad inputs and a soak through simulated pods, and
// writes docs/RELIABILITY.md and docs/reliability.json from what was measured (never by hand).
// npm run soak: the long soak alone (--soak-only --pods N), exiting 1 on any hang or wrong exit code.
// --hostile-only [--hostile-tries N]: only the adversarial suite, its section spliced into the existing
// docs/RELIABILITY.md (the rest kept); exits 1 when any try was not as expected.
// Needs root (network and PID namespaces) and a built dist/istio-job-run.

import { cpus, totalmem } from 'node:os';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { badInputPod, badInputs, judgeBadInput } from '../test/support/bad-inputs.ts';
import type { PodResult } from '../test/support/kubelet.ts';
import { podsUnavailable, simulatePod, simulatePods } from '../test/support/pods.ts';
import {
  expectedCode,
  expectedPhase,
  JOBS,
  matrix,
  measure,
  podSpec,
  POLICIES,
  randomScenario,
  scenarioId,
  seeded,
  SIDECAR_EXIT_BOUND_MS,
  SIDECARS,
  STOPS,
  violations,
  type Scenario,
} from '../test/support/scenarios.ts';
import { root } from './pinned-node.ts';
import { hostileSection, runHostileSuite, spliceSection } from './reliability/hostile.ts';

const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '200' },
    seed: { type: 'string' },
    parallel: { type: 'string', default: '2' },
    'soak-only': { type: 'boolean', default: false },
    'hostile-only': { type: 'boolean', default: false },
    'hostile-tries': { type: 'string' },
    out: { type: 'string', default: join(root, 'docs') },
  },
});
const parallel = Number(values.parallel);

interface Row {
  readonly scenario: Scenario;
  readonly result: PodResult;
  readonly violations: string[];
}

async function runAll(scenarios: readonly Scenario[], label: string): Promise<Row[]> {
  const rows: Row[] = [];
  let done = 0;
  await simulatePods(scenarios, parallel, async (scenario) => {
    const result = await simulatePod(podSpec(scenario));
    rows.push({ scenario, result, violations: violations(scenario, result) });
    done += 1;
    if (done % 20 === 0 || done === scenarios.length) process.stderr.write(`${label}: ${done}/${scenarios.length}\n`);
  });
  const order = new Map(scenarios.map((scenario, i) => [scenario, i]));
  return rows.sort((a, b) => (order.get(a.scenario) ?? 0) - (order.get(b.scenario) ?? 0));
}

async function soak(pods: number, seed: number): Promise<{ rows: Row[]; ms: number }> {
  const random = seeded(seed);
  const started = performance.now();
  const rows = await runAll(
    Array.from({ length: pods }, () => randomScenario(random)),
    'soak',
  );
  return { rows, ms: performance.now() - started };
}

function soakTotals(rows: readonly Row[]) {
  const count = (test: (row: Row) => boolean): number => rows.filter(test).length;
  return {
    pods: rows.length,
    hangs: count((row) => row.result.phase === 'Running'),
    wrongExitCodes: count((row) => measure(row.result).code !== expectedCode(row.scenario)),
    otherViolations: count(
      (row) => row.violations.length > 0 && measure(row.result).code === expectedCode(row.scenario) && row.result.phase !== 'Running',
    ),
    succeeded: count((row) => row.result.phase === 'Succeeded'),
    failed: count((row) => row.result.phase === 'Failed'),
  };
}

const ms = (value: number | undefined): string => (value === undefined ? '—' : `${Math.round(value)}`);

function matrixTable(rows: readonly Row[]): string[] {
  const lines = [
    '| sidecar | job | restartPolicy / --quit | stopped | expected | measured | job runs | completion ms | sidecar exit after job, ms | quits | |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const { scenario: s, result, violations: v } of rows) {
    const m = measure(result);
    lines.push(
      `| ${s.sidecar} | ${s.job} | ${s.policy} | ${s.stop === 'none' ? '' : s.stop} | ${expectedPhase(s)} ${expectedCode(s)} | ` +
        `${m.phase} ${m.code ?? '—'} | ${m.runs} | ${ms(m.completionMs)} | ${ms(m.sidecarAfterJobMs)} | ${m.quits} | ${v.length === 0 ? 'ok' : `**${v.join('; ')}**`} |`,
    );
  }
  return lines;
}

function legend(): string[] {
  const lines = ['Sidecar behaviours:', ''];
  for (const [name, { about }] of Object.entries(SIDECARS)) lines.push(`- \`${name}\`: ${about}`);
  lines.push('', 'Job behaviours:', '');
  for (const [name, { about }] of Object.entries(JOBS)) lines.push(`- \`${name}\`: ${about}`);
  lines.push(
    '',
    'Policies (restartPolicy / `--quit`): ' +
      Object.keys(POLICIES)
        .map((name) => `\`${name}\``)
        .join(', ') +
      '.',
  );
  lines.push('', 'Stops:', '');
  for (const [name, { about }] of Object.entries(STOPS)) lines.push(`- \`${name}\`: ${about}`);
  return lines;
}

async function main(): Promise<void> {
  const unavailable = podsUnavailable();
  if (unavailable !== undefined) throw new Error(`cannot simulate pods here: ${unavailable}`);
  const pods = Number(values.pods);
  const seed = values.seed === undefined ? Date.now() % 1_000_000 : Number(values.seed);

  if (values['soak-only']) {
    const { rows, ms: took } = await soak(pods, seed);
    const totals = soakTotals(rows);
    process.stdout.write(`${JSON.stringify({ seed, seconds: Math.round(took / 1000), ...totals }, null, 2)}\n`);
    for (const row of rows.filter((r) => r.violations.length > 0))
      process.stdout.write(`${scenarioId(row.scenario)}: ${row.violations.join('; ')}\n`);
    process.exitCode = totals.hangs + totals.wrongExitCodes + totals.otherViolations === 0 ? 0 : 1;
    return;
  }

  const hostileTries = values['hostile-tries'] === undefined ? undefined : Number(values['hostile-tries']);
  if (values['hostile-only']) {
    const rows = await runHostileSuite(parallel, hostileTries);
    const file = join(values.out, 'RELIABILITY.md');
    mkdirSync(values.out, { recursive: true });
    writeFileSync(file, spliceSection(existsSync(file) ? readFileSync(file, 'utf8') : '# Reliability\n', hostileSection(rows)));
    const json = join(values.out, 'reliability.json');
    const previous = existsSync(json) ? (JSON.parse(readFileSync(json, 'utf8')) as Record<string, unknown>) : {};
    writeFileSync(json, `${JSON.stringify({ ...previous, hostile: rows }, null, 1)}\n`);
    const wrong = rows.reduce((sum, row) => sum + row.tries - row.ok, 0);
    process.stderr.write(`wrote the hostile section of ${file}: ${wrong} tries not as expected\n`);
    process.exitCode = wrong === 0 ? 0 : 1;
    return;
  }

  const started = performance.now();
  const scenarios = matrix();
  const matrixRows = await runAll(scenarios, 'matrix');
  const inputs = badInputs();
  const inputRows: {
    name: string;
    code: number | undefined;
    expected: number;
    message: string;
    quits: number;
    phase: string;
    ok: boolean;
  }[] = [];
  await simulatePods(inputs, parallel, async (input) => {
    const result = await simulatePod(badInputPod(input));
    const { code, message, quits, phase, violations: wrong } = judgeBadInput(input, result);
    inputRows.push({ name: input.name, code, expected: input.code, message, quits, phase, ok: wrong.length === 0 });
  });
  inputRows.sort((a, b) => inputs.findIndex((i) => i.name === a.name) - inputs.findIndex((i) => i.name === b.name));
  const soakRun = await soak(pods, seed);
  const totals = soakTotals(soakRun.rows);
  const hostileRows = await runHostileSuite(parallel, hostileTries);
  const hostileWrong = hostileRows.reduce((sum, row) => sum + row.tries - row.ok, 0);
  const minutes = (performance.now() - started) / 60_000;

  const main = matrixRows.filter((row) => row.scenario.limit === undefined);
  const limits = matrixRows.filter((row) => row.scenario.limit !== undefined);
  const failing = matrixRows.filter((row) => row.violations.length > 0).length;
  const doc = [
    '# Reliability',
    '',
    `Generated by \`npm run reliability\` (scripts/reliability.ts) on ${new Date().toISOString().slice(0, 10)}, on ${cpus().length} cores ` +
      `(${cpus()[0]?.model.trim() ?? 'unknown CPU'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, in ${minutes.toFixed(1)} minutes. ` +
      'Every figure below was measured in that run; nothing here is typed by hand.',
    '',
    '## Totals',
    '',
    `- Matrix: ${matrixRows.length} scenarios, ${matrixRows.length - failing} as expected, ${failing} not.`,
    `- Bad inputs: ${inputRows.length}, ${inputRows.filter((r) => r.ok).length} with the right message, exit code and quit.`,
    `- Soak: ${totals.pods} randomised pods (seed ${seed}): ${totals.hangs} hangs, ${totals.wrongExitCodes} wrong exit codes, ` +
      `${totals.otherViolations} other broken invariants (${totals.succeeded} Succeeded, ${totals.failed} Failed, as expected for each).`,
    `- Hostile: ${hostileRows.length} adversarial cases, ${hostileRows.reduce((sum, row) => sum + row.tries, 0)} tries, ${hostileWrong} not as expected.`,
    '',
    '## How it is measured',
    '',
    "Each scenario is a pod on this machine (test/support/kubelet.ts): a network namespace of its own (the pod's shared loopback, " +
      'with the sidecar stand-in on the real ports 15020/15021), one PID namespace per container with istio-job-run as PID 1 of the ' +
      'job container, and a small kubelet that starts the containers, restarts what Kubernetes restarts (restartPolicy OnFailure; a ' +
      'native sidecar that dies while the job runs), stops the pod as kubelet does (TERM to every PID 1, KILL after the grace period, ' +
      '1.5 s here), and decides the phase. A pod still running 12 s after it started is a hang. Timings are scaled down (an old ' +
      'Istio drains 1 s here instead of 5 s; restart backoffs are 100 ms).',
    '',
    "The invariants checked for every pod: the phase is the one Kubernetes should show (never a hang); the job's exit code is the " +
      'one Kubernetes would show (an oracle in test/support/scenarios.ts computes both from the rules alone); a classic sidecar exits ' +
      `within ${SIDECAR_EXIT_BOUND_MS} ms of the job's end; the job never starts before the proxy is ready unless told to (it checks, ` +
      'first thing); a native sidecar is never told to quit; no output is lost.',
    '',
    '## The matrix',
    '',
    ...legend(),
    '',
    ...matrixTable(main),
    '',
    '## Documented limits',
    '',
    "What no wrapper can fix: the pod is expected to stay Running; the wrapper still exits, with the job's code.",
    '',
    ...limits.map((row) => {
      const job = row.result.job.runs.at(-1);
      const ran = job?.exitedAt === undefined ? 'did not exit' : `exited after ${Math.round(job.exitedAt - job.startedAt)} ms`;
      return `- ${row.scenario.limit}: measured ${measure(row.result).phase}; the job container ${ran}, code ${measure(row.result).code}.`;
    }),
    '',
    '## Bad inputs',
    '',
    '| input | exit code | message | quits | pod |',
    '|---|---|---|---|---|',
    ...inputRows.map(
      (row) =>
        `| ${row.name} | ${row.code ?? '—'}${row.code === row.expected ? '' : ` (expected ${row.expected})`} | ` +
        `\`${row.message.replace(/\|/g, '\\|').slice(0, 140)}\` | ${row.quits} | ${row.phase}${row.ok ? '' : ' **not as expected**'} |`,
    ),
    '',
    ...hostileSection(hostileRows),
    '## What the wrapper cannot handle',
    '',
    '- **The wrapper itself killed while the command runs** (the out-of-memory killer, say): the launcher says so, waits for ' +
      "the command and exits with its code, but nothing tells the sidecar to quit. Size the container's memory from " +
      'BENCHMARKS.md.',
    '- **KILL.** A wrapper killed by KILL (the grace period ran out) cannot tell the sidecar to quit; the `ignores-term` rows ' +
      'complete because kubelet stops the sidecar with the pod. Give jobs a grace period longer than they need to stop.',
    "- **A proxy that never accepts the quit**, or a wrong `--quit-url`: reported, and the wrapper exits with the job's code; " +
      'the pod stays Running. Set `activeDeadlineSeconds` on Jobs as a last resort.',
    '',
  ];
  mkdirSync(values.out, { recursive: true });
  writeFileSync(join(values.out, 'RELIABILITY.md'), doc.join('\n'));
  writeFileSync(
    join(values.out, 'reliability.json'),
    `${JSON.stringify(
      {
        seed,
        matrix: matrixRows.map((row) => ({
          id: scenarioId(row.scenario),
          expected: { phase: expectedPhase(row.scenario), code: expectedCode(row.scenario) },
          measured: measure(row.result),
          violations: row.violations,
        })),
        badInputs: inputRows,
        hostile: hostileRows,
        soak: {
          ...totals,
          seconds: Math.round(soakRun.ms / 1000),
          runs: soakRun.rows.map((row) => ({
            id: scenarioId(row.scenario),
            readyAfterMs: row.scenario.readyAfterMs,
            measured: measure(row.result),
            violations: row.violations,
          })),
        },
      },
      null,
      1,
    )}\n`,
  );
  process.stderr.write(`wrote ${join(values.out, 'RELIABILITY.md')}: ${failing} matrix failures, soak ${JSON.stringify(totals)}\n`);
}

await main();
