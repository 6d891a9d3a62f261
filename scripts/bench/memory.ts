// memory: the wrapper's peak RSS (VmHWM) and anonymous memory (RssAnon) from /proc/PID/status while its
// command waits, in --sidecar none mode and in classic mode (proxy ready, undici loaded).

import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { Sidecar } from '../../test/support/sidecar.ts';
import { MEMORY_SAMPLE_INTERVAL_MS, MEMORY_SAMPLES, TIMEOUT_MS } from './settings.ts';
import { beforeEnd, launch, sleep, succeeded } from './process.ts';
import { JOB } from './latency.ts';
import { round2, shuffled } from './stats.ts';

export type MemoryMode = 'none' | 'classic';

export interface MemorySample {
  readonly vmHwmMiB: number;
  readonly vmRssMiB: number;
  readonly rssAnonMiB: number;
  readonly rssFileMiB: number;
}

export interface MemoryRun {
  readonly mode: MemoryMode;
  readonly samples: MemorySample[];
}

/** The memory lines of /proc/PID/status, in MiB. */
function sample(pid: number): MemorySample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => {
    const value = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
    if (value === undefined) throw new Error(`/proc/${pid}/status has no ${field}`);
    return round2(Number(value) / 1024);
  };
  return { vmHwmMiB: kib('VmHWM'), vmRssMiB: kib('VmRSS'), rssAnonMiB: kib('RssAnon'), rssFileMiB: kib('RssFile') };
}

/** The wrapper's arguments for a mode; classic points at a stand-in that is ready at once. */
function wrapperArgs(mode: MemoryMode, sidecar: Sidecar | undefined): string[] {
  const urls = sidecar === undefined ? [] : ['--ready-url', sidecar.readyUrl, '--quit-url', sidecar.quitUrl];
  return ['--sidecar', mode, '--log-level', 'warn', ...urls, '--', ...JOB];
}

/** One run: once the command has started, sample the wrapper, then let the command finish. */
async function memoryRun(wrapper: string, mode: MemoryMode): Promise<MemoryRun> {
  const sidecar = mode === 'classic' ? await Sidecar.start({ readyAfter: 0 }) : undefined;
  const job = launch(wrapper, wrapperArgs(mode, sidecar), ['pipe', 'pipe'], TIMEOUT_MS.memory);
  try {
    const stdout = job.child.stdout;
    if (stdout === null) throw new Error('the job has no stdout pipe');
    await beforeEnd(once(stdout, 'data'), job, `memory (${mode}): the job starting`);
    const samples: MemorySample[] = [];
    for (let i = 0; i < MEMORY_SAMPLES; i++) {
      if (i > 0) await sleep(MEMORY_SAMPLE_INTERVAL_MS);
      samples.push(sample(job.pid));
    }
    job.child.stdin?.end('\n');
    await succeeded(job, `memory (${mode})`);
    return { mode, samples };
  } finally {
    job.kill();
    await sidecar?.close();
  }
}

/** `rounds` rounds of both modes, in a random order each round. */
export async function measureMemory(wrapper: string, rounds: number): Promise<MemoryRun[]> {
  const runs: MemoryRun[] = [];
  for (let i = 0; i < rounds; i++) {
    for (const mode of shuffled<MemoryMode>(['none', 'classic'])) runs.push(await memoryRun(wrapper, mode));
  }
  return runs;
}
