// npm run bench: what istio-job-run costs a job, measured side by side in one run against what it replaces
// and Node's own floor, reported as medians, p90, worst cases and ratios in docs/BENCHMARKS.md.
// Usage: node scripts/bench.ts [--quick] [--out DIR]
//   --quick    a smoke (a minute or two): few runs, 64 MiB of stdout, a fast gzip; no verdict
//   --out DIR  where BENCHMARKS.md goes (default docs/)

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { markdownTable } from 'markdown-table';
import { max, median, quantile } from 'simple-statistics';
import * as part from './bench/parts.ts';
import { check as checkCost, checkFiles } from './bench/check.ts';
import { FORMS, forms as formCosts } from './bench/forms.ts';
import { type Build, copyDist, discard, killEverything, MIB } from './bench/run.ts';
import { root } from './root.ts';

const { values: flags } = parseArgs({ options: { quick: { type: 'boolean', default: false }, out: { type: 'string' } } });
const quick = flags.quick === true;
const RUNS = quick
  ? {
      startup: 5,
      jobCpu: 2,
      latency: 3,
      stdout: 2,
      memory: 2,
      limitStep: 2,
      stdoutBytes: 64 * MIB,
      gzip: 1,
      forms: 2,
      check: 1,
      checkJobs: 1_000,
    }
  : {
      startup: 20,
      jobCpu: 10,
      latency: 30,
      stdout: 8,
      memory: 6,
      limitStep: 5,
      stdoutBytes: 2048 * MIB,
      gzip: 9,
      forms: 7,
      check: 9,
      checkJobs: 10_000,
    };
/** The proxy ready this long after the job starts, for the CPU of a whole job: a quick proxy and a slow one. */
const JOB_READY_MS = [300, 3_000] as const;

const TARGETS = {
  startupRatio: 1.25,
  startupCpuRatio: 1.3,
  jobCpuRatio: { 300: 2.0, 3000: 3.0 } as Record<number, number>,
  readyMedianMs: 60,
  readyWorstMs: 150,
  quitMedianMs: 30,
  stdoutRatio: 0.95,
  peakRssMiB: 60,
  rssAnonClassicMiB: 16,
  memoryLimitMiB: 24,
  gzipMiB: 45,
  /** --check against the YAML parsed alone: CPU and peak memory. */
  checkCpuRatio: 1.9,
  checkRssRatio: 1.7,
  /** Twice the length of every script costs at most twice as much. */
  checkLengthRatio: 2.0,
} as const;

const began = performance.now();
const say = (text: string): void => void process.stderr.write(`bench [${((performance.now() - began) / 1000).toFixed(0)} s]: ${text}\n`);

const ms = (n: number): string => (Number.isNaN(n) ? '-' : n >= 100 ? `${n.toFixed(0)} ms` : `${n.toFixed(1)} ms`);
const mib = (n: number): string => `${n.toFixed(1)} MiB`;
const x = (n: number): string => `${n.toFixed(2)}x`;
const bytes = (n: number): string => (n >= MIB ? mib(n / MIB) : `${(n / 1024).toFixed(0)} KiB`);
const gibs = (n: number): string => `${(n / 1024).toFixed(2)} GiB/s`;

/** A row of the results table: the median, p90 and worst on the bad side (higher, or lower for throughput). */
function row(what: string, samples: readonly number[], format: (n: number) => string, lowIsBad = false): string[] {
  if (samples.length === 0) return [what, '0', '-', '-', '-', '', ''];
  const bad = lowIsBad ? 0.1 : 0.9;
  const worst = lowIsBad ? Math.min(...samples) : max([...samples]);
  return [what, String(samples.length), format(median([...samples])), format(quantile([...samples], bad)), format(worst), '', ''];
}

