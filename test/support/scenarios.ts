// The fault matrix: what the sidecar does x what the job does x the quit policy and restartPolicy x how
// the pod is stopped, as simulated pods (kubelet.ts), with what Kubernetes should show for each (an
// oracle written from Kubernetes' and the wrapper's rules), and the invariants every run must keep.

import { parseInvocation } from '../../src/config/parse.ts';
import { LISTEN_WAIT_MS, type PodResult, type PodSpec } from './kubelet.ts';
import { WRAPPER } from './process.ts';

/** What istio-proxy does (flags of sidecar-main.ts), and what the wrapper is told about it. */
export const SIDECARS = {
  'istio-1.26': { flags: ['--ready-after-ms', '150'], about: 'Istio 1.26+: ready after 150ms, exits at once after the quit' },
  'istio-1.25-drain': {
    flags: ['--ready-after-ms', '150', '--exit', 'drain', '--drain-ms', '1000'],
    about: 'Istio 1.4-1.25: drains (1s here, 5s by default) after the quit; 15020 refuses at once',
  },
  'agent-late': {
    flags: ['--ready-after-ms', '100', '--agent-late-ms', '400'],
    sidecarDelayMs: 200,
    about: 'the job container starts first, the sidecar 200ms later; pilot-agent listens 400ms after that',
  },
  'envoy-late': { flags: ['--envoy-late-ms', '300'], about: '15020 up at once, Envoy (15021) 300ms later' },
  'quit-503x3': { flags: ['--ready-after-ms', '100', '--quit-script', '503,503,503'], about: 'the quit answers 503 three times' },
  'quit-reset': { flags: ['--ready-after-ms', '100', '--quit-script', 'reset,reset'], about: 'the quit connection is reset twice' },
  'quit-hangs': {
    flags: ['--ready-after-ms', '100', '--quit-script', 'hang'],
    wrapper: ['--request-timeout', '300ms'],
    about: 'the first quit hangs (per-attempt timeout 300ms)',
  },
  crashed: { flags: ['--ready-after-ms', '100'], crashes: true, jobSleep: 0.6, about: 'ready (sticky 200), then dies while the job runs' },
  'never-ready': { flags: ['--never-ready'], wrapper: ['--ready-timeout', '600ms'], about: 'never ready (readiness timeout 600ms)' },
  native: { flags: ['--ready-after-ms', '150'], kind: 'native', about: 'a native sidecar (initContainers, restartPolicy Always)' },
  'native-crashes': {
    flags: ['--ready-after-ms', '100'],
    kind: 'native',
    crashes: true,
    jobSleep: 0.8,
    about: 'a native sidecar that dies while the job runs (kubelet restarts it)',
  },
  none: { flags: [], kind: 'none', about: 'no sidecar (injection off, or ambient)' },
  'wrong-quit-url': {
    flags: ['--ready-after-ms', '100'],
    wrapper: ['--quit-url', 'http://127.0.0.1:15020/quit'],
    about: 'a misconfigured --quit-url (pilot-agent answers 404)',
  },
  'quit-503-forever': {
    flags: ['--ready-after-ms', '100', '--quit-script', Array<string>(100).fill('503').join(',')],
    about: 'the proxy answers the quit 503, always',
  },
} as const satisfies Record<
  string,
  {
    flags: readonly string[];
    about: string;
    kind?: string;
    sidecarDelayMs?: number;
    wrapper?: readonly string[];
    jobSleep?: number;
    crashes?: boolean;
  }
>;
export type SidecarName = keyof typeof SIDECARS;

