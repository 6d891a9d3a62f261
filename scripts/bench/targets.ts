// Issue 5's targets against this run's figures: met or missed, and by how much.

import type { Figures } from './figures.ts';
import { mib, ms, percent, times } from './format.ts';
import { GZIP_LEVEL, TARGETS } from './settings.ts';

export interface Verdict {
  /** Which row of the results table it belongs to. */
  readonly row: RowKey;
  /** What is judged, in words. */
  readonly name: string;
  readonly target: string;
  readonly measured: number;
  readonly limit: number;
  readonly met: boolean;
  /** False when the run cannot judge it (the smoke's fast gzip). */
  readonly judged: boolean;
  readonly text: string;
}

export type RowKey =
  | 'startup-ratio'
  | 'startup-cpu-ratio'
  | 'detection-wrapper'
  | 'quit-answered'
  | 'stdout-ratio'
  | 'memory-none'
  | 'memory-classic'
  | 'memory-classic-anon'
  | 'memory-limit'
  | 'size-executable';

type Format = (value: number) => string;

/** value <= limit (or >= for throughput): met with the margin, or missed by the shortfall and its percentage. */
function judge(
  row: RowKey,
  name: string,
  target: string,
  measured: number,
  limit: number,
  format: Format,
  atLeast = false,
  judged = true,
): Verdict {
  const met = atLeast ? measured >= limit : measured <= limit;
  const gap = Math.abs(measured - limit);
  const text = !judged
    ? 'not judged'
    : met
      ? `met (${format(gap)} ${atLeast ? 'over' : 'under'})`
      : `missed by ${format(gap)} (${percent((measured - limit) / limit)})`;
  return { row, name, target, measured, limit, met, judged, text };
}

/** Every target, in the order of the issue. */
export function verdicts(figures: Figures, gzipLevel: number): Verdict[] {
  const { startup, detection, quit, stdout, memory, limit, size } = figures;
  return [
    judge('startup-ratio', 'start-up', `<= ${TARGETS.startupRatio}x node -e 0`, startup.ratio, TARGETS.startupRatio, times),
    judge(
      'startup-cpu-ratio',
      'start-up CPU',
      `<= ${TARGETS.startupCpuRatio}x node -e 0`,
      startup.cpuRatio,
      TARGETS.startupCpuRatio,
      times,
    ),
    judge(
      'detection-wrapper',
      'readiness detection',
      `median <= ${TARGETS.readyMedianMs} ms`,
      detection.wrapper.median,
      TARGETS.readyMedianMs,
      ms,
    ),
    judge(
      'detection-wrapper',
      'readiness detection',
      `worst <= ${TARGETS.readyWorstMs} ms`,
      detection.wrapper.max,
      TARGETS.readyWorstMs,
      ms,
    ),
    judge('quit-answered', 'quit', `median <= ${TARGETS.quitMedianMs} ms`, quit.answered.median, TARGETS.quitMedianMs, ms),
    judge('stdout-ratio', 'stdout throughput ratio', `>= ${TARGETS.stdoutRatio}x`, stdout.ratio, TARGETS.stdoutRatio, times, true),
    judge(
      'memory-none',
      'peak RSS, --sidecar none',
      `peak <= ${TARGETS.peakRssMiB} MiB`,
      memory.none.vmHwmMiB.max,
      TARGETS.peakRssMiB,
      mib,
    ),
    judge('memory-classic', 'peak RSS, classic', `peak <= ${TARGETS.peakRssMiB} MiB`, memory.classic.vmHwmMiB.max, TARGETS.peakRssMiB, mib),
    judge(
      'memory-classic-anon',
      'anonymous RSS, classic',
      `median <= ${TARGETS.rssAnonClassicMiB} MiB`,
      memory.classic.rssAnonMiB.median,
      TARGETS.rssAnonClassicMiB,
      mib,
    ),
    judge(
      'memory-limit',
      'smallest memory limit at normal speed',
      `<= ${TARGETS.memoryLimitMiB} MiB`,
      limit.smallestMiB ?? Number.POSITIVE_INFINITY,
      TARGETS.memoryLimitMiB,
      mib,
      false,
      limit.smallestMiB !== undefined || limit.steps.length > 0,
    ),
    judge(
      'size-executable',
      'executable size',
      `gzip -${GZIP_LEVEL} <= ${TARGETS.gzipMiB} MiB`,
      size.executableGzipMiB,
      TARGETS.gzipMiB,
      mib,
      false,
      gzipLevel === GZIP_LEVEL,
    ),
  ];
}
