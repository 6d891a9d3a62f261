// The proof of --check against real shells: each generated script runs in dash, bash and busybox's ash, once with the job
// succeeding and once with it failing, inside a pod of its own (test/support/fixtures/proof-pod.c: a private
// network and PID namespace whose sidecar answers on Istio's real ports, and whose processes run where the pod shares
// them); real curl, wget, busybox wget, python3, node, pkill, timeout, tini and dumb-init; stand-ins only for the
// job, for pilot-agent and for what the manifest's image leaves out (IMAGE_LACKS: "not found", 127); the built wrapper where a manifest runs it. What really happened (an effective quit before or after the job, the container's status)
// says whether the script works, by the shell the manifest names (sh is what the image's sh is: Debian's dash,
// Alpine's ash); the other shells' results are kept beside it. Then --check reads every manifest in one run, and each verdict is compared with the truth.
// Needs root (namespaces), gcc and the build.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parse } from 'yaml';
import { need } from '../../scripts/tools.ts';
import { PROGRAM } from '../../src/bundle/self.ts';
import { ISTIO, istioPort } from '../../src/config/kinds.ts';
import { PROXY_CONTAINER, STATUS_ANNOTATION } from '../../src/config/mode.ts';
import { runManifest } from '../../src/manifest/cli/cli.ts';
import { FIXTURES, NODE, start, WRAPPER } from './process.ts';
import { type GeneratedScript, JOB_PROGRAMS } from './script-grammar.ts';
import { NO_PROFILE } from '../../src/config/profile.ts';

export type ShellName = 'dash' | 'bash' | 'ash';
export type JobOutcome = 'success' | 'failure';
const SHELLS: readonly ShellName[] = ['dash', 'bash', 'ash'];
const CLASSIC_STATUS = JSON.stringify({ containers: [PROXY_CONTAINER] });
const OUTCOMES: readonly JobOutcome[] = ['success', 'failure'];
/** The failed job's status: not 1, so a status made up by the script is told from the job's. */
export const FAILED = 3;
/**
 * A run's bound: a script still running then has hung (a wait for a sidecar that is gone). Far above a run's
 * usual tens of milliseconds, as a niced Python on a busy machine can take seconds to start.
 */
const RUN_TIMEOUT_MS = 30_000;

/** What one run did, from the pod's events. */
export interface Run {
  readonly exit: number;
  /** How long the container ran. */
  readonly ms: number;
  /** Where the first effective quit came: none, before the job started, or after. */
  readonly quit: 'none' | 'before-job' | 'after-job';
  readonly jobRan: boolean;
  readonly timedOut: boolean;
  readonly events: readonly string[];
}

/**
 * What makes a script broken, and the rules of --check that name it. An effective quit is a POST to pilot-agent's
 * quit, a POST to Envoy's admin quit (pilot-agent exits when Envoy does: --check warns of it, quit-admin-port), or a
 * signal to one of the sidecar's processes.
 */
/** Rules whose truth depends on the image's sh: warnings, which a run in dash proves. */
const DIALECT_RULES = ['sh-pipefail'] as const;

/** The rules that name a quit that never comes, whatever the job did. */
const NO_QUIT_RULES = [
  'sh-pipefail',
  'quit-wrong-method',
  'quit-program-missing',
  'shell-missing',
  'quit-unheard',
  'bashism-under-sh',
  'quit-only-on-signal',
  'wrapper-never-quits',
  'unwrapped',
] as const;

export const PROBLEMS = {
  'failed-job-ends-0': ['exit-code-lost', 'bashism-under-sh', 'quit-program-missing'],
  'no-quit-after-failure': ['quit-skipped-on-failure', ...NO_QUIT_RULES],
  'no-quit-after-success': NO_QUIT_RULES,
  'quit-before-job': ['quit-before-job', 'bashism-under-sh'],
  'quit-after-failure': ['onfailure-quit-always'],
  // Any error: these come with one of the above, or from a script that never gets to its job.
  'succeeded-job-ends-non-zero': [],
  hangs: [],
} as const satisfies Record<string, readonly string[]>;
export type Problem = keyof typeof PROBLEMS;

