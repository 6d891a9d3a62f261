// npm run measure: the two latencies the wrapper adds to a job, measured side by side over many runs
// and reported as medians and worst cases (a single run on a shared machine is not a fact).
//   detection: the stand-in turns ready at a random moment -> the command's first byte arrives
//   quit:      the command's last byte -> the wrapper has exited with the quit acknowledged
// Usage: node scripts/measure.ts [runs]  (default 30)

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { Sidecar, type SidecarOptions } from '../test/support/sidecar.ts';
import { root } from './pinned-node.ts';

const wrapper = join(root, 'dist', 'istio-job-run');
const runs = Number(process.argv[2] ?? 30);

interface Timing {
  readonly detectionMs: number;
  readonly quitMs: number;
}

async function once_(options: SidecarOptions, readyDelayMs: number): Promise<Timing> {
  const sidecar = await Sidecar.start({ ...options, readyAfter: Number.POSITIVE_INFINITY });
  try {
    const job = spawn(wrapper, ['--sidecar', 'classic', '--log-level', 'warn', '--ready-url', sidecar.readyUrl,
      '--quit-url', sidecar.quitUrl, '--', 'sh', '-c', 'echo start; read _; echo end'], { stdio: ['pipe', 'pipe', 'inherit'] });
    // Ready at a random moment once the wrapper is polling, so the poll phase is sampled uniformly.
    await sidecar.waitFor(() => sidecar.readyRequests.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, readyDelayMs));
    sidecar.setReady();
    const readyAt = performance.now();
    let startAt = 0;
    let endAt = 0;
    job.stdout.on('data', (chunk: Buffer) => {
      const text = String(chunk);
      if (text.includes('start') && startAt === 0) {
        startAt = performance.now();
        job.stdin.end('\n');
      }
      if (text.includes('end')) endAt = performance.now();
    });
    const [code] = (await once(job, 'exit')) as [number];
    const exitAt = performance.now();
    if (code !== 0 || sidecar.quitRequests.at(-1)?.status !== 200) throw new Error(`run failed: exit ${code}`);
    return { detectionMs: startAt - readyAt, quitMs: exitAt - endAt };
  } finally {
    await sidecar.close();
  }
}

function summary(values: readonly number[]): { median: number; p90: number; worst: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  const round = (n: number): number => Math.round(n * 10) / 10;
  return { median: round(at(0.5)), p90: round(at(0.9)), worst: round(sorted.at(-1) ?? Number.NaN) };
}

const plain: Timing[] = [];
const flaky: Timing[] = [];
for (let i = 0; i < runs; i++) {
  // Interleaved, so both scenarios see the same machine load.
  plain.push(await once_({}, 50 + Math.random() * 200));
  flaky.push(await once_({ quitScript: [503, 503] }, 50 + Math.random() * 200));
}
const report = {
  runs,
  detection: summary([...plain, ...flaky].map((t) => t.detectionMs)),
  quitAnswered: summary(plain.map((t) => t.quitMs)),
  quitAfterTwo503: summary(flaky.map((t) => t.quitMs)),
};
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
