// docs/BENCHMARKS.md, generated: the machine, the method, one table of results with the targets, the chart.

import type { Figures } from './figures.ts';
import type { Machine } from './machine.ts';
import type { Verdict, RowKey } from './targets.ts';
import type { Summary } from './stats.ts';
import { cell, mib, ms, throughput, times } from './format.ts';
import {
  PILOT_AGENT_WAIT,
  READY_DELAY_SPAN_MS,
  MEMORY_SAMPLES,
  MEMORY_SAMPLE_INTERVAL_MS,
  LIMIT,
  STARTUP_WARMUP_ROUNDS,
  GIB,
  MIB,
} from './settings.ts';
import type { Runs } from './settings.ts';

export interface Context {
  readonly machine: Machine;
  readonly figures: Figures;
  readonly verdicts: readonly Verdict[];
  readonly runs: Runs;
  readonly quick: boolean;
  readonly stdoutBytes: number;
  readonly gzipLevel: number;
  readonly sha256: string;
  readonly bundleFiles: number;
  readonly durationSeconds: number;
  readonly command: string;
  /** dist/ was rebuilt while the run measured its copy. */
  readonly distChanged: boolean;
}

interface Row {
  readonly part: string;
  readonly what: string;
  readonly n: string;
  readonly median: string;
  readonly p90: string;
  readonly worst: string;
  readonly key?: RowKey;
}

/** A bytes count as the report says it: GiB or MiB. */
const bytes = (n: number): string => (n >= GIB ? `${n / GIB} GiB` : `${n / MIB} MiB`);

/** A row from a latency-like summary (bad side up: p90 and max). */
function latencyRow(part: string, what: string, s: Summary, format: (v: number) => string, key?: RowKey): Row {
  return {
    part,
    what,
    n: String(s.n),
    median: format(s.median),
    p90: format(s.p90),
    worst: format(s.max),
    ...(key === undefined ? {} : { key }),
  };
}

/** A row from a throughput summary (bad side down: p10 and min). */
function throughputRow(part: string, what: string, s: Summary): Row {
  return { part, what, n: String(s.n), median: throughput(s.median), p90: throughput(s.p10), worst: throughput(s.min) };
}

/** A row with one value and no spread. */
function valueRow(part: string, what: string, value: string, key?: RowKey): Row {
  return { part, what, n: '', median: value, p90: '', worst: '', ...(key === undefined ? {} : { key }) };
}