interface Verdict {
  /** The target, then prefixed with its part (the section it is judged in). */
  name: string;
  readonly met: boolean;
}
const verdicts: Verdict[] = [];
/** Judges one figure: "met" or "missed" in the row, and the count above the table. */
function judge(cells: string[], target: string, measured: number, limit: number, format: (n: number) => string, atLeast = false): string[] {
  const met = atLeast ? measured >= limit : measured <= limit;
  const judged = !quick;
  if (judged) verdicts.push({ name: target, met });
  const text = !judged ? 'not judged (--quick)' : met ? 'met' : `missed by ${format(Math.abs(measured - limit))}`;
  const [what, n, med, p90, worst, oldTarget, oldText] = cells;
  const join2 = (a: string | undefined, b: string): string => (a ? `${a}; ${b}` : b);
  return [
    what ?? '',
    n ?? '',
    med ?? '',
    p90 ?? '',
    worst ?? '',
    join2(oldTarget, target),
    join2(oldText, `${text} (${format(measured)})`),
  ];
}

async function measure(build: Build) {
  say(`start-up: ${RUNS.startup} rounds of 4 variants`);
  const startup = await part.startup(build, RUNS.startup);
  const jobCpu: Record<number, Record<string, number[]>> = {};
  for (const readyMs of JOB_READY_MS) {
    say(`CPU of a whole job, proxy ready after ${readyMs} ms: ${RUNS.jobCpu} rounds of 3 variants`);
    jobCpu[readyMs] = await part.jobCpu(build, readyMs, RUNS.jobCpu);
  }
  say(`readiness and quit: ${RUNS.latency} rounds of 4 waiters`);
  const latency = await part.latency(build, RUNS.latency, (done) => done % 10 === 0 && say(`  ${done}/${RUNS.latency}`));
  say(`stdout: ${RUNS.stdout} rounds of ${RUNS.stdoutBytes / MIB} MiB`);
  const stdout = await part.stdout(build, RUNS.stdout, RUNS.stdoutBytes);
  say(`memory: ${RUNS.memory} rounds of 2 modes`);
  const memory = await part.memory(build, RUNS.memory);
  say(`memory limit: ${part.LIMITS_MIB.join(', ')} MiB until one is slow`);
  const limit = await part.memoryLimit(build, RUNS.limitStep, say);
  say(`size: gzip -${RUNS.gzip}`);
  const size = await part.size(build, RUNS.gzip);
  say(`cost per pod: ${RUNS.forms} rounds of ${Object.keys(FORMS).length} forms in podman`);
  const forms = await formCosts(build, RUNS.forms);
  say(`--check: ${RUNS.check} rounds of ${Object.keys(checkFiles(RUNS.checkJobs)).length * 2} variants`);
  const check = await checkCost(build, RUNS.check, RUNS.checkJobs);
  return { startup, jobCpu, latency, stdout, memory, limit, size, forms, check };
}