/** The truth of one shell's two runs under the script's restartPolicy. */
function problemsOf(policy: GeneratedScript['policy'], success: Run, failure: Run): Problem[] {
  const problems: Problem[] = [];
  if (success.timedOut || failure.timedOut) problems.push('hangs');
  if (failure.exit === 0) problems.push('failed-job-ends-0');
  if (success.exit !== 0 && !success.timedOut) problems.push('succeeded-job-ends-non-zero');
  if (success.quit === 'none') problems.push('no-quit-after-success');
  if (success.quit === 'before-job' || failure.quit === 'before-job') problems.push('quit-before-job');
  if (policy === 'Never' && failure.quit === 'none') problems.push('no-quit-after-failure');
  if (policy === 'OnFailure' && failure.quit === 'after-job') problems.push('quit-after-failure');
  return problems;
}

export interface CheckFinding {
  readonly line: number;
  readonly level: string;
  readonly rule: string;
  readonly message: string;
}

export type Agreement = 'agrees' | 'missed' | 'other-rule' | 'false-error';

export interface Proven {
  readonly script: GeneratedScript;
  /** The shell whose runs are the truth: the one the manifest names. */
  readonly shell: ShellName;
  readonly runs: Readonly<Record<ShellName, Readonly<Record<JobOutcome, Run>>>>;
  readonly problems: readonly Problem[];
  /** The other shells' truth, each where it differs. */
  readonly otherProblems?: Readonly<Partial<Record<ShellName, readonly Problem[]>>>;
  readonly findings: readonly CheckFinding[];
  readonly agreement: Agreement;
  /** The rules that would name its problems (empty: any error does). */
  readonly expected: readonly string[];
}

/** Why the proof cannot run here (root for the namespaces, the build, the programs the scripts call), or undefined. */
export function proofUnavailable(): string | undefined {
  if (!existsSync(WRAPPER)) return `needs the build (${WRAPPER}: npm run build)`;
  try {
    need('gcc', 'unshare', 'dash', 'bash', 'curl', 'wget', 'busybox', 'python3', 'pkill', 'pgrep', 'pidof', 'tini', 'dumb-init');
    execFileSync('unshare', ['--net', '--pid', '--fork', '--mount-proc', 'true'], { stdio: 'ignore' });
    return undefined;
  } catch (error) {
    return error instanceof Error && error.message.includes('missing')
      ? error.message
      : 'needs root and unshare (network and PID namespaces)';
  }
}

/** The container's argv as the manifest gives it, its environment, and whether the pod shares its processes. */
interface Container {
  readonly argv: readonly string[];
  readonly env: readonly string[];
  readonly sharesProcesses: boolean;
  /** The programs its image leaves out (IMAGE_LACKS), which its runs here do not find. */
  readonly lacks: readonly string[];
  /** Its image's wget is busybox's. */
  readonly busyboxWget: boolean;
}

/**
 * The programs the images the proof's manifests name leave out, as the images are built (Debian's has neither
 * curl nor wget; Alpine's and python's alpine variant have busybox's wget and no curl): in a run of a container
 * of that image, each is a stand-in that says "not found" and exits 127, as a shell does for a program it lacks.
 */
const IMAGE_LACKS: Readonly<Record<string, readonly string[]>> = {
  'debian:12': ['curl', 'wget'],
  'alpine:3.20': ['curl', 'bash'],
  'python:3.12-alpine': ['curl', 'bash'],
};
/** The images whose wget is busybox's (Alpine's): in their runs, wget is busybox's applet. */
const BUSYBOX_WGET: ReadonlySet<string> = new Set(['alpine:3.20', 'python:3.12-alpine']);

interface EnvEntry {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: { readonly fieldRef?: { readonly fieldPath?: string } };
}