/** Every row of the results table, part by part. */
function rows(ctx: Context): Row[] {
  const { startup, detection, quit, stdout, memory, limit, size } = ctx.figures;
  const s = 'start-up: spawn → reaped';
  const d = 'proxy ready → command start';
  const q = 'command exit → wrapper exit';
  const o = `stdout: ${bytes(ctx.stdoutBytes)} into a pipe`;
  const c = 'start-up CPU: user + sys of the whole process tree';
  const m = 'wrapper memory while the command runs (launcher + Node)';
  const l = 'smallest memory limit at normal speed (classic, -- true)';
  const z = 'size';
  return [
    latencyRow(s, 'istio-job-run --sidecar none -- true', startup.wrapper, ms),
    latencyRow(s, 'node -e 0 (the embedded Node)', startup.node, ms),
    latencyRow(s, 'tini -- true', startup.tini, ms),
    latencyRow(s, 'true', startup.true, ms),
    {
      part: s,
      what: 'istio-job-run / node -e 0: ratio of medians (per-round ratios: p90, worst)',
      n: String(startup.pairedRatio.n),
      median: times(startup.ratio),
      p90: times(startup.pairedRatio.p90),
      worst: times(startup.pairedRatio.max),
      key: 'startup-ratio',
    },
    latencyRow(c, 'istio-job-run --sidecar none -- true', startup.cpu.wrapper, ms),
    latencyRow(c, 'node -e 0 (the embedded Node)', startup.cpu.node, ms),
    latencyRow(c, 'tini -- true', startup.cpu.tini, ms),
    {
      part: c,
      what: 'istio-job-run / node -e 0: ratio of medians (per-round ratios: p90, worst)',
      n: String(startup.pairedCpuRatio.n),
      median: times(startup.cpuRatio),
      p90: times(startup.pairedCpuRatio.p90),
      worst: times(startup.pairedCpuRatio.max),
      key: 'startup-cpu-ratio',
    },
    latencyRow(d, 'istio-job-run (its default poll interval)', detection.wrapper, ms, 'detection-wrapper'),
    latencyRow(d, `pilot-agent wait schedule (${PILOT_AGENT_WAIT.periodMs} ms period), then the command`, detection.pilotAgent, ms),
    latencyRow(q, 'quit answered 200 at once', quit.answered, ms, 'quit-answered'),
    latencyRow(q, 'quit answered 503, 503, then 200', quit.after503x2, ms),
    throughputRow(o, 'head -c alone', stdout.direct),
    throughputRow(o, 'head -c through istio-job-run --sidecar none', stdout.wrapper),
    valueRow(o, 'through / alone: ratio of medians', times(stdout.ratio), 'stdout-ratio'),
    latencyRow(m, '--sidecar none: peak RSS (VmHWM), per run', memory.none.vmHwmMiB, mib, 'memory-none'),
    latencyRow(m, '--sidecar none: RssAnon, every sample', memory.none.rssAnonMiB, mib),
    latencyRow(m, 'classic, proxy ready: peak RSS (VmHWM), per run', memory.classic.vmHwmMiB, mib, 'memory-classic'),
    latencyRow(m, 'classic, proxy ready: RssAnon, every sample', memory.classic.rssAnonMiB, mib, 'memory-classic-anon'),
    ...limit.steps.map((step) =>
      valueRow(
        l,
        `${step.limitMiB === undefined ? 'no limit' : `${step.limitMiB} MiB`}: ${step.wallMs.map((v) => (Number.isNaN(v) ? 'killed' : ms(v))).join(', ')}; exit ${step.codes.join(', ')}`,
        step.normal ? 'normal' : 'not normal',
      ),
    ),
    valueRow(l, `smallest normal (${limit.cgroup})`, limit.smallestMiB === undefined ? 'none' : `${limit.smallestMiB} MiB`, 'memory-limit'),
    ...limit.cold.map((probe) =>
      valueRow(
        `${l}, cold: page cache dropped first`,
        `${probe.label}, ${probe.limitMiB === undefined ? 'no limit' : `${probe.limitMiB} MiB`}; exit ${probe.code}`,
        Number.isNaN(probe.wallMs) ? 'killed' : ms(probe.wallMs),
      ),
    ),
    valueRow(z, 'dist/istio-job-run', mib(size.executableMiB)),
    valueRow(z, `dist/istio-job-run, gzip -${ctx.gzipLevel}`, mib(size.executableGzipMiB), 'size-executable'),
    valueRow(z, `dist/bundle/ (${ctx.bundleFiles} files)`, mib(size.bundleMiB)),
    valueRow(z, `dist/bundle/ as a tarball, gzip -${ctx.gzipLevel}`, mib(size.bundleGzipMiB)),
  ];
}

/** The results table; a part's name is shown on its first row only. */
function table(ctx: Context): string {
  const lines = ['| part | what | n | median | p90 | worst | target | verdict |', '|---|---|--:|--:|--:|--:|---|---|'];
  let previous = '';
  for (const r of rows(ctx)) {
    const mine = ctx.verdicts.filter((v) => r.key !== undefined && v.row === r.key);
    const target = mine.map((v) => v.target).join('; ');
    const verdict = mine.map((v) => (v.judged && !v.met ? `**${v.text}**` : v.text)).join('; ');
    const part = r.part === previous ? '' : r.part;
    previous = r.part;
    lines.push(`| ${[part, r.what, r.n, r.median, r.p90, r.worst, target, verdict].map(cell).join(' | ')} |`);
  }
  return lines.join('\n');
}

