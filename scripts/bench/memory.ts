// memory: the wrapper's peak RSS (VmHWM) and anonymous memory (RssAnon) from /proc/PID/status while its
// command waits, in --sidecar none mode and in classic mode (proxy ready, undici loaded). The wrapper is two
// processes: the bundle's launcher and Node, its child in a process group of its own (the command is the
// launcher's other child, in the launcher's group, and is not counted); each figure is the sum of the two.

import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { Sidecar } from '../../test/support/sidecar.ts';
import { MEMORY_SAMPLE_INTERVAL_MS, MEMORY_SAMPLES, TIMEOUT_MS } from './settings.ts';
import { beforeEnd, launch, sleep, succeeded } from './process.ts';
import { JOB } from './latency.ts';
import { round2, shuffled } from './stats.ts';

export type MemoryMode = 'none' | 'classic';

interface MemorySample {
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
function processSample(pid: number): MemorySample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => {
    const value = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
    if (value === undefined) throw new Error(`/proc/${pid}/status has no ${field}`);
    return round2(Number(value) / 1024);
  };
  return { vmHwmMiB: kib('VmHWM'), vmRssMiB: kib('VmRSS'), rssAnonMiB: kib('RssAnon'), rssFileMiB: kib('RssFile') };
}

/** The launcher's child that leads a process group of its own: Node. */
function nodeOf(launcher: number): number {
  const children = readFileSync(`/proc/${launcher}/task/${launcher}/children`, 'utf8').trim().split(' ').map(Number);
  // /proc/PID/stat: "PID (COMM) STATE PPID PGRP ...", COMM may hold spaces: count from its closing parenthesis.
  const leader = children.find((pid) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pid;
  });
  if (leader === undefined) throw new Error(`the launcher (pid ${launcher}) has no child in a process group of its own`);
  return leader;
}

/** The launcher and Node together. */
function sample(launcher: number, node: number): MemorySample {
  const [a, b] = [processSample(launcher), processSample(node)];
  return {
    vmHwmMiB: round2(a.vmHwmMiB + b.vmHwmMiB),
    vmRssMiB: round2(a.vmRssMiB + b.vmRssMiB),
    rssAnonMiB: round2(a.rssAnonMiB + b.rssAnonMiB),
    rssFileMiB: round2(a.rssFileMiB + b.rssFileMiB),
  };
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
    const node = nodeOf(job.pid);
    const samples: MemorySample[] = [];
    for (let i = 0; i < MEMORY_SAMPLES; i++) {
      if (i > 0) await sleep(MEMORY_SAMPLE_INTERVAL_MS);
      samples.push(sample(job.pid, node));
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