function containerOf(manifest: string): Container {
  const job = parse(manifest) as {
    spec: {
      template: {
        spec: {
          shareProcessNamespace?: boolean;
          containers: { image?: string; command?: string[]; args?: string[]; env?: EnvEntry[] }[];
        };
      };
    };
  };
  const pod = job.spec.template.spec;
  const container = pod.containers[0];
  if (container === undefined) throw new Error('a manifest without a container');
  return {
    argv: [...(container.command ?? []), ...(container.args ?? [])].map(String),
    // The downward API's sidecar status, as the injector leaves it on a pod with a classic sidecar.
    env: (container.env ?? []).map(({ name, value, valueFrom }) =>
      valueFrom?.fieldRef?.fieldPath?.includes(STATUS_ANNOTATION) === true ? `${name}=${CLASSIC_STATUS}` : `${name}=${value ?? ''}`,
    ),
    sharesProcesses: pod.shareProcessNamespace === true,
    lacks: IMAGE_LACKS[container.image ?? ''] ?? [],
    busyboxWget: BUSYBOX_WGET.has(container.image ?? ''),
  };
}

/**
 * The argv with its shell (the first sh or bash, after any program in front of it) replaced by SHELL (ash: busybox's,
 * from the stage); a shell the image lacks (LACKS: bash in Alpine's) by the stage's stand-in that is not found.
 */
function withShell(argv: readonly string[], shell: ShellName, lacks: readonly string[] = [], stage?: Stage): string[] {
  const at = argv.findIndex((word) => basename(word) === 'sh' || basename(word) === 'bash');
  if (at < 0) throw new Error(`no shell in ${JSON.stringify(argv)}`);
  const word = argv[at] as string;
  // A shell the image lacks, named or run in its place, is not found (not the machine's, which the pod's own PATH finds).
  const lacking = [basename(word), shell].find((name) => lacks.includes(name));
  const named =
    stage !== undefined && lacking !== undefined
      ? join(stage.pathLacking(lacks).split(':')[0] as string, lacking)
      : shell === 'ash' || !word.includes('/')
        ? shell
        : join(dirname(word), shell);
  return argv.map((item, index) => (index === at ? named : item));
}

/** The directory the pods run from: the pod, the stand-ins, one work directory per pod, the outputs. */
export interface Stage {
  readonly dir: string;
  readonly pod: string;
  readonly bin: string;
  readonly sidecar: string;
  readonly path: string;
  /** The PATH of a container whose image leaves out LACKS (and whose wget is busybox's, BUSYBOX_WGET). */
  pathLacking(lacks: readonly string[], busyboxWget?: boolean): string;
  work(index: number): string;
  output(id: string): string;
}

