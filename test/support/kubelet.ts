// A pod on this machine, with a small kubelet. Run inside its own network namespace (`unshare -n`: the
// pod's shared loopback), it starts each container as PID 1 of its own PID namespace, in the order and
// with the delays the spec asks, records when each exits and with what code, restarts what Kubernetes
// would restart, stops the pod as kubelet does (TERM to every PID 1, KILL after the grace period), and
// decides the pod's phase: Succeeded, Failed, or still Running after a bound (a hang). What each process did
// (containers started and ended, the stand-in's requests, the job's stderr) is traced with its time since the
// pod started: on stderr as it happens, so a simulator that is killed still shows it, and in the result.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants } from 'node:os';
import { createInterface } from 'node:readline';
import { pidOne } from './process.ts';
import { mono } from './sidecar.ts';

export interface PodSpec {
  /** The istio-proxy container (flags of sidecar-main.ts); absent: no sidecar was injected. */
  readonly sidecar?: { readonly kind: 'classic' | 'native'; readonly flags: readonly string[] };
  /** The job container: its command line (the wrapper as ENTRYPOINT) and environment. */
  readonly job: { readonly argv: readonly string[]; readonly env: Readonly<Record<string, string>>; readonly closedStdin?: boolean };
  /** When the classic sidecar's and the job's containers start, in ms after the pod (they start in parallel). */
  readonly sidecarDelayMs?: number;
  readonly jobDelayMs?: number;
  readonly restartPolicy: 'Never' | 'OnFailure';
  /** Restarts of a failing job container before the Job controller gives up and deletes the pod. */
  readonly backoffLimit: number;
  /** Stop the pod as kubelet does: when the job prints a line, or when the sidecar saw N readiness checks. */
  readonly terminate?: { readonly onJobLine?: string; readonly onReadyRequests?: number };
  /** terminationGracePeriodSeconds, in ms. */
  readonly graceMs: number;
  /** A pod whose containers still run this long after it started is reported Running: a hang. */
  readonly hangAfterMs: number;
}

export interface Run {
  readonly startedAt: number;
  exitedAt?: number;
  /** As Kubernetes shows it: the exit code, or 128+N for a death by signal N. */
  code?: number;
}

export interface SidecarEvent {
  readonly event: string;
  readonly mono: number;
  readonly path?: string;
  readonly method?: string;
  readonly status?: number | string;
  readonly listener?: string;
}

export interface PodResult {
  readonly phase: 'Succeeded' | 'Failed' | 'Running';
  readonly startedAt: number;
  readonly job: {
    readonly runs: Run[];
    readonly stdoutBytes: number;
    readonly output: string;
    readonly stderr: string;
    readonly readyAtStart: string[];
  };
  readonly sidecar: { readonly runs: Run[]; readonly events: SidecarEvent[] };
  /** kubelet stopped the pod (a deletion, or the Job controller giving up). */
  readonly terminated: boolean;
  /** What each process did, a line each: "+12.3ms job: ...". The last TRACE_LINES. */
  readonly trace: readonly string[];
}

const TRACE_LINES = 200;

/** The trace of a pod, for a failure's message. */
export const podTrace = (result: PodResult): string => `what the pod did:\n  ${result.trace.join('\n  ')}`;

const SIDECAR_MAIN = new URL('./sidecar-main.ts', import.meta.url).pathname;
const RESTART_BACKOFF_MS = 100;
const PROBE_PERIOD_MS = 50;
/** How long the job waits at most for a classic sidecar's stand-in to listen before it starts anyway. */
export const LISTEN_WAIT_MS = 5_000;
const KEEP_OUTPUT = 64 * 1024;

const codeOf = (code: number | null, signal: NodeJS.Signals | null): number =>
  code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0));

/**
 * `unshare --fork` passes its child's status on, re-raising a fatal signal on itself, except KILL, which
 * it cannot unblock: it exits 1 saying so. That line on the container's stderr means killed by KILL (137).
 */
const KILLED = 'unshare: sigprocmask unblock failed';
const containerCode = (code: number | null, signal: NodeJS.Signals | null, stderr: string): number =>
  code === 1 && stderr.includes(KILLED) ? 128 + constants.signals.SIGKILL : codeOf(code, signal);

/** A container: its command as PID 1 of a new PID namespace (`unshare --fork` waits for it and passes its status on). */
function startContainer(argv: readonly string[], env: Readonly<Record<string, string>>, closedStdin = false): ChildProcess {
  const command = closedStdin ? ['/bin/sh', '-c', 'exec 0<&- "$@"', 'sh', ...argv] : [...argv];
  return spawn('unshare', ['--pid', '--fork', '--mount-proc', '--', ...command], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
  });
}

