// npm run reliability: runs the fault matrix, the bad inputs, a soak and the adversarial suite through
// simulated pods (test/support/reliability-main.ts, a program of the test suite, read through its JSON
// lines) and writes docs/RELIABILITY.md from what was measured, never by hand.
// npm run soak: the long soak alone (--soak-only --pods N), exiting 1 on any hang or wrong exit code.
// --hostile-only [--hostile-tries N]: only the adversarial suite, its section spliced into the existing
// docs/RELIABILITY.md (the rest kept); exits 1 when any try was not as expected.
// Needs root (network and PID namespaces) and a built dist/istio-job-run.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { markdownTable } from 'markdown-table';
import { root } from './root.ts';

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

/** What reliability-main.ts prints, one line per pod, input or case. */
interface Measured {
  readonly phase: string;
  readonly code?: number;
  readonly runs: number;
  readonly completionMs?: number;
  readonly sidecarAfterJobMs?: number;
  readonly quits: number;
}
interface ScenarioLine {
  readonly id: string;
  readonly sidecar: string;
  readonly job: string;
  readonly policy: string;
  readonly stop: string;
  readonly limit?: string;
  readonly expected: { readonly phase: string; readonly code: number };
  readonly measured: Measured;
  readonly violations: readonly string[];
  readonly jobMs: number | null;
}
interface BadInputLine {
  readonly name: string;
  readonly expected: number;
  readonly code?: number;
  readonly message: string;
  readonly quits: number;
  readonly phase: string;
  readonly ok: boolean;
}
interface HostileLine {
  readonly name: string;
  readonly about: string;
  readonly tries: number;
  readonly ok: number;
  readonly outcomes: readonly { readonly got: string; readonly ok: boolean; readonly count: number; readonly example: string }[];
}
interface Legend {
  readonly sidecars: readonly [string, string][];
  readonly jobs: readonly [string, string][];
  readonly policies: readonly string[];
  readonly stops: readonly [string, string][];
  readonly sidecarExitBoundMs: number;
}