/** What the job does: a bash script after the readiness check, or a command line of its own. */
export const JOBS = {
  'exit-0': { script: 'exit 0', code: 0, about: 'exits 0' },
  'exit-3': { script: 'exit 3', code: 3, about: 'exits 3' },
  segv: { script: 'kill -SEGV $$', code: 139, about: 'dies of SIGSEGV' },
  missing: { argv: ['/no/such/job'], code: 127, about: 'the command does not exist' },
  directory: { argv: ['/tmp'], code: 126, about: 'the command is a directory' },
  'no-wait-instant': { script: 'exit 0', wrapper: ['--no-wait'], code: 0, about: 'exits at once, started without waiting (--no-wait)' },
  grandchild: { script: 'sleep 30 & exit 0', code: 0, about: 'leaves a grandchild running' },
  'much-output': { script: "head -c 20000000 /dev/zero | tr '\\0' x; exit 0", code: 0, bytes: 20_000_000, about: 'writes 20 MB to stdout' },
  'closed-stdin': { script: 'cat; exit 0', closedStdin: true, code: 0, about: 'runs with stdin closed and reads it' },
  'fails-once': {
    script: 'if [ -e "$JOB_STATE/failed" ]; then exit 0; fi; touch "$JOB_STATE/failed"; exit 1',
    code: 1,
    about: 'fails the first time, succeeds when retried',
  },
  runs: { script: 'echo running; sleep 30', code: 143, about: 'runs until stopped (dies of TERM)' },
  'ignores-term': { script: 'trap "" TERM; echo running; sleep 30', code: 137, about: 'ignores TERM (KILL after the grace period)' },
} as const satisfies Record<
  string,
  {
    about: string;
    code: number;
    script?: string;
    argv?: readonly string[];
    wrapper?: readonly string[];
    closedStdin?: boolean;
    bytes?: number;
  }
>;
export type JobName = keyof typeof JOBS;

export const POLICIES = {
  'Never/always': { restartPolicy: 'Never', quit: 'always' },
  'OnFailure/on-success': { restartPolicy: 'OnFailure', quit: 'on-success' },
  'OnFailure/always': { restartPolicy: 'OnFailure', quit: 'always' },
  'Never/on-success': { restartPolicy: 'Never', quit: 'on-success' },
  'Never/never': { restartPolicy: 'Never', quit: 'never' },
} as const;
export type PolicyName = keyof typeof POLICIES;

export const STOPS = {
  none: { about: 'the pod is not stopped' },
  'term-while-waiting': { about: 'kubelet stops the pod while the wrapper waits (after 3 readiness checks)' },
  'term-while-running': { about: 'kubelet stops the pod while the job runs' },
} as const;
export type StopName = keyof typeof STOPS;

export interface Scenario {
  readonly sidecar: SidecarName;
  readonly job: JobName;
  readonly policy: PolicyName;
  readonly stop: StopName;
  /** A documented limit: the pod is expected to stay Running, and why. */
  readonly limit?: string;
  /** The soak's randomisation: when the proxy turns ready (ms after it starts), in place of the default, and
   *  when each container starts. */
  readonly readyAfterMs?: number;
  readonly sidecarDelayMs?: number;
  readonly jobDelayMs?: number;
}

export const scenarioId = (s: Scenario): string => `${s.sidecar} / ${s.job} / ${s.policy} / ${s.stop}`;

const GRACE_MS = 1_500;
const BACKOFF_LIMIT = 2;
const QUIT_TIMEOUT_MS = 3_000;
const ON_FAILURE_READY_TIMEOUT_MS = 1_000;
/** How long after the job's end the sidecar may take to exit: the quit, plus an old Istio's drain, plus slack. */
export const SIDECAR_EXIT_BOUND_MS = QUIT_TIMEOUT_MS + 1_000 + 1_000;

const statusOf = (kind: string): string =>
  kind === 'none'
    ? ''
    : JSON.stringify(
        kind === 'native'
          ? { initContainers: ['istio-init', 'istio-proxy'], containers: null }
          : { initContainers: ['istio-init'], containers: ['istio-proxy'] },
      );

/** The readiness check a job does first, printed as its first line: was the proxy ready as it started? */
const CHECK =
  'exec 3<>/dev/tcp/127.0.0.1/15999 2>/dev/null && printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3 && ' +
  'echo "ready-at-start $(grep -o "\\"ready\\":[a-z]*" <&3 | cut -d: -f2)" || echo "ready-at-start down"';

