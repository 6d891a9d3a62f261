// A pod on this machine, run inside `unshare -n` (a network namespace: the pod's shared loopback).
// Containers: the sidecar stand-in on the real ports 15020/15021, and the job container, where
// istio-job-run is PID 1 of its own PID namespace (`unshare -p -f --mount-proc`), with its defaults.
// Usage: node pod.ts SCENARIO_JSON; prints one JSON report on stdout.

import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { pidOne, WRAPPER } from './process.ts';

interface Scenario {
  /** The job container's command, after `istio-job-run --`. */
  readonly command: readonly string[];
  readonly readyAfter: number;
  /** Terminate the pod as kubelet does once the job prints "ready": TERM to the job container's PID 1. */
  readonly terminate: boolean;
  readonly env?: Readonly<Record<string, string>>;
}

const scenario = JSON.parse(process.argv[2] ?? '{}') as Scenario;
execFileSync('ip', ['link', 'set', 'lo', 'up']);

const sidecar = spawn(process.execPath, [new URL('./sidecar-main.ts', import.meta.url).pathname, '--ports', 'real',
  '--ready-after', String(scenario.readyAfter)], { stdio: ['ignore', 'pipe', 'inherit'] });
const sidecarExit = once(sidecar, 'exit') as Promise<[number | null]>;
const sidecarEvents: Record<string, unknown>[] = [];
const sidecarLines = createInterface({ input: sidecar.stdout });
const listening = new Promise<void>((resolve) => {
  sidecarLines.on('line', (line) => {
    const event = JSON.parse(line) as Record<string, unknown>;
    sidecarEvents.push(event);
    if (event['event'] === 'listening') resolve();
  });
});
await listening;

const job = spawn('unshare', ['--pid', '--fork', '--mount-proc', '--', WRAPPER, '--', ...scenario.command], {
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', KUBERNETES_SERVICE_HOST: '10.96.0.1', ...scenario.env },
});
const jobExit = once(job, 'exit') as Promise<[number | null, string | null]>;
let stdout = '';
let stderr = '';
job.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
job.stdout.on('data', (chunk: Buffer) => {
  stdout += String(chunk);
  if (scenario.terminate && /^ready$/m.test(stdout)) terminate();
});

let terminated = false;
/** kubelet's stop: TERM to the container's PID 1, the wrapper, the only child of `unshare`. */
function terminate(): void {
  if (terminated) return;
  terminated = true;
  process.kill(pidOne(job.pid ?? -1), 'SIGTERM');
}

const [[jobCode, jobSignal], [sidecarCode]] = await Promise.all([jobExit, sidecarExit]);
process.stdout.write(`${JSON.stringify({ jobCode, jobSignal, stdout, stderr, sidecarCode, sidecarEvents })}\n`);