/** Runs one part of the measurements and reads its lines; its progress goes straight to stderr. */
async function measure<T>(part: string, ...args: string[]): Promise<T[]> {
  const program = join(root, 'test', 'support', 'reliability-main.ts');
  const child = spawn(process.execPath, [program, '--part', part, '--parallel', values.parallel, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const [code] = await once(child, 'close');
  if (code !== 0) throw new Error(`${program} --part ${part} failed (exit ${String(code)})`);
  return Buffer.concat(chunks)
    .toString()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

function soakTotals(rows: readonly ScenarioLine[]) {
  const count = (test: (row: ScenarioLine) => boolean): number => rows.filter(test).length;
  const hang = (row: ScenarioLine): boolean => row.measured.phase === 'Running';
  const wrongCode = (row: ScenarioLine): boolean => row.measured.code !== row.expected.code;
  return {
    pods: rows.length,
    hangs: count(hang),
    wrongExitCodes: count(wrongCode),
    otherViolations: count((row) => row.violations.length > 0 && !wrongCode(row) && !hang(row)),
    succeeded: count((row) => row.measured.phase === 'Succeeded'),
    failed: count((row) => row.measured.phase === 'Failed'),
  };
}

const ms = (value: number | undefined): string => (value === undefined ? '—' : `${Math.round(value)}`);
/** A GFM table, unpadded: the first row is the header. */
const table = (rows: readonly (readonly string[])[]): string => markdownTable(rows, { alignDelimiters: false });
/** A table cell: pipes escaped, one line. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function matrixTable(rows: readonly ScenarioLine[]): string {
  return table([
    [
      'sidecar',
      'job',
      'restartPolicy / --quit',
      'stopped',
      'expected',
      'measured',
      'job runs',
      'completion ms',
      'sidecar exit after job, ms',
      'quits',
      '',
    ],
    ...rows.map(({ sidecar, job, policy, stop, expected, measured: m, violations }) => [
      sidecar,
      job,
      policy,
      stop === 'none' ? '' : stop,
      `${expected.phase} ${expected.code}`,
      `${m.phase} ${m.code ?? '—'}`,
      String(m.runs),
      ms(m.completionMs),
      ms(m.sidecarAfterJobMs),
      String(m.quits),
      violations.length === 0 ? 'ok' : `**${cell(violations.join('; '))}**`,
    ]),
  ]);
}

function legendLines(legend: Legend): string[] {
  const items = (list: readonly [string, string][]): string[] => list.map(([name, about]) => `- \`${name}\`: ${about}`);
  return [
    'Sidecar behaviours:',
    '',
    ...items(legend.sidecars),
    '',
    'Job behaviours:',
    '',
    ...items(legend.jobs),
    '',
    `Policies (restartPolicy / \`--quit\`): ${legend.policies.map((name) => `\`${name}\``).join(', ')}.`,
    '',
    'Stops:',
    '',
    ...items(legend.stops),
  ];
}

function badInputTable(rows: readonly BadInputLine[]): string {
  return table([
    ['input', 'exit code', 'message', 'quits', 'pod'],
    ...rows.map((row) => [
      cell(row.name),
      `${row.code ?? '—'}${row.code === row.expected ? '' : ` (expected ${row.expected})`}`,
      `\`${cell(row.message.slice(0, 140))}\``,
      String(row.quits),
      `${row.phase}${row.ok ? '' : ' **not as expected**'}`,
    ]),
  ]);
}

/** The hostile section, from its heading on. */
function hostileSection(rows: readonly HostileLine[]): string[] {
  const tries = rows.reduce((sum, row) => sum + row.tries, 0);
  const ok = rows.reduce((sum, row) => sum + row.ok, 0);
  const cases = table([
    ['case', 'what was sent, and what must come back', 'tries', 'as expected', 'what came back (count: outcome, e.g. one try)'],
    ...rows.map((row) => [
      cell(row.name),
      cell(row.about),
      String(row.tries),
      String(row.ok),
      cell(row.outcomes.map((o) => `${o.count}× ${o.ok ? '' : '**not as expected:** '}${o.got} (e.g. ${o.example})`).join('<br>')),
    ]),
  ]);
  return [
    '## Hostile',
    '',
    `The adversarial suite (test/support/hostile/; its short size runs in \`npm test\`): ${rows.length} cases, ${tries} tries, ` +
      `${ok} as expected, ${tries - ok} not. Every try drives the portable bundle (dist/bundle/istio-job-run) in a network namespace ` +
      'of its own, with the sidecar stand-in on the real ports 15020/15021; "as PID 1" means PID 1 of a new PID namespace; "loaded" ' +
      'means a busy loop per core while it runs. Signals sent during start-up are sent with every signal blocked at exec, so none is ' +
      "lost before the program's first instruction.",
    '',
    cases,
    '',
  ];
}

/** `doc` with its hostile section replaced by `section` (or added at the end). */
function spliceSection(doc: string, section: readonly string[]): string {
  const lines = doc.split('\n');
  const start = lines.indexOf('## Hostile');
  if (start < 0) return `${doc.replace(/\n*$/, '\n\n')}${section.join('\n')}`;
  const next = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  return [...lines.slice(0, start), ...section, ...(next < 0 ? [] : lines.slice(next))].join('\n');
}

const pods = values.pods;
const seed = values.seed ?? String(Date.now() % 1_000_000);
const hostileArgs = values['hostile-tries'] === undefined ? [] : ['--tries', values['hostile-tries']];
const report = join(values.out, 'RELIABILITY.md');

if (values['soak-only']) {
  const started = performance.now();
  const rows = await measure<ScenarioLine>('soak', '--pods', pods, '--seed', seed);
  const totals = soakTotals(rows);
  const seconds = Math.round((performance.now() - started) / 1000);
  process.stdout.write(`${JSON.stringify({ seed: Number(seed), seconds, ...totals }, null, 2)}\n`);
  for (const row of rows.filter((r) => r.violations.length > 0)) process.stdout.write(`${row.id}: ${row.violations.join('; ')}\n`);
  process.exitCode = totals.hangs + totals.wrongExitCodes + totals.otherViolations === 0 ? 0 : 1;
} else if (values['hostile-only']) {
  const rows = await measure<HostileLine>('hostile', ...hostileArgs);
  mkdirSync(values.out, { recursive: true });
  writeFileSync(report, spliceSection(existsSync(report) ? readFileSync(report, 'utf8') : '# Reliability\n', hostileSection(rows)));
  const wrong = rows.reduce((sum, row) => sum + row.tries - row.ok, 0);
  process.stderr.write(`wrote the hostile section of ${report}: ${wrong} tries not as expected\n`);
  process.exitCode = wrong === 0 ? 0 : 1;
} else {
  const started = performance.now();
  const [legend] = await measure<Legend>('legend');
  if (legend === undefined) throw new Error('reliability-main.ts printed no legend');
  const matrixRows = await measure<ScenarioLine>('matrix');
  const inputRows = await measure<BadInputLine>('bad-inputs');
  const soakRows = await measure<ScenarioLine>('soak', '--pods', pods, '--seed', seed);
  const totals = soakTotals(soakRows);
  const hostileRows = await measure<HostileLine>('hostile', ...hostileArgs);
  const hostileWrong = hostileRows.reduce((sum, row) => sum + row.tries - row.ok, 0);
  const minutes = (performance.now() - started) / 60_000;

  const main = matrixRows.filter((row) => row.limit === undefined);
  const limits = matrixRows.filter((row) => row.limit !== undefined);
  const failing = matrixRows.filter((row) => row.violations.length > 0).length;
  const doc = [
    '# Reliability',
    '',
    `Generated by \`npm run reliability\` (scripts/reliability.ts) on ${new Date().toISOString().slice(0, 10)}, ` +
      `Node ${process.version}, in ${minutes.toFixed(1)} minutes. ` +
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
    "Each scenario is a simulated pod (test/support/kubelet.ts): a network namespace of its own (the pod's shared loopback, " +
      'with the sidecar stand-in on the real ports 15020/15021), one PID namespace per container with istio-job-run as PID 1 of the ' +
      'job container, and a small kubelet that starts the containers, restarts what Kubernetes restarts (restartPolicy OnFailure; a ' +
      'native sidecar that dies while the job runs), stops the pod as kubelet does (TERM to every PID 1, KILL after the grace period, ' +
      '1.5 s here), and decides the phase. A pod still running 12 s after it started is a hang. Timings are scaled down (an old ' +
      'Istio drains 1 s here instead of 5 s; restart backoffs are 100 ms).',
    '',
    "The invariants checked for every pod: the phase is the one Kubernetes should show (never a hang); the job's exit code is the " +
      'one Kubernetes would show (an oracle in test/support/scenarios.ts computes both from the rules alone); a classic sidecar exits ' +
      `within ${legend.sidecarExitBoundMs} ms of the job's end; the job never starts before the proxy is ready unless told to (it checks, ` +
      'first thing); a native sidecar is never told to quit; no output is lost.',
    '',
    '## The matrix',
    '',
    ...legendLines(legend),
    '',
    matrixTable(main),
    '',
    '## Documented limits',
    '',
    "What no wrapper can fix: the pod is expected to stay Running; the wrapper still exits, with the job's code.",
    '',
    ...limits.map((row) => {
      const ran = row.jobMs === null ? 'did not exit' : `exited after ${Math.round(row.jobMs)} ms`;
      return `- ${row.limit}: measured ${row.measured.phase}; the job container ${ran}, code ${row.measured.code}.`;
    }),
    '',
    '## Bad inputs',
    '',
    badInputTable(inputRows),
    '',
    ...hostileSection(hostileRows),
    '## What the wrapper cannot handle',
    '',
    '- **The wrapper itself killed before it found the sidecars** (the out-of-memory killer, say): the launcher says so, ' +
      'waits for the command and exits with its code, but no sidecar is told to quit (once they are found, the launcher ' +
      "quits them itself). Size the container's memory from BENCHMARKS.md.",
    '- **KILL.** A wrapper killed by KILL (the grace period ran out) cannot tell the sidecar to quit; the `ignores-term` rows ' +
      'complete because kubelet stops the sidecar with the pod. Give jobs a grace period longer than they need to stop.',
    "- **A proxy that never accepts the quit**, or a wrong `--quit-url`: reported, and the wrapper exits with the job's code; " +
      'the pod stays Running. Set `activeDeadlineSeconds` on Jobs as a last resort.',
    '',
  ];
  mkdirSync(values.out, { recursive: true });
  writeFileSync(report, doc.join('\n'));
  process.stderr.write(`wrote ${report}: ${failing} matrix failures, soak ${JSON.stringify(totals)}\n`);
}
