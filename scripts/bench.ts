// npm run bench: what istio-job-run costs a job, measured side by side in one run and reported as medians,
// p90, worst cases and ratios (issue 5). Writes BENCHMARKS.md, benchmarks.json and benchmarks.svg.
// Usage: node scripts/bench.ts [--runs N] [--quick] [--out DIR]
//   --runs N   start-up and latency rounds (default 20 and 30); stdout and memory get N/6 (at least 2)
//   --quick    a smoke (< 30 s): few runs, 64 MiB of stdout, a fast gzip; no verdict
//   --out DIR  where the three files go (default docs/)

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { renderChart, type ChartPanel } from './bench/chart.ts';
import { figuresOf, type Figures, type Raw } from './bench/figures.ts';
import { describeMachine, loadAverage, type Machine } from './bench/machine.ts';
import { renderMarkdown } from './bench/markdown.ts';
import { measureLatencies } from './bench/latency.ts';
import { measureLimit } from './bench/limit.ts';
import { measureMemory } from './bench/memory.ts';
import { killEverything } from './bench/process.ts';
import { measureSize } from './bench/size.ts';
import { discard, snapshot, stillInDist, type Build } from './bench/snapshot.ts';
import { measureStartup } from './bench/startup.ts';
import { measureStdout } from './bench/stdout.ts';
import { verdicts as judgeAll } from './bench/targets.ts';
import {
  DIST_BUNDLE,
  DIST_WRAPPER,
  DEFAULT_OUT,
  DEFAULT_RUNS,
  GZIP_LEVEL,
  LIMIT,
  MEMORY_SAMPLE_INTERVAL_MS,
  MEMORY_SAMPLES,
  MIN_SLOW_RUNS,
  PILOT_AGENT_WAIT,
  QUICK_GZIP_LEVEL,
  QUICK_RUNS,
  QUICK_STDOUT_BYTES,
  READY_DELAY_SPAN_MS,
  SLOW_PART_DIVISOR,
  STARTUP_WARMUP_ROUNDS,
  STDOUT_BYTES,
  TARGETS,
  type Runs,
} from './bench/settings.ts';

interface Config {
  readonly runs: Runs;
  readonly quick: boolean;
  readonly out: string;
  readonly stdoutBytes: number;
  readonly gzipLevel: number;
  readonly command: string;
}

