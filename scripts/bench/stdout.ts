// stdout: the command writes N bytes into a pipe the bench drains, with and without the wrapper in between.
// Throughput is counted from the first byte to the last, so start-up (measured apart) does not dilute it.

import { MIB, TIMEOUT_MS } from './settings.ts';
import { launch, succeeded } from './process.ts';
import { round2, shuffled } from './stats.ts';

export type StdoutVariant = 'direct' | 'wrapper';

export interface StdoutRun {
  readonly variant: StdoutVariant;
  readonly bytes: number;
  /** Bytes after the first chunk / (last byte - first byte). */
  readonly mibPerSecond: number;
  /** spawn -> pipe closed, start-up included. */
  readonly wallMs: number;
}

/** The writer: head -c N /dev/zero, alone or as the wrapper's command. */
function command(wrapper: string, variant: StdoutVariant, bytes: number): [string, string[]] {
  const head = ['head', '-c', String(bytes), '/dev/zero'];
  return variant === 'direct' ? ['head', head.slice(1)] : [wrapper, ['--sidecar', 'none', '--', ...head]];
}

/** One run: drain the pipe, count the bytes, time first to last. */
async function stdoutRun(wrapper: string, variant: StdoutVariant, bytes: number): Promise<StdoutRun> {
  const [file, args] = command(wrapper, variant, bytes);
  const writer = launch(file, args, ['ignore', 'pipe'], TIMEOUT_MS.stdout);
  let received = 0;
  let firstChunk = 0;
  let firstAt = Number.NaN;
  let lastAt = Number.NaN;
  writer.child.stdout?.on('data', (chunk: Buffer) => {
    lastAt = performance.now();
    if (received === 0) {
      firstAt = lastAt;
      firstChunk = chunk.length;
    }
    received += chunk.length;
  });
  try {
    await succeeded(writer, `stdout (${variant})`);
  } finally {
    writer.kill();
  }
  if (received !== bytes) throw new Error(`stdout (${variant}): ${received} bytes arrived, ${bytes} were written`);
  const mib = (received - firstChunk) / MIB;
  return { variant, bytes, mibPerSecond: round2(mib / ((lastAt - firstAt) / 1000)), wallMs: round2(performance.now() - writer.spawnedAt) };
}

/** `rounds` rounds of both variants, in a random order each round. */
export async function measureStdout(wrapper: string, rounds: number, bytes: number): Promise<StdoutRun[]> {
  const runs: StdoutRun[] = [];
  for (let i = 0; i < rounds; i++) {
    for (const variant of shuffled<StdoutVariant>(['direct', 'wrapper'])) runs.push(await stdoutRun(wrapper, variant, bytes));
  }
  return runs;
}