export function stage(): Stage {
  const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-script-proof-'));
  const pod = join(dir, 'proof-pod');
  execFileSync('gcc', ['-O2', '-Wall', '-Werror', '-o', pod, join(FIXTURES, 'proof-pod.c')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const bin = join(dir, 'bin');
  const sidecar = join(dir, 'sidecar');
  for (const sub of [bin, sidecar, join(dir, 'out')]) mkdirSync(sub);
  for (const program of JOB_PROGRAMS) if (!program.endsWith('.sh')) symlinkSync(pod, join(bin, program));
  for (const process of ISTIO.template.processes) symlinkSync(pod, join(sidecar, process));
  symlinkSync(NODE, join(bin, 'node'));
  symlinkSync(execFileSync('sh', ['-c', 'command -v busybox'], { encoding: 'utf8' }).trim(), join(bin, 'ash'));
  symlinkSync(WRAPPER, join(bin, PROGRAM));
  // pilot-agent's own commands as a job's script uses them: `request METHOD PATH` goes to Envoy's admin port
  // (pilot-agent sends it itself, whatever the image has: this stand-in's curl is the machine's, by its path).
  const ready = `http://localhost:${istioPort('health')}${ISTIO.ready?.path ?? ''}`;
  const curl = execFileSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).trim();
  writeFileSync(
    join(bin, 'pilot-agent'),
    [
      '#!/bin/sh',
      'case "$1" in',
      `request) exec ${curl} -sf -X "$2" "http://localhost:${istioPort('envoy-admin')}/\${3#/}" ;;`,
      `wait) exec ${curl} -sf -o /dev/null ${ready} ;;`,
      '*) echo "pilot-agent: $1: not in this stand-in" >&2; exit 2 ;;',
      'esac',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  const path = `${bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;
  return {
    dir,
    pod,
    bin,
    sidecar,
    path,
    pathLacking: (lacks, busyboxWget = false) => {
      if (lacks.length === 0 && !busyboxWget) return path;
      const without = join(dir, `without-${lacks.join('-')}${busyboxWget ? '-busybox-wget' : ''}`);
      if (!existsSync(without)) {
        mkdirSync(without);
        for (const program of lacks) {
          writeFileSync(join(without, program), `#!/bin/sh\necho "sh: ${program}: not found" >&2\nexit 127\n`, { mode: 0o755 });
        }
        if (busyboxWget) symlinkSync(join(bin, 'ash'), join(without, 'wget'));
      }
      return `${without}:${path}`;
    },
    work: (index) => {
      const work = join(dir, `work-${index}`);
      mkdirSync(work, { recursive: true });
      const script = join(work, 'run-job.sh');
      try {
        symlinkSync(pod, script);
      } catch {}
      // A file of settings that scripts source (`. ./env.sh`), as a rendered secret or an image's env file is.
      writeFileSync(join(work, 'env.sh'), 'JOB_MODE=full\nexport JOB_MODE\n');
      return work;
    },
    output: (id) => join(dir, 'out', id),
  };
}

export interface Planned {
  readonly id: string;
  readonly lacks: readonly string[];
  readonly busyboxWget: boolean;
  readonly argv: readonly string[];
  readonly env: readonly string[];
  readonly shares: boolean;
  readonly status: number;
  /** Where it runs (the pod's work folder unless given); its env may give its own PATH. */
  readonly cwd?: string;
}

/** How a pod is started: unshare and its arguments, from the pod's own command line. */
export type Launch = (pod: readonly string[]) => readonly [string, readonly string[]];

const LAUNCH: Launch = (pod) => ['unshare', ['--net', '--pid', '--fork', '--mount-proc', '--kill-child', '--', ...pod]];

/** Runs the planned containers on `pods` pods side by side; the events and status of each, by id. */
export async function runAll(
  stage: Stage,
  planned: readonly Planned[],
  pods: number,
  options: { readonly launch?: Launch; readonly timeoutMs?: number; readonly ports?: readonly number[] } = {},
): Promise<Map<string, { exit: number; events: string[]; ms: number }>> {
  const timeoutMs = options.timeoutMs ?? RUN_TIMEOUT_MS;
  const results = new Map<string, { exit: number; events: string[]; ms: number }>();
  const shares = Array.from({ length: pods }, (_, index) => planned.filter((_, at) => at % pods === index));
  await Promise.all(
    shares.map(async (share, index) => {
      if (share.length === 0) return;
      const work = stage.work(index);
      const fields = share.flatMap((run) => [
        run.id,
        run.cwd ?? work,
        stage.output(run.id),
        run.shares ? '1' : '0',
        String(run.status),
        ...counted([
          run.env.find((entry) => entry.startsWith('PATH=')) ?? `PATH=${stage.pathLacking(run.lacks, run.busyboxWget)}`,
          `HOME=${work}`,
          ...run.env.filter((entry) => !entry.startsWith('PATH=')),
        ]),
        String(run.argv.length),
        ...run.argv,
      ]);
      const [program, args] = (options.launch ?? LAUNCH)([
        stage.pod,
        ...[istioPort('status'), istioPort('health'), istioPort('envoy-admin')].map(String),
        ...[ISTIO.quit.path, ISTIO.ready?.path ?? '', ISTIO.template.quitMethods?.[0] ?? 'POST'],
        ...[stage.sidecar, ISTIO.template.processes.join(','), join(work, '.events'), String(timeoutMs)],
        ...(options.ports ?? []).map(String),
      ]);
      // Each run has its bound in the pod; this one only stops a pod that failed to keep it.
      const running = start(program, [...args], { env: { PATH: stage.path }, timeoutMs: (share.length + 1) * (timeoutMs + 1_000) });
      running.process.stdin?.end(Buffer.from(fields.map((field) => `${field}\0`).join('')));
      const finished = await running.finished;
      if (finished.code !== 0) throw new Error(`the proof's pod failed (${finished.code}): ${finished.stderr}`);
      for (const line of finished.stdout.split('\n')) {
        const [kind, id = '', ...rest] = line.split(' ');
        const result = results.get(id) ?? { exit: -1, events: [], ms: 0 };
        results.set(id, result);
        if (kind === 'E') result.events.push(rest.join(' '));
        else if (kind === 'R') {
          result.exit = Number(rest[1]);
          result.ms = Number(rest[3]);
        }
      }
    }),
  );
  return results;
}