/** For a proxy that crashes: after its check, the job has it die (the stand-in's control port), so it dies while the job runs. */
const CRASH = '{ exec 4<>/dev/tcp/127.0.0.1/15999 && printf "GET /crash HTTP/1.0\\r\\n\\r\\n" >&4 && cat <&4 >/dev/null; } 2>/dev/null';

/** The wrapper's flags for a scenario. */
function wrapperArgs(s: Scenario): string[] {
  const policy = POLICIES[s.policy];
  return [
    '--quit',
    policy.quit,
    '--quit-timeout',
    `${QUIT_TIMEOUT_MS}ms`,
    ...(policy.restartPolicy === 'OnFailure' ? ['--ready-timeout', `${ON_FAILURE_READY_TIMEOUT_MS}ms`] : []),
    ...((SIDECARS[s.sidecar] as { wrapper?: readonly string[] }).wrapper ?? []),
    ...((JOBS[s.job] as { wrapper?: readonly string[] }).wrapper ?? []),
  ];
}

/** How long the wrapper gives the sidecar to answer its first request: the readiness window, or for a job
 *  started without waiting, the quit timeout. */
function firstAnswerWindowMs(s: Scenario): number {
  const invocation = parseInvocation([...wrapperArgs(s), '--', 'true'], {});
  if (invocation.kind !== 'run') throw new Error(`${scenarioId(s)}: the wrapper's flags do not parse`);
  return invocation.options.wait ? invocation.options.readyTimeout : invocation.options.quitTimeout;
}

export function podSpec(s: Scenario): PodSpec {
  const sidecar = SIDECARS[s.sidecar] as {
    flags: readonly string[];
    kind?: string;
    sidecarDelayMs?: number;
    jobSleep?: number;
    crashes?: boolean;
  };
  const job = JOBS[s.job] as { script?: string; argv?: readonly string[]; closedStdin?: boolean };
  const policy = POLICIES[s.policy];
  const kind = sidecar.kind ?? 'classic';
  const sidecarDelayMs = s.sidecarDelayMs ?? sidecar.sidecarDelayMs;
  const crash = sidecar.crashes === true ? `${CRASH}; ` : '';
  const sleep = sidecar.jobSleep === undefined ? '' : `sleep ${sidecar.jobSleep}; `;
  const flags =
    s.readyAfterMs === undefined
      ? sidecar.flags
      : [
          ...sidecar.flags.filter((_, i, all) => all[i] !== '--ready-after-ms' && all[i - 1] !== '--ready-after-ms'),
          '--ready-after-ms',
          String(s.readyAfterMs),
        ];
  const command = job.argv ?? ['/bin/bash', '-c', `${CHECK}; ${crash}${sleep}${job.script ?? ''}`];
  const spec: PodSpec = {
    job: {
      argv: [WRAPPER, ...wrapperArgs(s), '--', ...command],
      env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', ISTIO_JOB_RUN_SIDECAR_STATUS: statusOf(kind) },
      ...(job.closedStdin === true ? { closedStdin: true } : {}),
    },
    restartPolicy: policy.restartPolicy,
    backoffLimit: BACKOFF_LIMIT,
    graceMs: GRACE_MS,
    hangAfterMs: 12_000,
    ...(sidecarDelayMs === undefined ? {} : { sidecarDelayMs }),
    ...(s.jobDelayMs === undefined ? {} : { jobDelayMs: s.jobDelayMs }),
    ...(kind === 'none' ? {} : { sidecar: { kind: kind as 'classic' | 'native', flags: [...flags, '--term-drain-ms', '300'] } }),
    ...(s.stop === 'term-while-running' ? { terminate: { onJobLine: 'running' } } : {}),
    ...(s.stop === 'term-while-waiting' ? { terminate: { onReadyRequests: 3 } } : {}),
  };
  return spec;
}

