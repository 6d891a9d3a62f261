// The two latencies the wrapper adds to a job, against the stand-in of istio-proxy:
//   detection: the proxy turns ready at a random moment -> the command's first stdout byte reaches the bench
//   quit:      the command's last stdout byte -> the wrapper has exited, the quit acknowledged
// and, for comparison, detection by Istio's own waiter (`pilot-agent wait`), simulated in the bench process.

import { request, Agent, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { Sidecar, type QuitAnswer } from '../../test/support/sidecar.ts';
import { PILOT_AGENT_WAIT, READY_DELAY_SPAN_MS, TIMEOUT_MS } from './settings.ts';
import { beforeEnd, classicArgs, launch, sleep, succeeded, withDeadline, type Launched } from './process.ts';
import { round2, shuffled } from './stats.ts';

/** The job: says it started, waits for a line on stdin, says it ends, exits 0. */
export const JOB = ['sh', '-c', 'echo start; read _; echo end'] as const;

export type Scenario = 'quit-200' | 'quit-503x2' | 'pilot-agent';

export interface LatencyRun {
  readonly scenario: Scenario;
  readonly readyDelayMs: number;
  readonly detectionMs: number;
  /** Only for the wrapper's runs. */
  readonly quitMs?: number;
  readonly readyChecks: number;
}

const QUIT_SCRIPTS: Record<Exclude<Scenario, 'pilot-agent'>, readonly QuitAnswer[]> = {
  'quit-200': [],
  'quit-503x2': [503, 503],
};

/** Output timestamps of a running job: its first and its latest stdout byte. */
interface Output {
  readonly first: Promise<number>;
  last(): number;
}

/** Watches the job's stdout; once it has started, a line on stdin lets it finish. */
function watchJob(job: Launched): Output {
  let last = Number.NaN;
  const stdout = job.child.stdout;
  if (stdout === null) throw new Error('the job has no stdout pipe');
  stdout.on('data', () => (last = performance.now()));
  const first = once(stdout, 'data').then(() => {
    const at = performance.now();
    job.child.stdin?.end('\n');
    return at;
  });
  first.catch(() => undefined);
  return { first, last: () => last };
}

/** Waits until the first readiness request, then a random while, then turns the proxy ready. */
async function turnReadyAtRandom(sidecar: Sidecar, polling: Promise<void>): Promise<{ readyAt: number; delayMs: number }> {
  await polling;
  const delayMs = Math.random() * READY_DELAY_SPAN_MS;
  await sleep(delayMs);
  sidecar.setReady();
  return { readyAt: performance.now(), delayMs };
}

/** One life of the wrapper in classic mode: wait, run the job, quit. */
async function wrapperRun(wrapper: string, scenario: Exclude<Scenario, 'pilot-agent'>): Promise<LatencyRun> {
  const sidecar = await Sidecar.start({ readyAfter: Number.POSITIVE_INFINITY, quitScript: QUIT_SCRIPTS[scenario] });
  const args = classicArgs(sidecar, JOB);
  const job = launch(wrapper, args, ['pipe', 'pipe'], TIMEOUT_MS.lifecycle);
  try {
    const output = watchJob(job);
    const polling = sidecar.waitFor(() => sidecar.readyRequests.length >= 1);
    const { readyAt, delayMs } = await beforeEnd(turnReadyAtRandom(sidecar, polling), job, 'the wrapper polling the proxy');
    const startAt = await beforeEnd(output.first, job, 'the job starting');
    const end = await succeeded(job, `istio-job-run (${scenario})`);
    checkQuit(sidecar, scenario);
    return {
      scenario,
      readyDelayMs: round2(delayMs),
      detectionMs: round2(startAt - readyAt),
      quitMs: round2(end.exitAt - output.last()),
      readyChecks: sidecar.readyRequests.length,
    };
  } finally {
    job.kill();
    await sidecar.close();
  }
}

/** The run counts only if the proxy saw the scripted answers and then acknowledged the quit. */
function checkQuit(sidecar: Sidecar, scenario: Exclude<Scenario, 'pilot-agent'>): void {
  const statuses = sidecar.quitRequests.map((r) => r.status);
  const expected = [...QUIT_SCRIPTS[scenario], 200];
  if (statuses.join() !== expected.join())
    throw new Error(`${scenario}: the proxy answered the quits ${statuses.join(', ')}, expected ${expected.join(', ')}`);
}

/** One GET as pilot-agent's checkIfReady does it: ready only on 200. */
async function checkIfReady(url: string, agent: Agent): Promise<boolean> {
  try {
    const req = request(url, { agent, timeout: PILOT_AGENT_WAIT.requestTimeoutMs });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
    const [response] = (await once(req, 'response')) as [IncomingMessage];
    response.resume();
    await once(response, 'end');
    return response.statusCode === 200;
  } catch {
    return false;
  }
}

/** `pilot-agent wait`: sleep one period, check, repeat; returns when ready, with the number of checks. */
async function pilotAgentWait(url: string): Promise<number> {
  const agent = new Agent({ keepAlive: true });
  try {
    for (let checks = 1; ; checks++) {
      await sleep(PILOT_AGENT_WAIT.periodMs);
      if (await checkIfReady(url, agent)) return checks;
    }
  } finally {
    agent.destroy();
  }
}

/** Istio's waiter against the same stand-in, then the same job started directly once it returns. */
async function pilotAgentRun(): Promise<LatencyRun> {
  const sidecar = await Sidecar.start({ readyAfter: Number.POSITIVE_INFINITY });
  let job: Launched | undefined;
  try {
    const polling = sidecar.waitFor(() => sidecar.readyRequests.length >= 1);
    const ready = turnReadyAtRandom(sidecar, polling);
    const waited = withDeadline(pilotAgentWait(sidecar.readyUrl), PILOT_AGENT_WAIT.timeoutMs, 'pilot-agent wait');
    const checks = await waited;
    const [command, ...args] = JOB;
    job = launch(command, args, ['pipe', 'pipe'], TIMEOUT_MS.lifecycle);
    const startAt = await beforeEnd(watchJob(job).first, job, 'the job starting');
    await succeeded(job, 'the job after pilot-agent wait');
    const { readyAt, delayMs } = await ready;
    return { scenario: 'pilot-agent', readyDelayMs: round2(delayMs), detectionMs: round2(startAt - readyAt), readyChecks: checks };
  } finally {
    job?.kill();
    await sidecar.close();
  }
}

/** `rounds` rounds, each: the wrapper with a quit answered at once, with 503 twice first, and two pilot-agent waits, shuffled. */
export async function measureLatencies(wrapper: string, rounds: number, progress: (done: number) => void): Promise<LatencyRun[]> {
  const runs: LatencyRun[] = [];
  const kinds: readonly Scenario[] = ['quit-200', 'quit-503x2', 'pilot-agent', 'pilot-agent'];
  for (let i = 0; i < rounds; i++) {
    for (const scenario of shuffled(kinds))
      runs.push(scenario === 'pilot-agent' ? await pilotAgentRun() : await wrapperRun(wrapper, scenario));
    progress(i + 1);
  }
  return runs;
}