/** A list of the pod's input, its length first. */
const counted = (fields: readonly string[]): string[] => [String(fields.length), ...fields];

function runOf(result: { exit: number; events: readonly string[]; ms: number } | undefined): Run {
  if (result === undefined || result.exit < 0) throw new Error('a run with no result from the pod');
  const events = result.events;
  const began = events.indexOf('job-start');
  const quit = events.findIndex((event) => event.startsWith('quit '));
  return {
    exit: result.exit,
    ms: result.ms,
    events,
    jobRan: began >= 0,
    timedOut: events.includes('timeout'),
    quit: quit < 0 ? 'none' : began >= 0 && quit > began ? 'after-job' : 'before-job',
  };
}

/** --check over every manifest in one run, through the manifest tools' own entry point; the findings by file. */
async function checkAll(scripts: readonly GeneratedScript[]): Promise<Map<string, CheckFinding[]>> {
  const files = new Map(scripts.map((script) => [`${script.id}.yaml`, script.manifest]));
  const out: string[] = [];
  const err: string[] = [];
  await runManifest(['--check', ...files.keys()], 'istio-job-run', '0.0.0', {
    readFile: (path) => {
      const text = files.get(path);
      if (text === undefined) throw Object.assign(new Error(path), { code: 'ENOENT' });
      return text;
    },
    listDir: () => undefined,
    stdout: (text) => out.push(text),
    // The one line of a run that states no cluster profile is no problem reading them.
    stderr: (line) => (line === NO_PROFILE ? undefined : err.push(line)),
  });
  if (err.length > 0) throw new Error(`--check could not read the manifests: ${err.join('\n')}`);
  const found = new Map<string, CheckFinding[]>();
  for (const line of out.join('').split('\n')) {
    const match = /^(.+?)\.yaml:(\d+): (\w+): ([\w-]+): (.*)$/.exec(line);
    if (match === null) continue;
    const [, id = '', at = '', level = '', rule = '', message = ''] = match;
    found.set(id, [...(found.get(id) ?? []), { line: Number(at), level, rule, message }]);
  }
  return found;
}

function agreementOf(problems: readonly Problem[], findings: readonly CheckFinding[]): { agreement: Agreement; expected: string[] } {
  // A dialect's rule is a warning (its truth depends on the image's sh), and the harness runs sh as dash, where
  // what it warns of happens: it counts as the error there.
  const errors = findings
    .filter((finding) => finding.level === 'error' || (DIALECT_RULES as readonly string[]).includes(finding.rule))
    .map((finding) => finding.rule);
  const expected = [...new Set(problems.flatMap((problem) => PROBLEMS[problem] as readonly string[]))];
  if (problems.length === 0) return { agreement: errors.length === 0 ? 'agrees' : 'false-error', expected };
  if (errors.length === 0) return { agreement: 'missed', expected };
  const anyError = problems.some((problem) => PROBLEMS[problem].length === 0);
  return { agreement: anyError || errors.some((rule) => expected.includes(rule)) ? 'agrees' : 'other-rule', expected };
}