/** The job container's last exit code as Kubernetes would show it, from the rules alone. */
export function expectedCode(s: Scenario): number {
  const policy = POLICIES[s.policy];
  if (s.stop === 'term-while-waiting') return 143; // the wrapper got TERM before the command started
  if (s.sidecar === 'never-ready') return 125;
  const first: number = JOBS[s.job].code;
  if (policy.restartPolicy === 'Never' || first === 0) return first;
  // OnFailure: the container is retried. With --quit always the first failure already stopped the proxy,
  // so every retry times out waiting for it (125); with on-success the proxy is still there for it.
  if (policy.quit === 'always') return 125;
  return s.job === 'fails-once' ? 0 : first;
}

export function expectedPhase(s: Scenario): PodResult['phase'] {
  if (s.limit !== undefined) return 'Running';
  return expectedCode(s) === 0 ? 'Succeeded' : 'Failed';
}

export interface Measured {
  readonly phase: PodResult['phase'];
  readonly code: number | undefined;
  readonly runs: number;
  /** Pod start to its last container's exit. */
  readonly completionMs: number | undefined;
  /** The job's last exit to the sidecar's exit (classic). */
  readonly sidecarAfterJobMs: number | undefined;
  readonly quits: number;
}

export function measure(result: PodResult): Measured {
  const job = result.job.runs.at(-1);
  const sidecar = result.sidecar.runs.at(-1);
  const ends = [...result.job.runs, ...result.sidecar.runs].map((run) => run.exitedAt ?? Number.NaN);
  const last = Math.max(...ends);
  return {
    phase: result.phase,
    code: job?.code,
    runs: result.job.runs.length,
    completionMs: Number.isFinite(last) ? last - result.startedAt : undefined,
    sidecarAfterJobMs: job?.exitedAt !== undefined && sidecar?.exitedAt !== undefined ? sidecar.exitedAt - job.exitedAt : undefined,
    quits: result.sidecar.events.filter((e) => e.event === 'request' && e.path === '/quitquitquit').length,
  };
}

/** Every invariant a run must keep; empty when all hold. */
export function violations(s: Scenario, result: PodResult): string[] {
  const found: string[] = [];
  const m = measure(result);
  const kind = (SIDECARS[s.sidecar] as { kind?: string }).kind ?? 'classic';
  if (m.phase !== expectedPhase(s)) found.push(`phase ${m.phase}, expected ${expectedPhase(s)}`);
  if (m.code !== expectedCode(s)) found.push(`exit code ${m.code}, expected ${expectedCode(s)}`);
  if (kind === 'classic' && s.limit === undefined && (m.sidecarAfterJobMs === undefined || m.sidecarAfterJobMs > SIDECAR_EXIT_BOUND_MS)) {
    found.push(
      `the sidecar exited ${m.sidecarAfterJobMs === undefined ? 'never' : `${Math.round(m.sidecarAfterJobMs)}ms`} after the job (bound ${SIDECAR_EXIT_BOUND_MS}ms)`,
    );
  }
  const waits = kind !== 'none' && !s.job.startsWith('no-wait');
  if (waits && result.job.readyAtStart.some((ready) => ready !== 'true'))
    found.push(`the job started before the proxy was ready (${result.job.readyAtStart.join(', ')})`);
  if (kind === 'native' && m.quits > 0) found.push(`a native sidecar was told to quit ${m.quits} time(s)`);
  const jobRuns = (JOBS[s.job] as { argv?: readonly string[] }).argv === undefined; // long enough to see the crash
  if (s.sidecar === 'native-crashes' && jobRuns && result.sidecar.runs.length < 2) found.push('kubelet did not restart the native sidecar');
  const bytes = (JOBS[s.job] as { bytes?: number }).bytes;
  if (bytes !== undefined && result.job.stdoutBytes < bytes) found.push(`stdout lost bytes: ${result.job.stdoutBytes} of ${bytes}`);
  return found;
}

