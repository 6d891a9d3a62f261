// Every number the benchmark uses, named once. The targets are issue 5's.

import { join } from 'node:path';
import { root } from '../pinned-node.ts';

export const MIB = 1024 ** 2;
export const GIB = 1024 ** 3;

/** What is measured: whatever dist/ holds (a copy taken when the run starts), against the Node the executable embeds. */
export const DIST_WRAPPER = join(root, 'dist', 'istio-job-run');
export const DIST_BUNDLE = join(root, 'dist', 'bundle');
/** Tries at a consistent copy of dist/ while something else may be rebuilding it. */
export const SNAPSHOT_TRIES = 5;
export const SNAPSHOT_RETRY_MS = 2_000;
export const PINNED_NODE = join(root, 'node_modules', '.bin', 'node');
/** The file PINNED_NODE links to (the page cache holds files, not links). */
export const PINNED_NODE_BINARY = join(root, 'node_modules', `node-linux-${process.arch}`, 'bin', 'node');
export const DEFAULT_OUT = join(root, 'docs');

/** How many times each part runs: the default run (a few minutes on 2 cores) and the --quick smoke (< 30 s). */
export interface Runs {
  readonly startup: number;
  readonly latency: number;
  readonly stdout: number;
  readonly memory: number;
}
export const DEFAULT_RUNS: Runs = { startup: 20, latency: 30, stdout: 8, memory: 6 };
export const QUICK_RUNS: Runs = { startup: 5, latency: 3, stdout: 2, memory: 2 };
/** With --runs N: start-up and latencies N times; the slow parts (stdout, memory) N / SLOW_PART_DIVISOR times, at least MIN_SLOW_RUNS. */
export const SLOW_PART_DIVISOR = 6;
export const MIN_SLOW_RUNS = 2;

/** Start-up rounds run first and thrown away: they warm the page cache. */
export const STARTUP_WARMUP_ROUNDS = 2;

/** The ready moment: uniform in [0, span) after the first readiness request, so every poll phase is sampled. */
export const READY_DELAY_SPAN_MS = 500;

/** `pilot-agent wait` (pilot/cmd/pilot-agent/app/wait.go): sleep one period, check, repeat. */
export const PILOT_AGENT_WAIT = { periodMs: 500, requestTimeoutMs: 500, timeoutMs: 60_000 } as const;

/** stdout: bytes the command writes (head -c N /dev/zero). */
export const STDOUT_BYTES = 2 * GIB;
export const QUICK_STDOUT_BYTES = 64 * MIB;

/** memory: samples of /proc/PID/status per run, this far apart, while the command waits. */
export const MEMORY_SAMPLES = 5;
export const MEMORY_SAMPLE_INTERVAL_MS = 50;

/**
 * The smallest memory limit: these limits, largest first, LIMIT.runsPerStep classic-mode runs each; "normal
 * speed" is a median wall time within normalSpeedFactor of the runs without a limit (all exit 0).
 */
export const LIMIT = {
  limitsMiB: [48, 40, 32, 28, 24, 20, 16] as const,
  runsPerStep: 5,
  normalSpeedFactor: 2,
  /** The cold case's one limit. */
  coldProbeMiB: 64,
} as const;

/** size: gzip level of the verdict; the smoke uses a fast one (not judged). */
export const GZIP_LEVEL = 9;
export const QUICK_GZIP_LEVEL = 1;

/** Hard timeouts: a hung process is killed (its whole process group) and the bench fails. */
export const TIMEOUT_MS = {
  startup: 10_000,
  lifecycle: 20_000,
  stdout: 180_000,
  memory: 20_000,
  limitRun: 20_000,
  gzip: 180_000,
  tool: 30_000,
} as const;

/** Issue 5's targets and issue 13's (CPU ratio, anonymous RSS, the memory limit), on this 2-core machine. */
export const TARGETS = {
  startupRatio: 1.25,
  readyMedianMs: 60,
  readyWorstMs: 150,
  quitMedianMs: 30,
  stdoutRatio: 0.95,
  startupCpuRatio: 1.3,
  peakRssMiB: 60,
  rssAnonClassicMiB: 16,
  memoryLimitMiB: 24,
  gzipMiB: 45,
} as const;

/** The chart's geometry, in SVG user units (px). */
export const CHART = {
  width: 960,
  labelWidth: 300,
  rightMargin: 30,
  rowHeight: 44,
  panelGap: 26,
  panelTitle: 24,
  top: 56,
  axisHeight: 40,
  dotRadius: 2.6,
} as const;