/** A signal to a container's PID 1; nothing if it has already gone. */
function signalContainer(container: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(pidOne(container.pid ?? -1), signal);
  } catch {
    // Not started yet or already gone: kill the namespace's parent, which takes the rest with it.
    if (signal === 'SIGKILL') container.kill('SIGKILL');
  }
}

export async function runPod(spec: PodSpec): Promise<PodResult> {
  // The job's own scratch space across restarts (an emptyDir), removed with the pod.
  const state = mkdtempSync(join(tmpdir(), 'istio-job-run-pod-'));
  try {
    return await runPodIn(spec, state);
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

async function runPodIn(spec: PodSpec, state: string): Promise<PodResult> {
  const startedAt = mono();
  const trace: string[] = [];
  const note = (who: string, what: string): void => {
    const line = `+${(mono() - startedAt).toFixed(1)}ms ${who}: ${what}`;
    trace.push(line);
    if (trace.length > TRACE_LINES) trace.shift();
    process.stderr.write(`${line}\n`);
  };
  const jobRuns: Run[] = [];
  const sidecarRuns: Run[] = [];
  const events: SidecarEvent[] = [];
  const readyAtStart: string[] = [];
  let stdoutBytes = 0;
  let output = '';
  let stderr = '';
  let terminating = false;
  let jobDone = false;
  let job: ChildProcess | undefined;
  let sidecar: ChildProcess | undefined;
  let restarts = 0;
  let sidecarRestarts = 0;
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, action: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      action();
    }, ms);
    timers.add(timer);
  };

  let settle: () => void = () => undefined;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const classic = spec.sidecar?.kind === 'classic';
  const native = spec.sidecar?.kind === 'native';
  const check = (): void => {
    const sidecarDone = sidecar === undefined || sidecarRuns.at(-1)?.exitedAt !== undefined;
    if (jobDone && sidecarDone) settle();
  };

  let sidecarListening: () => void = () => undefined;
  const listening = new Promise<void>((resolve) => {
    sidecarListening = resolve;
  });

  function startSidecar(): void {
    if (spec.sidecar === undefined || terminating || (native && jobDone)) return;
    const run: Run = { startedAt: mono() };
    sidecarRuns.push(run);
    const container = startContainer(
      [process.execPath, SIDECAR_MAIN, '--ports', 'real', '--control-port', '15999', ...spec.sidecar.flags],
      {},
    );
    sidecar = container;
    note('kubelet', `started the sidecar's stand-in (run ${sidecarRuns.length})`);
    createInterface({ input: container.stdout! }).on('line', (line) => {
      const event = JSON.parse(line) as SidecarEvent;
      events.push(event);
      note(
        'sidecar',
        event.event === 'request'
          ? `${event.method ?? ''} ${event.path ?? ''} on ${event.listener ?? '?'}: ${event.status ?? ''}`
          : event.event + (event.event === 'exited' ? ` ${String((event as { code?: number }).code)}` : ''),
      );
      if (event.event === 'listening') sidecarListening();
      if (
        spec.terminate?.onReadyRequests !== undefined &&
        events.filter((e) => e.event === 'request' && e.path === '/healthz/ready').length >= spec.terminate.onReadyRequests
      )
        stopPod();
    });
    let errors = '';
    container.stderr!.on('data', (chunk: Buffer) => (errors = (errors + String(chunk)).slice(-4096)));
    container.on('close', (code, signal) => {
      sidecarListening();
      run.exitedAt = mono();
      run.code = containerCode(code, signal, errors);
      note('kubelet', `the sidecar's container ended: ${run.code}${errors === '' ? '' : `; its stderr: ${errors.trim()}`}`);
      // A native sidecar that dies while the job runs is restarted (restartPolicy Always), with a backoff;
      // a classic one only under OnFailure after a failure.
      const restart = native ? !jobDone && !terminating : !terminating && spec.restartPolicy === 'OnFailure' && run.code !== 0;
      if (restart) later(RESTART_BACKOFF_MS * 2 ** sidecarRestarts++, startSidecar);
      check();
    });
  }

  function startJob(): void {
    if (terminating) {
      jobDone = true;
      check();
      return;
    }
    const run: Run = { startedAt: mono() };
    jobRuns.push(run);
    const container = startContainer(spec.job.argv, { ...spec.job.env, JOB_STATE: state }, spec.job.closedStdin);
    job = container;
    note('kubelet', `started the job (run ${jobRuns.length})`);
    let errorLine = '';
    let firstLine = true;
    let partial = '';
    container.stdout!.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      const text = chunk.toString('latin1');
      output = (output + text).slice(-KEEP_OUTPUT);
      partial = (partial + text).slice(-4096);
      let newline;
      while ((newline = partial.indexOf('\n')) >= 0) {
        const line = partial.slice(0, newline);
        partial = partial.slice(newline + 1);
        // The job's first line, when it checks, says whether the proxy was ready as it started.
        if (firstLine && line.startsWith('ready-at-start ')) readyAtStart.push(line.slice(15));
        firstLine = false;
        if (spec.terminate?.onJobLine !== undefined && line === spec.terminate.onJobLine) stopPod();
      }
    });
    container.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + String(chunk)).slice(-KEEP_OUTPUT);
      const lines = (errorLine + String(chunk)).split('\n');
      errorLine = (lines.pop() ?? '').slice(-1024);
      for (const line of lines) note('job', line.length > 300 ? `${line.slice(0, 300)}... (${line.length} characters)` : line);
    });
    container.on('close', (code, signal) => {
      run.exitedAt = mono();
      run.code = containerCode(code, signal, stderr);
      note('kubelet', `the job's container ended: ${run.code}`);
      if (!terminating && spec.restartPolicy === 'OnFailure' && run.code !== 0) {
        // kubelet restarts the container in place; past the Job's backoffLimit the Job controller deletes the pod.
        if (restarts < spec.backoffLimit) {
          later(RESTART_BACKOFF_MS * 2 ** restarts++, startJob);
          return;
        }
        stopPod();
      }
      jobDone = true;
      if (native && sidecar !== undefined && sidecarRuns.at(-1)?.exitedAt === undefined) stopContainer(sidecar);
      check();
    });
  }

  function stopContainer(container: ChildProcess): void {
    const which = container === job ? 'the job' : 'the sidecar';
    note('kubelet', `TERM to ${which}`);
    signalContainer(container, 'SIGTERM');
    later(spec.graceMs, () => {
      if (container.exitCode !== null || container.signalCode !== null) return;
      note('kubelet', `KILL to ${which}: still running after the grace period`);
      signalContainer(container, 'SIGKILL');
    });
  }

  /** kubelet's stop: TERM to every container's PID 1, KILL after the grace period. */
  function stopPod(): void {
    if (terminating) return;
    terminating = true;
    for (const container of [job, sidecar]) {
      if (container !== undefined && container.exitCode === null && container.signalCode === null) stopContainer(container);
    }
    if (job === undefined || job.exitCode !== null || job.signalCode !== null) jobDone = true;
    check();
  }

  /** A native sidecar gates the job: kubelet's startup probe on 15021 must pass first. */
  async function startupProbe(): Promise<void> {
    for (;;) {
      try {
        const response = await fetch('http://127.0.0.1:15021/healthz/ready', { signal: AbortSignal.timeout(500) });
        if (response.ok) return;
      } catch {
        // not listening yet
      }
      if (terminating) return;
      await new Promise((resolve) => setTimeout(resolve, PROBE_PERIOD_MS));
    }
  }

  const hang = setTimeout(() => {
    note('kubelet', `still running after ${spec.hangAfterMs}ms: a hang`);
    settle();
  }, spec.hangAfterMs);
  if (native) {
    startSidecar();
    await startupProbe();
    if (!terminating) startJob();
    else jobDone = true;
  } else if (spec.sidecarDelayMs === undefined) {
    // kubelet starts the containers in order without waiting, and pilot-agent binds its ports within
    // milliseconds; the stand-in is a Node process, which a loaded machine can keep from listening for
    // seconds. So the job starts once the stand-in listens (at most a few seconds later), as it would
    // beside a real sidecar, and a quit sent at once finds it there.
    startSidecar();
    await Promise.race([listening, new Promise((resolve) => setTimeout(resolve, LISTEN_WAIT_MS))]);
    later(spec.jobDelayMs ?? 0, startJob);
  } else {
    later(spec.sidecarDelayMs, startSidecar);
    later(spec.jobDelayMs ?? 0, startJob);
  }
  await settled;
  clearTimeout(hang);

  const running = [job, sidecar].filter((c): c is ChildProcess => c !== undefined && c.exitCode === null && c.signalCode === null);
  const hung = running.length > 0;
  for (const timer of timers) clearTimeout(timer);
  for (const container of running) {
    note('kubelet', `KILL to ${container === job ? 'the job' : 'the sidecar'}: the pod is over`);
    signalContainer(container, 'SIGKILL');
  }
  await Promise.all(running.map((container) => new Promise((resolve) => container.once('exit', resolve))));

  const regular = [jobRuns.at(-1), ...(classic ? [sidecarRuns.at(-1)] : [])];
  const phase = hung ? 'Running' : regular.every((run) => run?.code === 0) ? 'Succeeded' : 'Failed';
  return {
    phase,
    startedAt,
    job: { runs: jobRuns, stdoutBytes, output: output.slice(-2048), stderr: stderr.slice(-4096), readyAtStart },
    sidecar: { runs: sidecarRuns, events },
    terminated: terminating,
    trace,
  };
}