/** The matrix: the combinations that matter, each once. */
export function matrix(): Scenario[] {
  const list: Scenario[] = [];
  const add = (sidecar: SidecarName, job: JobName, policy: PolicyName, stop: StopName, limit?: string): void => {
    list.push({ sidecar, job, policy, stop, ...(limit === undefined ? {} : { limit }) });
  };
  // Every sidecar behaviour with every job behaviour, under the recommended Never/always.
  const plainJobs: JobName[] = [
    'exit-0',
    'exit-3',
    'segv',
    'missing',
    'directory',
    'no-wait-instant',
    'grandchild',
    'much-output',
    'closed-stdin',
  ];
  const limits: SidecarName[] = ['wrong-quit-url', 'quit-503-forever'];
  for (const sidecar of (Object.keys(SIDECARS) as SidecarName[]).filter((name) => !limits.includes(name))) {
    for (const job of sidecar === 'never-ready' ? (['exit-0', 'missing'] as JobName[]) : plainJobs)
      add(sidecar, job, 'Never/always', 'none');
  }
  // restartPolicy OnFailure: on-success keeps the proxy for the retry; always (a mismatch) does not.
  for (const sidecar of ['istio-1.26', 'istio-1.25-drain', 'native'] as SidecarName[]) {
    for (const job of ['exit-0', 'fails-once', 'exit-3'] as JobName[]) {
      add(sidecar, job, 'OnFailure/on-success', 'none');
      if (sidecar !== 'native') add(sidecar, job, 'OnFailure/always', 'none');
    }
  }
  // kubelet stopping the pod: while waiting, while running, with a job that ignores TERM.
  for (const sidecar of ['istio-1.26', 'istio-1.25-drain', 'native', 'none'] as SidecarName[]) {
    add(sidecar, 'runs', 'Never/always', 'term-while-running');
    add(sidecar, 'ignores-term', 'Never/always', 'term-while-running');
  }
  add('never-ready', 'exit-0', 'Never/always', 'term-while-waiting');
  // Documented limits: what no wrapper can fix, and that it still exits with the job's code.
  add('istio-1.26', 'exit-0', 'Never/never', 'none', '--quit never with restartPolicy Never: nothing stops the proxy');
  add(
    'istio-1.26',
    'exit-3',
    'Never/on-success',
    'none',
    '--quit on-success with restartPolicy Never: after a failure nothing stops the proxy',
  );
  add('wrong-quit-url', 'exit-0', 'Never/always', 'none', 'the quit goes to a wrong path: reported (404), not retried');
  add('quit-503-forever', 'exit-0', 'Never/always', 'none', 'the proxy never accepts the quit: the wrapper gives up after --quit-timeout');
  return list;
}

/** A random pod for the soak: a row of the matrix (not a documented limit), with the proxy ready at a random moment. */
export function randomScenario(random: () => number): Scenario {
  const rows = matrix().filter((s) => s.limit === undefined);
  const row = rows[Math.floor(random() * rows.length)] as Scenario;
  const kind = (SIDECARS[row.sidecar] as { kind?: string }).kind ?? 'classic';
  const randomisable = kind !== 'none' && row.sidecar !== 'never-ready' && row.sidecar !== 'envoy-late';
  return {
    ...row,
    ...(randomisable ? { readyAfterMs: Math.floor(random() * 500) } : {}),
    // Either container may start first, by up to 300ms (a crashing proxy dies only when the job asks it to). Only
    // where the wrapper waits for the stand-in's first answer at least as long as kubelet waits for it to listen:
    // the stand-in is a Node process, which a loaded machine can keep from listening for seconds, where
    // pilot-agent binds in milliseconds. Elsewhere (a short readiness window, or a job started without waiting,
    // whose quit must find the stand-in within the quit timeout) the job starts once the stand-in listens.
    ...(kind === 'classic' && firstAnswerWindowMs(row) >= LISTEN_WAIT_MS
      ? { sidecarDelayMs: Math.floor(random() * 300), jobDelayMs: Math.floor(random() * 300) }
      : {}),
  };
}

/** A small seeded generator (mulberry32), so a soak can be replayed from its seed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