/** Runs every script in both shells with both outcomes, checks every manifest, and compares. */
export async function prove(scripts: readonly GeneratedScript[], options: { pods?: number; keep?: boolean } = {}): Promise<Proven[]> {
  const staged = stage();
  try {
    const containers = new Map(scripts.map((script) => [script.id, containerOf(script.manifest)]));
    const planned = scripts.flatMap((script) =>
      SHELLS.flatMap((shell) =>
        OUTCOMES.map((outcome): Planned => {
          const container = containers.get(script.id) as Container;
          return {
            id: `${script.id}.${shell}.${outcome}`,
            lacks: container.lacks,
            busyboxWget: container.busyboxWget,
            argv: withShell(container.argv, shell, container.lacks, staged),
            env: container.env,
            shares: container.sharesProcesses,
            status: outcome === 'success' ? 0 : FAILED,
          };
        }),
      ),
    );
    const [results, findings] = await Promise.all([runAll(staged, planned, options.pods ?? availableParallelism() * 2), checkAll(scripts)]);
    return scripts.map((script): Proven => {
      const runs = Object.fromEntries(
        SHELLS.map((shell) => [
          shell,
          Object.fromEntries(OUTCOMES.map((outcome) => [outcome, runOf(results.get(`${script.id}.${shell}.${outcome}`))])),
        ]),
      ) as Record<ShellName, Record<JobOutcome, Run>>;
      const shell: ShellName = script.truth ?? (script.shell === 'sh' ? 'dash' : 'bash');
      const problems = problemsOf(script.policy, runs[shell].success, runs[shell].failure);
      const others = SHELLS.filter((one) => one !== shell).map(
        (one) => [one, problemsOf(script.policy, runs[one].success, runs[one].failure)] as const,
      );
      const otherProblems = Object.fromEntries(others.filter(([, found]) => found.join() !== problems.join()));
      const found = findings.get(script.id) ?? [];
      return {
        script,
        shell,
        runs,
        problems,
        ...(Object.keys(otherProblems).length === 0 ? {} : { otherProblems }),
        findings: found,
        ...agreementOf(problems, found),
      };
    });
  } finally {
    if (options.keep !== true) rmSync(staged.dir, { recursive: true, force: true });
  }
}

/** One run in a few words: its status and where its quit came. */
const runText = (run: Run): string =>
  `exit ${run.exit}${run.timedOut ? ' (hung)' : ''}, ${run.quit === 'none' ? 'no quit' : `quit ${run.quit}`}`;

/** A disagreement as the model's author reads it: the script, what each shell did, the truth, --check's findings. */
export function describe(proven: Proven): string {
  const { script } = proven;
  const lines = [
    `${script.id} (${script.shell} -> ${proven.shell}, restartPolicy ${script.policy}): ${proven.agreement}`,
    `  shapes: ${script.shapes.join(', ')}`,
    ...SHELLS.map(
      (shell) =>
        `  ${shell.padEnd(4)}: job succeeds: ${runText(proven.runs[shell].success)}; job fails: ${runText(proven.runs[shell].failure)}${shell === proven.shell ? '  <- the truth' : ''}`,
    ),
    `  truth: ${proven.problems.length === 0 ? 'works' : `broken: ${proven.problems.join(', ')}`}${Object.entries(
      proven.otherProblems ?? {},
    )
      .map(([shell, found]) => ` (in ${shell}: ${found.length === 0 ? 'works' : found.join(', ')})`)
      .join('')}`,
    `  expected: ${proven.problems.length === 0 ? 'no error' : proven.expected.length === 0 ? 'any error' : `an error of ${proven.expected.join(' or ')}`}`,
    ...(proven.findings.length === 0
      ? ['  --check: nothing']
      : proven.findings.map(
          (finding) => `  --check: line ${finding.line}: ${finding.level}: ${finding.rule}: ${finding.message.slice(0, 160)}`,
        )),
    '  manifest:',
    ...script.manifest
      .trimEnd()
      .split('\n')
      .map((line) => `    | ${line}`),
  ];
  return lines.join('\n');
}