/** The machine and the build, as a two-column table. */
function machineTable(ctx: Context): string {
  const { machine } = ctx;
  const build =
    `dist/istio-job-run built ${machine.build.builtAt}, sha256 ${ctx.sha256.slice(0, 16)}…, sources at commit ${machine.build.commit}` +
    (machine.build.uncommittedSources ? ' with uncommitted changes' : '') +
    `; measured as a copy taken when the run started${ctx.distChanged ? ' (dist/ was rebuilt during the run)' : ''}`;
  const entries: [string, string][] = [
    ['CPUs (nproc)', String(machine.cpus)],
    ['CPU', machine.cpuModel],
    ['memory', `${machine.memoryGiB} GiB`],
    ['kernel', machine.kernel],
    ['Node', `${machine.node} runs the bench; the executable embeds ${machine.embeddedNode}`],
    ['date', machine.date],
    [
      'load average (1, 5, 15 min)',
      `${machine.loadAverageAtStart.join(', ')} at the start; ${machine.loadAverageAtEnd?.join(', ') ?? '?'} at the end`,
    ],
    ['build measured', build],
    [
      'runs',
      `start-up ${ctx.runs.startup} rounds, latencies ${ctx.runs.latency} rounds, stdout ${ctx.runs.stdout}, memory ${ctx.runs.memory}; the bench took ${Math.round(ctx.durationSeconds)} s`,
    ],
  ];
  return ['| | |', '|---|---|', ...entries.map(([k, v]) => `| ${cell(k)} | ${cell(v)} |`)].join('\n');
}

/** How it was measured, in a few sentences. */
function method(ctx: Context): string {
  return [
    'One process (`scripts/bench.ts`) runs every part on this machine, against whatever `dist/` holds. Variants of a part ' +
      'are interleaved: each round runs every variant once, in a random order, so all of them see the same load. The table ' +
      'gives medians, p90 and the worst run, and compares variants by ratios of medians from this one run; "p90" and "worst" ' +
      'are on the bad side (the slower latency, the lower throughput, the larger memory).',
    '',
    `- **Start-up**: spawn to reaped, timed around a blocking spawn in the bench, after ${STARTUP_WARMUP_ROUNDS} warm-up rounds; ` +
      "the bench's own spawn cost is in every row (the `true` row shows it).",
    `- **Readiness**: a stand-in of istio-proxy (\`test/support/sidecar.ts\`) answers 503 until the bench turns it ready, at a ` +
      `uniformly random moment 0-${READY_DELAY_SPAN_MS} ms after the first readiness request; the time runs until the command's first ` +
      `stdout byte reaches the bench. The pilot-agent row simulates \`pilot-agent wait\` in the bench (sleep ${PILOT_AGENT_WAIT.periodMs} ms, GET with ` +
      `a ${PILOT_AGENT_WAIT.requestTimeoutMs} ms timeout, ready on 200, repeat) against the same stand-in, then starts the same command; in a pod, ` +
      "kubelet's container start would come on top.",
    "- **Quit**: from the command's last stdout byte to the wrapper's exit, the stand-in acknowledging the quit at once (Istio 1.26+) " +
      "or after answering 503 twice (the wrapper's retry backoff comes in between).",
    `- **stdout**: \`head -c ${ctx.stdoutBytes} /dev/zero\` into a pipe the bench drains, alone and as the wrapper's command; ` +
      'throughput runs from the first byte to the last, so start-up is not in it.',
    `- **Memory**: \`/proc/PID/status\` of the wrapper, ${MEMORY_SAMPLES} samples ${MEMORY_SAMPLE_INTERVAL_MS} ms apart while the command waits ` +
      'for a line on stdin; `sync` ran first, so dirty page-cache pages of a freshly written executable do not inflate RSS. VmHWM is the ' +
      "peak of the wrapper's whole life; the target is judged on the largest. The wrapper is the launcher and Node (its child, in a " +
      'process group of its own): each figure is the sum of the two; the command is not counted.',
    "- **Start-up CPU**: user + sys from `wait4` of the bench's timer (`scripts/bench/rusage.c`): the whole process tree, " +
      'the launcher, Node behind it and the command (each waited for by its parent), against `node -e 0` alone.',
    `- **Memory limit**: the wrapper in classic mode (a stand-in proxy ready at once, \`-- true\`) in a memory cgroup of its own, ` +
      `limits from ${LIMIT.limitsMiB[0]} MiB down until one is not normal, ${LIMIT.runsPerStep} runs each, the executable's pages already in the page ` +
      `cache and charged to the bench (a node that ran the image before; the runtime suite's podman figures are of that case). Normal: every run exits 0 and the median is within ` +
      `${LIMIT.normalSpeedFactor}x of the median without a limit. Swap is off in the cgroup, as in Kubernetes. ` +
      `The cold rows drop the files from the page cache first (posix_fadvise), so the cgroup is charged for every page of the executable ` +
      `read: there \`node -e 0\` alone is slow at ${LIMIT.coldProbeMiB} MiB.`,
    `- **Size**: bytes on disk, and \`gzip -${ctx.gzipLevel}\` of the executable and of a tarball of \`dist/bundle/\` (as the release ships it).`,
  ].join('\n');
}