function report(build: Build, m: Awaited<ReturnType<typeof measure>>, loadAtStart: number[]): string {
  const { startup, jobCpu, latency, stdout, memory, limit, size, forms, check } = m;
  const s = (samples: Record<string, number[]>, key: string): number[] => samples[key] ?? [];
  const ratio = (a: number[], b: number[]): number => median(a) / median(b);
  const perRound = (a: number[], b: number[]): number[] => a.map((value, i) => value / (b[i] ?? Number.NaN));
  const rows: string[][] = [['part', 'what', 'n', 'median', 'p90', 'worst', 'target', 'verdict']];
  let named = 0;
  const section = (title: string, ...parts: string[][]): void => {
    for (const verdict of verdicts.slice(named)) verdict.name = `${title}: ${verdict.name}`;
    named = verdicts.length;
    parts.forEach((cells, i) => rows.push([i === 0 ? title : '', ...cells]));
  };
  const floors = (samples: Record<string, number[]>, format: (n: number) => string): string[][] => [
    row('istio-job-run --sidecar none -- true', s(samples, 'wrapper'), format),
    row('node -e 0 (the embedded Node)', s(samples, 'node'), format),
    row('tini -- true', s(samples, 'tini'), format),
    row('true', s(samples, 'true'), format),
  ];
  const startupRatio = (samples: Record<string, number[]>, target: number, what: string): string[] => {
    const paired = perRound(s(samples, 'wrapper'), s(samples, 'node'));
    const cells = [
      'istio-job-run / node -e 0: ratio of medians (per-round ratios: p90, worst)',
      String(paired.length),
      '',
      x(quantile(paired, 0.9)),
      x(max(paired)),
      '',
      '',
    ];
    cells[2] = x(ratio(s(samples, 'wrapper'), s(samples, 'node')));
    return judge(cells, `<= ${target}x ${what}`, ratio(s(samples, 'wrapper'), s(samples, 'node')), target, x);
  };
  section('start-up: spawn → reaped (wall)', ...floors(startup.wall, ms), startupRatio(startup.wall, TARGETS.startupRatio, 'node -e 0'));
  section(
    'start-up: CPU, user + sys of the whole tree',
    ...floors(startup.cpu, ms),
    startupRatio(startup.cpu, TARGETS.startupCpuRatio, 'node -e 0'),
  );
  for (const readyMs of JOB_READY_MS) {
    const cpu = jobCpu[readyMs] ?? {};
    const wrapperRatio = ratio(s(cpu, 'wrapper'), s(cpu, 'node'));
    const cells = row('istio-job-run, classic, -- true', s(cpu, 'wrapper'), ms);
    section(
      `CPU of a whole classic job, proxy ready after ${readyMs} ms`,
      cells,
      row('shell recipe: until curl …/healthz/ready; do sleep 1; done; true; curl -X POST …/quitquitquit', s(cpu, 'shell'), ms),
      row('node -e 0', s(cpu, 'node'), ms),
      judge(
        ['istio-job-run / node -e 0: ratio of medians', '', x(wrapperRatio), '', '', '', ''],
        `<= ${TARGETS.jobCpuRatio[readyMs]}x node -e 0`,
        wrapperRatio,
        TARGETS.jobCpuRatio[readyMs] ?? 0,
        x,
      ),
      ['shell recipe / node -e 0: ratio of medians', '', x(ratio(s(cpu, 'shell'), s(cpu, 'node'))), '', '', '', ''],
    );
  }
  const detection = [...s(latency.detection, 'quit-200'), ...s(latency.detection, 'quit-503x2')];
  const detected = judge(
    row('istio-job-run (its default poll interval)', detection, ms),
    `median <= ${TARGETS.readyMedianMs} ms`,
    median(detection),
    TARGETS.readyMedianMs,
    ms,
  );
  section(
    'proxy ready → command start',
    judge(detected, `worst <= ${TARGETS.readyWorstMs} ms`, max(detection), TARGETS.readyWorstMs, ms),
    row(
      `pilot-agent wait schedule (${part.PILOT_AGENT_WAIT.periodMs} ms period), then the command`,
      s(latency.detection, 'pilot-agent'),
      ms,
    ),
    row('shell recipe (curl every second)', s(latency.detection, 'shell'), ms),
  );
  section(
    'command exit → wrapper exit',
    judge(
      row('quit answered 200 at once', s(latency.quit, 'quit-200'), ms),
      `median <= ${TARGETS.quitMedianMs} ms`,
      median(s(latency.quit, 'quit-200')),
      TARGETS.quitMedianMs,
      ms,
    ),
    row('quit answered 503, 503, then 200', s(latency.quit, 'quit-503x2'), ms),
    row('shell recipe (one curl -X POST)', s(latency.quit, 'shell'), ms),
  );
  const stdoutRatio = ratio(s(stdout, 'wrapper'), s(stdout, 'direct'));
  section(
    `stdout: ${RUNS.stdoutBytes / MIB} MiB into a pipe`,
    row('head -c alone', s(stdout, 'direct'), gibs, true),
    row('head -c through istio-job-run --sidecar none', s(stdout, 'wrapper'), gibs, true),
    judge(
      ['through / alone: ratio of medians', '', x(stdoutRatio), '', '', '', ''],
      `>= ${TARGETS.stdoutRatio}x`,
      stdoutRatio,
      TARGETS.stdoutRatio,
      x,
      true,
    ),
  );
  /** The peak of one mode, judged against the one target both modes have. */
  const peak = (mode: string, label: string): string[] =>
    judge(
      row(`${label}: peak RSS (VmHWM), per run`, s(memory, `${mode}-peak`), mib),
      `peak <= ${TARGETS.peakRssMiB} MiB`,
      max(s(memory, `${mode}-peak`)),
      TARGETS.peakRssMiB,
      mib,
    );
  section(
    'memory while the command runs (launcher + Node)',
    peak('none', '--sidecar none'),
    row('--sidecar none: RssAnon, every sample', s(memory, 'none-anon'), mib),
    peak('classic', 'classic, proxy ready'),
    judge(
      row('classic, proxy ready: RssAnon, every sample', s(memory, 'classic-anon'), mib),
      `median <= ${TARGETS.rssAnonClassicMiB} MiB`,
      median(s(memory, 'classic-anon')),
      TARGETS.rssAnonClassicMiB,
      mib,
    ),
  );
  const steps = limit.steps.map((step) => [
    `${step.limitMiB === undefined ? 'no limit' : `${step.limitMiB} MiB`}: ${step.wallMs.map(ms).join(', ')}; exit ${step.codes.join(', ')}`,
    String(step.wallMs.length),
    step.normal ? 'normal' : 'slow or failed',
    '',
    '',
    '',
    '',
  ]);
  const smallest = judge(
    ['smallest normal', '', limit.smallestMiB === undefined ? 'none' : `${limit.smallestMiB} MiB`, '', '', '', ''],
    `<= ${TARGETS.memoryLimitMiB} MiB`,
    limit.smallestMiB ?? Number.POSITIVE_INFINITY,
    TARGETS.memoryLimitMiB,
    mib,
  );
  section(
    'smallest memory limit at normal speed (classic, -- true)',
    ...(limit.error === undefined ? [...steps, smallest] : [[`not measured: ${limit.error}`, '', '', '', '', '', '']]),
  );
  section('the same, cold: the page cache dropped first', ...limit.cold.map(([what, wall]) => [what, '1', ms(wall), '', '', '', '']));
  const gz = size.executableGzip ?? 0;
  const sized = ['dist/istio-job-run, gzip', '', mib(gz / MIB), '', '', '', ''];
  section(
    'size',
    ['dist/istio-job-run', '', mib((size.executable ?? 0) / MIB), '', '', '', ''],
    RUNS.gzip === 9 ? judge(sized, `gzip -9 <= ${TARGETS.gzipMiB} MiB`, gz / MIB, TARGETS.gzipMiB, mib) : sized,
    [`dist/bundle/ (${size.bundleFiles} files)`, '', mib((size.bundle ?? 0) / MIB), '', '', '', ''],
    [`dist/bundle/ as a tarball, gzip -${RUNS.gzip}`, '', mib((size.bundleGzip ?? 0) / MIB), '', '', '', ''],
  );
  const perForm = (pick: (costs: Exclude<typeof forms, { error: string }>) => Record<string, number[]>, format: (n: number) => string) =>
    'error' in forms
      ? [[`not measured: ${forms.error}`, '', '', '', '', '', '']]
      : Object.entries(FORMS).map(([form, what]) => row(what, pick(forms)[form] ?? [], format));
  section("per pod: its first container's start → the job's first instruction", ...perForm((costs) => costs.ms, ms));
  section("per pod: bytes written to the node's container storage", ...perForm((costs) => costs.bytes, bytes));
  const files = checkFiles(RUNS.checkJobs);
  const kib = (n: number): string => mib(n / 1024);
  const againstYaml = (id: string, samples: Record<string, number[]>, format: (n: number) => string, target: number, what: string) => {
    const measured = ratio(s(samples, `check:${id}`), s(samples, `yaml:${id}`));
    // Each round runs both in a random order among the other variants: its own ratio shows the spread.
    const paired = perRound(s(samples, `check:${id}`), s(samples, `yaml:${id}`));
    const cells = [
      '--check / YAML alone: ratio of medians (per-round ratios: p90, worst)',
      String(paired.length),
      x(measured),
      x(quantile(paired, 0.9)),
      x(max(paired)),
      '',
      '',
    ];
    return [
      row('--check FILE', s(samples, `check:${id}`), format),
      row('the YAML alone', s(samples, `yaml:${id}`), format),
      id === 'branch60' || id === 'branch120' ? cells : judge(cells, `<= ${target}x the YAML alone (${what})`, measured, target, x),
    ];
  };
  for (const [id, file] of Object.entries(files)) {
    section(`--check: ${file.what}, CPU`, ...againstYaml(id, check.cpu, ms, TARGETS.checkCpuRatio, 'CPU'));
    section(`--check: ${file.what}, peak memory`, ...againstYaml(id, check.rss, kib, TARGETS.checkRssRatio, 'memory'));
  }
  const longer = ratio(s(check.cpu, 'check:branch120'), s(check.cpu, 'check:branch60'));
  section(
    '--check: scripts twice as long',
    judge(
      ['120 if-statements a script / 60: ratio of median CPU', '', x(longer), '', '', '', ''],
      `<= ${TARGETS.checkLengthRatio}x`,
      longer,
      TARGETS.checkLengthRatio,
      x,
    ),
  );

  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  const node = execFileSync(build.wrapper, ['--version'], { encoding: 'utf8' }).trim();
  const load = (numbers: number[]): string => numbers.map((n) => n.toFixed(1)).join(', ');
  const met = verdicts.filter((v) => v.met).length;
  const missed = verdicts.filter((v) => !v.met).map((v) => v.name);
  const align = ['l', 'l', 'r', 'r', 'r', 'r', 'l', 'l'] as const;
  return `<!-- Generated by scripts/bench.ts (npm run bench): do not edit by hand. -->
# Benchmarks

What istio-job-run costs a job, measured on one machine in one run of \`npm run build && npm run bench\`.

${markdownTable(
  [
    ['', ''],
    ['measured', `${node}, dist/ at commit ${commit}, copied when the run started`],
    ['bench run by', `Node ${process.version}`],
    ['load average (1, 5, 15 min)', `${load(loadAtStart)} at the start; ${load(loadavg())} at the end`],
    [
      'date, duration',
      `${new Date().toISOString().slice(0, 10)}, ${((performance.now() - began) / 1000).toFixed(0)} s${quick ? ' (--quick: a smoke, not judged)' : ''}`,
    ],
  ],
  { align: ['l', 'l'] },
)}

## Method

Every part runs here against a copy of \`dist/\`; variants of a part are interleaved (each round runs each variant
once, in a random order), so they see the same load. Medians, p90 and the worst run are on the bad side (slower,
larger, lower throughput); variants are compared by ratios of medians from this one run.

- **Start-up** and **CPU**: wall time and user + sys of the whole process tree (the launcher, Node, the command),
  from \`wait4\` in the bench's timer (\`scripts/bench/rusage.c\`), after 2 warm-up rounds.
- **CPU of a whole classic job**: \`--sidecar classic -- true\` against a stand-in proxy on loopback (503 until
  ready, then 200; a quit answered 200) that turns ready 300 ms or 3 s after the job starts; beside it the shell
  recipe most jobs use today (\`until curl -fsS …/healthz/ready; do sleep 1; done; true; curl -fsS -X POST
  …/quitquitquit\`, Debian's curl) and \`node -e 0\`.
- **Readiness**: the stand-in turns ready at a random moment 0-${part.READY_SPAN_MS} ms after the first readiness
  request; the time runs to the command's first stdout byte. \`pilot-agent wait\` is simulated in the bench (sleep
  ${part.PILOT_AGENT_WAIT.periodMs} ms, GET with a ${part.PILOT_AGENT_WAIT.requestTimeoutMs} ms timeout, ready on
  200), then the same command is started; in a pod, kubelet's container start comes on top.
- **Quit**: from the command's last stdout byte to the waiter's exit, the quit acknowledged at once (Istio 1.26+)
  or after two 503 answers (the wrapper's retry backoff in between).
- **stdout**: \`head -c\` of \`/dev/zero\` into a pipe the bench drains, alone and as the wrapper's command; from
  the first byte to the last, so start-up is not in it.
- **Memory**: \`/proc/PID/status\` of the launcher and Node summed, 5 samples 50 ms apart while the command waits.
- **Memory limit**: classic \`-- true\` in a memory cgroup of its own without swap, limits from
  ${part.LIMITS_MIB[0]} MiB down until one is not normal (every run exits 0, median wall within
  ${part.NORMAL_SPEED_FACTOR}x of no limit); the executable's pages already in the page cache (a node that ran the
  image before). The cold rows drop the bundle's files from the page cache first.
- **Size**: bytes on disk and through gzip, the bundle as the tarball the release ships.
- **Per pod**, in podman with runc (state private to the run, images built from the bench's copy of the bundle), each
  way the wrapper gets into a pod, after a warm-up round: copied into the job's image; an init container that
  \`--install\`s it into a volume the job then mounts (an emptyDir in Kubernetes); the istio-job-run image mounted
  as an image volume (\`--mount type=image\`, what kubelet asks the runtime for). The job is \`--sidecar none --
  cat /proc/uptime\`: the time runs from the \`podman start\` of the pod's first container to that clock (the
  host's, 10 ms resolution); the bytes are what the pod added to podman's storage, volumes included.
- **--check**: \`--check FILE\` (findings to /dev/null) beside the same file's YAML parsed alone as --check parses
  it (\`scripts/bench/yaml-alone.ts\`, run by the pinned Node, the embedded one's version); CPU and the peak RSS of
  the process tree from the timer. The files are written by \`scripts/bench/check.ts\`: ${RUNS.checkJobs} Jobs with the
  shell recipe (each script different, each a finding, so --inject's advice is computed for every one), the same
  recipe in a folded block (\`>\`, which YAML joins into one line: how a file's size, not a script's, sets the
  cost), the same Jobs under the wrapper, and ${RUNS.checkJobs / 10} Jobs whose scripts branch on a file at each of 60 or 120 lines
  (past 32 ways through a script the model claims nothing and reads the rest as written).

## Results

${quick ? 'A smoke run: nothing judged.' : `${met} of ${verdicts.length} targets met.${missed.length > 0 ? ` Missed: ${missed.join('; ')}.` : ''}`}

${markdownTable(rows, { align: [...align] })}
`;
}

let build: Build | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killEverything();
    discard(build);
    process.exit(130);
  });
}
try {
  const loadAtStart = loadavg();
  build = copyDist();
  const measured = await measure(build);
  const out = resolve(flags.out ?? join(root, 'docs'));
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'BENCHMARKS.md'), report(build, measured, loadAtStart));
  say(
    `wrote ${join(out, 'BENCHMARKS.md')}: ${quick ? 'a smoke' : `${verdicts.filter((v) => v.met).length} of ${verdicts.length} targets met`}`,
  );
  for (const verdict of verdicts.filter((v) => !v.met)) say(`missed: ${verdict.name}`);
} catch (error) {
  killEverything();
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  discard(build);
}