/** The command line, checked. */
function configure(argv: readonly string[]): Config {
  const { values } = parseArgs({
    args: [...argv],
    options: { runs: { type: 'string' }, quick: { type: 'boolean', default: false }, out: { type: 'string' } },
  });
  const quick = values.quick === true;
  let runs = quick ? QUICK_RUNS : DEFAULT_RUNS;
  if (values.runs !== undefined) {
    const n = Number(values.runs);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--runs: ${JSON.stringify(values.runs)} is not a positive whole number`);
    const slow = Math.max(MIN_SLOW_RUNS, Math.round(n / SLOW_PART_DIVISOR));
    runs = { startup: n, latency: n, stdout: slow, memory: slow };
  }
  return {
    runs,
    quick,
    out: resolve(values.out ?? DEFAULT_OUT),
    stdoutBytes: quick ? QUICK_STDOUT_BYTES : STDOUT_BYTES,
    gzipLevel: quick ? QUICK_GZIP_LEVEL : GZIP_LEVEL,
    command: ['npm run bench', ...(argv.length > 0 ? ['--', ...argv] : [])].join(' '),
  };
}

/** When the bench began: progress lines and the run's duration count from here. */
const began = performance.now();
/** A progress line on stderr, with the time since the bench began. */
const say = (text: string): void => void process.stderr.write(`bench [${((performance.now() - began) / 1000).toFixed(0)} s]: ${text}\n`);

/** Every part, one after the other: nothing else runs while one is timed. */
async function measure(config: Config, build: Build): Promise<Raw> {
  const { runs } = config;
  const wrapper = build.launcher;
  say(`start-up: ${runs.startup} rounds of 4 variants (after ${STARTUP_WARMUP_ROUNDS} warm-up rounds)`);
  const startup = measureStartup(build.timer, wrapper, runs.startup);
  say(`readiness and quit: ${runs.latency} rounds of 4 runs`);
  const latency = await measureLatencies(wrapper, runs.latency, (done) => {
    if (done % 10 === 0 || done === runs.latency) say(`  ${done}/${runs.latency} rounds`);
  });
  say(`stdout: ${runs.stdout} rounds of ${config.stdoutBytes} bytes, alone and through the wrapper`);
  const stdout = await measureStdout(wrapper, runs.stdout, config.stdoutBytes);
  say(`memory: ${runs.memory} rounds of 2 modes`);
  const memory = await measureMemory(wrapper, runs.memory);
  say(`memory limit: classic mode in a memory cgroup, ${LIMIT.limitsMiB.join(', ')} MiB until one is slow`);
  const limit = await measureLimit(build, say);
  say(`size: gzip -${config.gzipLevel} of the executable and the bundle`);
  const size = await measureSize(build, config.gzipLevel);
  return { startup, latency, stdout, memory, limit, size };
}

/** The chart's panels: start-up, readiness detection, quit, all on one ms axis. */
function chartPanels(raw: Raw, figures: Figures): ChartPanel[] {
  const latency = (scenario: string, field: 'detectionMs' | 'quitMs'): number[] =>
    raw.latency.filter((run) => run.scenario === scenario).map((run) => run[field] ?? Number.NaN);
  const wrapperDetection = raw.latency.filter((run) => run.scenario !== 'pilot-agent').map((run) => run.detectionMs);
  return [
    {
      title: 'Start-up: spawn → reaped',
      rows: [
        { label: 'istio-job-run --sidecar none -- true', color: '#1f6fb4', values: raw.startup.samples.wrapper },
        { label: 'node -e 0 (the embedded Node)', color: '#555555', values: raw.startup.samples.node },
        { label: 'tini -- true', color: '#8a8a8a', values: raw.startup.samples.tini },
        { label: 'true', color: '#b0b0b0', values: raw.startup.samples.true },
      ],
      targets: [{ value: TARGETS.startupRatio * figures.startup.node.median, label: `${TARGETS.startupRatio} × node -e 0 median` }],
    },
    {
      title: 'Proxy ready → command start',
      rows: [
        { label: 'istio-job-run', color: '#1f6fb4', values: wrapperDetection },
        {
          label: `pilot-agent wait schedule (${PILOT_AGENT_WAIT.periodMs} ms)`,
          color: '#e67e22',
          values: latency('pilot-agent', 'detectionMs'),
        },
      ],
      targets: [
        { value: TARGETS.readyMedianMs, label: `median ≤ ${TARGETS.readyMedianMs} ms` },
        { value: TARGETS.readyWorstMs, label: `worst ≤ ${TARGETS.readyWorstMs} ms` },
      ],
    },
    {
      title: 'Command exit → wrapper exit',
      rows: [
        { label: 'quit answered 200 at once', color: '#1f6fb4', values: latency('quit-200', 'quitMs') },
        { label: 'quit answered 503, 503, then 200', color: '#8e44ad', values: latency('quit-503x2', 'quitMs') },
      ],
      targets: [{ value: TARGETS.quitMedianMs, label: `median ≤ ${TARGETS.quitMedianMs} ms` }],
    },
  ];
}

/** The three files. */
function write(config: Config, machine: Machine, raw: Raw, durationSeconds: number, distChanged: boolean): string[] {
  const figures = figuresOf(raw);
  const verdicts = judgeAll(figures, config.gzipLevel);
  const settings = {
    runs: config.runs,
    stdoutBytes: config.stdoutBytes,
    gzipLevel: config.gzipLevel,
    startupWarmupRounds: STARTUP_WARMUP_ROUNDS,
    readyDelaySpanMs: READY_DELAY_SPAN_MS,
    pilotAgentWait: PILOT_AGENT_WAIT,
    memorySamples: MEMORY_SAMPLES,
    memorySampleIntervalMs: MEMORY_SAMPLE_INTERVAL_MS,
    limit: LIMIT,
    targets: TARGETS,
  };
  const json = {
    generatedBy: 'scripts/bench.ts',
    command: config.command,
    quick: config.quick,
    durationSeconds,
    distChanged,
    settings,
    machine,
    figures,
    verdicts,
    samples: raw,
  };
  const markdown = renderMarkdown({
    machine,
    figures,
    verdicts,
    runs: config.runs,
    quick: config.quick,
    stdoutBytes: config.stdoutBytes,
    gzipLevel: config.gzipLevel,
    sha256: raw.size.executable.sha256,
    bundleFiles: raw.size.bundle.files,
    durationSeconds,
    command: config.command,
    distChanged,
  });
  const title = `istio-job-run: latency distributions (${machine.date.slice(0, 10)}, ${machine.cpus} CPUs${config.quick ? ', smoke run' : ''})`;
  const subtitle = 'each dot is one run · box: p25–p75 · thick tick: median · thin line: min–max · dashed red: the targets of issue 5';
  mkdirSync(config.out, { recursive: true });
  const files: [string, string][] = [
    ['BENCHMARKS.md', markdown],
    ['benchmarks.json', `${JSON.stringify(json, null, 2)}\n`],
    ['benchmarks.svg', renderChart(title, subtitle, chartPanels(raw, figures))],
  ];
  for (const [name, text] of files) writeFileSync(join(config.out, name), text);
  for (const verdict of verdicts) say(`${verdict.name}: ${verdict.target}: ${verdict.text}`);
  return files.map(([name]) => join(config.out, name));
}

/** The copy of dist/ being measured, removed however the run ends. */
let build: Build | undefined;

/** Parse, copy dist/, measure, write. */
async function bench(): Promise<void> {
  const config = configure(process.argv.slice(2));
  for (const path of [DIST_WRAPPER, DIST_BUNDLE]) {
    if (!existsSync(path)) throw new Error(`${path} is missing: run npm run build first`);
  }
  const machine = describeMachine();
  build = await snapshot();
  const raw = await measure(config, build);
  const distChanged = !(await stillInDist(build));
  if (distChanged) say('dist/ was rebuilt during the run: the figures are of the copy taken when it started');
  const durationSeconds = Math.round((performance.now() - began) / 100) / 10;
  const files = write(config, { ...machine, loadAverageAtEnd: loadAverage() }, raw, durationSeconds, distChanged);
  say(`wrote ${files.join(', ')} in ${durationSeconds} s`);
}

// Interrupted: take every process group down with the bench, remove the copy, exit as killed by that signal.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killEverything();
    discard(build);
    process.exit(128 + constants.signals[signal]);
  });
}
try {
  await bench();
} catch (error) {
  killEverything();
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  discard(build);
}