/** The one-line summary above the table. */
function summaryLine(ctx: Context): string {
  const judged = ctx.verdicts.filter((v) => v.judged);
  const missed = judged.filter((v) => !v.met);
  const list = missed.map((v) => `${v.name} (${v.target}: ${v.text})`).join(', ');
  return `${judged.length - missed.length} of ${judged.length} target checks met${missed.length > 0 ? `; missed: ${list}` : ''}.`;
}

/** What the table cannot say in a cell. */
function notes(ctx: Context): string {
  const { startup } = ctx.figures;
  return (
    `Net of the bench's own spawn cost (the \`true\` median, subtracted on both sides) the start-up ratio is ${times(startup.netRatio)}. ` +
    "The stdout rows count from the first byte to the last: the wrapper's start-up is in the start-up rows, not here."
  );
}

/** The whole document. */
export function renderMarkdown(ctx: Context): string {
  const smoke = ctx.quick
    ? [
        '',
        `> **Smoke run (\`--quick\`)**: too few runs, ${bytes(ctx.stdoutBytes)} of stdout and \`gzip -${ctx.gzipLevel}\`: it checks the bench works, it is no verdict.`,
      ]
    : [];
  return [
    '<!-- Generated by scripts/bench.ts: do not edit by hand. -->',
    '# Benchmarks',
    '',
    `Generated by \`${ctx.command}\` on ${ctx.machine.date.slice(0, 10)}; do not edit by hand. Regenerate with ` +
      '`npm run build && npm run bench`. Every sample is in [benchmarks.json](benchmarks.json).',
    ...smoke,
    '',
    '## Machine',
    '',
    machineTable(ctx),
    '',
    '## Method',
    '',
    method(ctx),
    '',
    '## Results',
    '',
    summaryLine(ctx),
    '',
    table(ctx),
    '',
    notes(ctx),
    '',
    '![Latency distributions: start-up, readiness detection, quit](benchmarks.svg)',
    '',
    '## Where the time and memory go',
    '',
    "Measured with the pinned Node's own profilers on a profiling build of the same bundle (`node scripts/bench/profile.ts`), " +
      'lever by lever, before and after: [PERFORMANCE.md](PERFORMANCE.md) (written by hand; this file is generated).',
    '',
  ].join('\n');
}
