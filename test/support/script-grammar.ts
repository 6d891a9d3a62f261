// Job scripts for a pod with a classic Istio sidecar, made from the shapes people write, each in a Job manifest the
// way people write those: a job command, its status saved or not, a quit of the sidecar (curl, wget, busybox wget,
// pilot-agent, a Python or Node one-liner, a signal to its process), put together with `&&`, `;`, `|| true`, traps,
// set -e, pipelines, functions, subshells, `$(...)`, `& wait`, `exit` in its forms, `if`/`case` after the quit, a
// readiness wait first, a program in front of the shell. The same seed gives the same scripts. The ports, paths and
// marker names come from src/config/kinds.ts; the job is one of JOB_PROGRAMS, which the proof's pod stands in for.

import { PROGRAM } from '../../src/bundle/self.ts';
import { ISTIO, istioPort } from '../../src/config/kinds.ts';
import { STATUS_ANNOTATION } from '../../src/config/mode.ts';
import { OPTIONS, STATUS_VARIABLE } from '../../src/config/options.ts';
import { seeded } from './scenarios.ts';

export type Shell = 'sh' | 'bash';
export type Policy = 'Never' | 'OnFailure';

export interface GeneratedScript {
  readonly id: string;
  /** The shell the manifest runs the script with (sh is Debian's dash). */
  readonly shell: Shell;
  readonly policy: Policy;
  readonly script: string;
  readonly manifest: string;
  /** The shapes it was made of, for a reader of the disagreements. */
  readonly shapes: readonly string[];
  /** The shell whose runs are the truth, where not sh as dash or bash as itself (sh in an Alpine image: ash). */
  readonly truth?: 'dash' | 'bash' | 'ash';
}

/** The scripts the proof makes unless told otherwise, and from which seed. */
export const DEFAULT_SEED = 20261203;
export const DEFAULT_COUNT = 300;

/** The programs the job's command line starts; the proof's pod stands in for each. */
export const JOB_PROGRAMS = ['migrate', 'backup-db', 'generate-report', 'sync-users', 'run-job.sh'] as const;
export const JOBS = ['migrate --to latest', 'backup-db --full', 'generate-report --since 24h', 'sync-users', './run-job.sh'];

/** Choices drawn from the seeded generator of scenarios.ts: the same seed, the same scripts. */
export class Random {
  private readonly draw: () => number;
  constructor(seed: number) {
    this.draw = seeded(seed);
  }
  next(): number {
    return this.draw();
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  /** One of the weighted items. */
  weighted<T>(items: readonly (readonly [number, T])[]): T {
    let left = this.next() * items.reduce((sum, [weight]) => sum + weight, 0);
    for (const [weight, item] of items) if ((left -= weight) < 0) return item;
    return (items.at(-1) as readonly [number, T])[1];
  }
}

/** A word quoted for the shell as people quote one: single quotes where it has none, else double quotes. */
function quote(text: string): string {
  if (!text.includes("'")) return `'${text}'`;
  if (!/["$`\\]/.test(text)) return `"${text}"`;
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** A quit of the sidecar: its command, what it needs first, and what it needs of the pod. */
interface Quit {
  readonly text: string;
  readonly shapes: readonly string[];
  readonly setup?: string;
  readonly env?: { readonly name: string; readonly value: string };
  readonly sharesProcesses?: boolean;
}

const STATUS_PORT = istioPort('status');
const HEALTH_PORT = istioPort('health');
const ADMIN_PORT = istioPort('envoy-admin');
const QUIT_PATH = ISTIO.quit.path;
const READY_PATH = ISTIO.ready?.path ?? '';
const PROCESSES = ISTIO.template.processes;

function quitUrl(r: Random, port: number, scheme: boolean): string {
  return `${scheme ? 'http://' : ''}${r.pick(['localhost', '127.0.0.1'])}:${port}${QUIT_PATH}`;
}

function quitOf(r: Random, shell: Shell): Quit {
  // Where it goes: pilot-agent's quit, mostly; Envoy's health listener or admin port sometimes.
  const [port, aim] = r.weighted<readonly [number, string]>([
    [16, [STATUS_PORT, 'status-port']],
    [1, [HEALTH_PORT, 'health-port']],
    [1, [ADMIN_PORT, 'admin-port']],
  ]);
  const form = r.weighted([
    [10, 'curl'],
    [1, 'curl-get'],
    [3, 'wget'],
    [1, 'wget-get'],
    [2, 'busybox-wget'],
    [1, 'url-variable'],
    [1, 'url-env'],
    [2, 'pilot-agent'],
    [1, 'python'],
    [1, 'node'],
    [2, 'signal'],
  ] as const);
  switch (form) {
    case 'curl': {
      const url = quitUrl(r, port, r.chance(0.85));
      const flags = r.pick([
        '-fsS -X POST',
        '-s -X POST',
        '-sf -XPOST',
        '-sfXPOST',
        '-fsSX POST',
        '--fail --silent --show-error -X POST',
        '--request POST',
        '-s --request=POST',
        "-sf -d ''",
        '-s --data ""',
        '-fsS --max-time 5 -X POST',
        '-X POST',
      ]);
      return { text: `curl ${flags} ${url}`, shapes: ['curl', aim, ...(flags.includes('=POST') ? ['curl-request='] : [])] };
    }
    case 'curl-get':
      return { text: `curl ${r.pick(['-s', '-fsS', '-sf'])} ${quitUrl(r, port, true)}`, shapes: ['curl', 'get', aim] };
    case 'wget': {
      const flags = r.pick(["-q -O- --post-data=''", '-qO- --post-data ""', '-q -O /dev/null --post-data=', '-q --method=POST -O-']);
      return { text: `wget ${flags} ${quitUrl(r, port, true)}`, shapes: ['wget', aim] };
    }
    case 'wget-get':
      return { text: `wget -q -O- ${quitUrl(r, port, true)}`, shapes: ['wget', 'get', aim] };
    case 'busybox-wget':
      return { text: `busybox wget -q -O- --post-data='' ${quitUrl(r, port, true)}`, shapes: ['busybox-wget', aim] };
    case 'url-variable': {
      const name = r.pick(['QUIT_URL', 'ISTIO_QUIT', 'SIDECAR_QUIT_URL']);
      return {
        text: `curl -fsS -X POST "$${name}"`,
        setup: `${name}=${quitUrl(r, port, true)}`,
        shapes: ['curl', 'url-variable', aim],
      };
    }
    case 'url-env': {
      const name = r.pick(['QUIT_URL', 'ISTIO_QUIT_URL']);
      return { text: `curl -fsS -X POST "$${name}"`, env: { name, value: quitUrl(r, port, true) }, shapes: ['curl', 'url-env', aim] };
    }
    case 'pilot-agent':
      return { text: `pilot-agent request POST ${r.pick(['quitquitquit', QUIT_PATH])}`, shapes: ['pilot-agent'] };
    case 'python': {
      const url = quitUrl(r, port, true);
      return {
        text: r.pick([
          `python3 -c "import urllib.request as r; r.urlopen(r.Request('${url}', method='POST'))"`,
          `python3 -c "import urllib.request; urllib.request.urlopen('${url}', data=b'')"`,
        ]),
        shapes: ['python', aim],
      };
    }
    case 'node':
      return { text: `node -e "fetch('${quitUrl(r, port, true)}', { method: 'POST' })"`, shapes: ['node', aim] };
    case 'signal': {
      const process = r.pick(PROCESSES);
      const shares = r.chance(0.8);
      const text = r.pick([`pkill ${process}`, `pkill -INT ${process}`, `kill $(pidof ${process})`, `kill -TERM $(pgrep ${process})`]);
      return { text, sharesProcesses: shares, shapes: ['signal', shares ? 'shares-processes' : 'own-processes'] };
    }
  }
  void shell;
  throw new Error('no such quit');
}

/** A trap that runs ACTION: in quotes where they read well, else in a function, as people write it. */
function trapped(action: string, signals: string): string[] {
  if (!(action.includes("'") && /["$`\\]/.test(action))) return [`trap ${quote(action)} ${signals}`];
  return [`stop_sidecar() { ${action}; }`, `trap stop_sidecar ${signals}`];
}

/** How the quit's failure is handled where it is written. */
function guarded(r: Random, quit: string): string {
  return `${quit}${r.weighted([
    [6, ''],
    [3, ' || true'],
    [1, ' >/dev/null 2>&1'],
    [1, ' || echo "could not stop the sidecar"'],
    [1, ' || :'],
  ])}`;
}

/** What a script is made of, picked once. */
interface Parts {
  readonly r: Random;
  readonly shell: Shell;
  readonly job: string;
  readonly quit: string;
  readonly variable: string;
  /** Whether set -e is already on from the script's first lines. */
  readonly errexit: boolean;
}

type Statements = string[];

function exitWith(p: Parts, shapes: string[]): string {
  const v = p.variable;
  const form = p.r.weighted([
    [6, `exit $${v}`],
    [3, `exit "$${v}"`],
    [1, `exit \${${v}}`],
    [1, 'exit'],
    [1, 'exit $?'],
    [1, 'exit 0'],
  ]);
  if (!form.includes(v)) shapes.push(`exit-without-status:${form}`);
  return form;
}

function checkAfter(p: Parts): string {
  const v = p.variable;
  return p.r.pick([
    `if [ $${v} -ne 0 ]; then exit $${v}; fi`,
    `if [ "$${v}" != "0" ]; then exit 1; fi`,
    `[ $${v} -eq 0 ] || exit $${v}`,
    `case $${v} in 0) ;; *) exit $${v} ;; esac`,
    `test "$${v}" -eq 0 || exit 1`,
  ]);
}

/**
 * The body of the script: the job, its status, the quit, the end; each row its weight, its shape's name, and the
 * statements (a row of variants makes only the one it picks, so its shapes are the script's own).
 */
const STRUCTURES: readonly (readonly [number, string, (p: Parts, shapes: string[]) => Statements])[] = [
  [6, 'and-quit', (p) => [`${p.job} && ${p.quit}`]],
  [5, 'then-quit', (p) => [p.job, p.quit]],
  [10, 'saved-status', (p, s) => [p.job, `${p.variable}=$?`, p.quit, exitWith(p, s)]],
  [
    3,
    'saved-after-echo',
    (p, s) =>
      p.r.chance(0.5)
        ? [p.job, `echo "job finished"`, `${p.variable}=$?`, p.quit, exitWith(p, s)]
        : [p.job, `${p.variable}=$(echo $?)`, `echo "job finished with $${p.variable}"`, p.quit, exitWith(p, s)],
  ],
  [
    8,
    'exit-trap',
    (p, s) => {
      const signals = p.r.weighted([
        [6, 'EXIT'],
        [2, 'EXIT TERM INT'],
        [1, '0'],
        [1, 'EXIT INT TERM HUP'],
      ]);
      const form = p.r.weighted([
        [4, 'plain'],
        [2, 'keep'],
        [1, 'zero'],
        [3, 'function'],
      ] as const);
      s.push(`trap-${form}`);
      if (form === 'function') return [`cleanup() { ${p.quit}; }`, `trap cleanup ${signals}`, p.job];
      const action = form === 'plain' ? p.quit : form === 'keep' ? `rc=$?; ${p.quit}; exit $rc` : `${p.quit}; exit 0`;
      return [...trapped(action, signals), p.job];
    },
  ],
  [
    3,
    'signal-trap',
    (p) => {
      const signals = p.r.pick(['TERM', 'INT TERM', 'SIGTERM SIGINT', 'HUP INT TERM']);
      return [...trapped(p.quit, signals), p.job, ...(p.r.chance(0.5) ? ['echo "done"'] : [])];
    },
  ],
  [2, 'quit-first', (p, s) => (p.r.chance(0.5) ? [p.quit, p.job] : [p.quit, p.job, `${p.variable}=$?`, exitWith(p, s)])],
  [
    5,
    'if-job',
    (p) =>
      p.r.pick([
        [`if ${p.job}; then ${p.quit}; else ${p.variable}=$?; ${p.quit}; exit $${p.variable}; fi`],
        [`if ! ${p.job}; then ${p.quit}; exit 1; fi`, p.quit],
        [`if ${p.job}; then echo "job succeeded"; else echo "job failed"; fi`, p.quit],
      ]),
  ],
  [8, 'status-checked-after-quit', (p) => [p.job, `${p.variable}=$?`, p.quit, checkAfter(p), ...(p.r.chance(0.3) ? ['echo "done"'] : [])]],
  [3, 'or-true', (p) => [`${p.job} || true`, p.quit]],
  [4, 'or-saved', (p, s) => [`${p.variable}=0`, `${p.job} || ${p.variable}=$?`, p.quit, exitWith(p, s)]],
  [2, 'and-or-saved', (p, s) => [`${p.job} && ${p.variable}=0 || ${p.variable}=$?`, p.quit, exitWith(p, s)]],
  [
    4,
    'pipeline',
    (p, s) => {
      const pipefail = p.shell === 'bash' && p.r.chance(0.5);
      const status = p.shell === 'bash' && !pipefail && p.r.chance(0.4) ? `\${PIPESTATUS[0]}` : '$?';
      s.push(pipefail ? 'pipefail' : status === '$?' ? 'no-pipefail' : 'pipestatus');
      return [...(pipefail ? ['set -o pipefail'] : []), `${p.job} | tee job.log`, `${p.variable}=${status}`, p.quit, exitWith(p, s)];
    },
  ],
  [
    4,
    'background',
    (p, s) =>
      p.r.pick([
        () => [`${p.job} &`, 'wait $!', `${p.variable}=$?`, p.quit, exitWith(p, s)],
        () => [`${p.job} &`, 'pid=$!', 'wait "$pid"', `${p.variable}=$?`, p.quit, exitWith(p, s)],
        () => [`${p.job} & wait`, `${p.variable}=$?`, p.quit, exitWith(p, s)],
      ])(),
  ],
  [
    4,
    'subshell',
    (p, s) =>
      p.r.pick([
        () => [`(${p.job})`, `${p.variable}=$?`, p.quit, exitWith(p, s)],
        () => [`(${p.job}; ${p.quit})`],
        () => [`(set -e; ${p.job}) && ${p.quit}`],
      ])(),
  ],
  [
    3,
    'command-substitution',
    (p, s) =>
      p.r.pick([
        () => [`out=$(${p.job})`, `${p.variable}=$?`, 'echo "$out"', p.quit, exitWith(p, s)],
        () => [`echo "$(${p.job})"`, `${p.variable}=$?`, p.quit, exitWith(p, s)],
      ])(),
  ],
  [
    4,
    'function',
    (p, s) =>
      p.r.pick([
        () => [`run_job() { ${p.job}; }`, 'run_job', `${p.variable}=$?`, p.quit, exitWith(p, s)],
        () => [`stop_sidecar() { ${p.quit}; }`, p.job, `${p.variable}=$?`, 'stop_sidecar', exitWith(p, s)],
        () => [`main() { ${p.job} && ${p.quit}; }`, 'main'],
      ])(),
  ],
  [
    4,
    'nested-shell',
    (p, s) => {
      if (p.r.chance(0.3)) return [`sh -c ${quote(p.job)}`, `${p.variable}=$?`, p.quit, exitWith(p, s)];
      const inner = p.r.pick(['sh', 'bash', 'exec sh', 'exec bash']);
      s.push(`inner:${inner}`);
      return [`${inner} -c ${quote(p.r.chance(0.5) ? `${p.job} && ${p.quit}` : `${p.job}; rc=$?; ${p.quit}; exit $rc`)}`];
    },
  ],
  [2, 'exec', (p) => (p.r.chance(0.6) ? [...trapped(p.quit, 'EXIT'), `exec ${p.job}`] : [`exec ${p.job}`])],
  [2, 'err-trap', (p) => [...(p.errexit ? [] : ['set -e']), ...trapped(p.quit, 'ERR'), p.job, p.quit]],
  [3, 'set+e', (p, s) => ['set +e', p.job, `${p.variable}=$?`, 'set -e', p.quit, exitWith(p, s)]],
  [4, 'quit-on-success', (p) => [p.job, `${p.variable}=$?`, `if [ $${p.variable} -eq 0 ]; then ${p.quit}; fi`, `exit $${p.variable}`]],
];

const READINESS = [
  `until curl -fsI http://localhost:${HEALTH_PORT}${READY_PATH}; do echo "Waiting for the sidecar"; sleep 1; done`,
  `while ! curl -s -f http://127.0.0.1:${HEALTH_PORT}${READY_PATH} > /dev/null; do sleep 1; done`,
  `until wget -q --spider http://localhost:${HEALTH_PORT}${READY_PATH}; do sleep 1; done`,
  'pilot-agent wait',
];

const ERREXIT: readonly (readonly [number, string])[] = [
  [4, 'set -e'],
  [2, 'set -ex'],
  [1, 'set -o errexit'],
  [2, 'set -eu'],
];

/** Statements on one line, as a flow string is often written, or one a line. */
function join(statements: readonly string[], oneLine: boolean): string {
  if (!oneLine) return `${statements.join('\n')}\n`;
  return statements.reduce((text, next) => (text === '' ? next : `${text}${text.endsWith('&') ? ' ' : '; '}${next}`), '');
}

/** The container's command and args as written in YAML, and the shell's options. */
function containerLines(r: Random, shell: Shell, script: string, oneLine: boolean, shapes: string[]): string[] {
  const path = r.chance(0.5) ? `/bin/${shell}` : shell;
  const options = r.weighted([[8, '-c'], [2, '-ec'], ...(shell === 'bash' ? ([[1, '-euo pipefail -c']] as const) : [])]);
  if (options !== '-c') shapes.push(`shell${options.replace(' -c', '')}`);
  const prefix = r.weighted([
    [14, []],
    [2, ['timeout', '60']],
    [1, ['env', 'TZ=UTC']],
    [1, ['nice', '-n', '10']],
    [1, ['tini', '--']],
    [1, ['dumb-init', '--']],
  ]);
  if (prefix.length > 0) shapes.push(`in-front:${prefix[0]}`);
  const shellWords = [...prefix, path, ...options.split(' ')];
  const flow = (words: readonly string[]): string => `[${words.map((word) => JSON.stringify(word)).join(', ')}]`;
  const block = (indent: string): string[] => [
    `${indent}- |`,
    ...script
      .trimEnd()
      .split('\n')
      .map((line) => `${indent}  ${line}`),
  ];
  const form = oneLine ? r.pick(['flow', 'command-args', 'shell-args'] as const) : r.pick(['flow', 'block-command', 'block-args'] as const);
  shapes.push(`manifest:${form}`);
  switch (form) {
    case 'flow':
      return [`        command: ${flow([...shellWords, script])}`];
    case 'command-args':
      return [`        command: ${flow(shellWords)}`, `        args: ${flow([script])}`];
    case 'shell-args':
      return [
        `        command: ${flow(shellWords.slice(0, prefix.length + 1))}`,
        `        args: ${flow([...shellWords.slice(prefix.length + 1), script])}`,
      ];
    case 'block-command':
      return [
        '        command:',
        ...shellWords.map((word) => `        - ${/^\d+$/.test(word) ? `"${word}"` : word}`),
        ...block('        '),
      ];
    case 'block-args':
      return [`        command: ${flow(shellWords)}`, '        args:', ...block('        ')];
  }
}

/** The Job around a script: an Istio sidecar asked for by label or annotation, as the corpus shows, or by its namespace (none). */
function manifestOf(
  where: 'labels' | 'annotations' | 'none',
  id: string,
  policy: Policy,
  shares: boolean,
  container: readonly string[],
  image = `registry.example/${id}:1.0`,
): string {
  const marker = (where === 'labels' ? ISTIO.template.inject?.labels[0] : ISTIO.template.inject?.annotations[0]) ?? '';
  return [
    'apiVersion: batch/v1',
    'kind: Job',
    'metadata:',
    `  name: ${id}`,
    'spec:',
    '  backoffLimit: 2',
    '  template:',
    ...(where === 'none' ? [] : ['    metadata:', `      ${where}:`, `        ${marker}: "true"`]),
    '    spec:',
    `      restartPolicy: ${policy}`,
    ...(shares ? ['      shareProcessNamespace: true'] : []),
    '      containers:',
    '      - name: job',
    `        image: ${image}`,
    ...container,
    '',
  ].join('\n');
}

/** A container's env entries. */
const envLines = (entries: readonly string[]): string[] => ['        env:', ...entries.map((line) => `        ${line}`)];

/** How the wrapper's quit policy is set: flags on its command line, or its variable. */
interface WrapperQuit {
  readonly flags: readonly string[];
  readonly env?: string;
}

/**
 * SCRIPT under this project's wrapper, as the README has it (the downward API's sidecar status), its quit policy
 * set or not: the wrapper waits, runs the shell, and quits the sidecar itself.
 */
export function wrapperScript(id: string, shell: Shell, policy: Policy, script: string, quit: WrapperQuit, split = false): GeneratedScript {
  const env = envLines([
    `- name: ${STATUS_VARIABLE}`,
    `  valueFrom: {fieldRef: {fieldPath: "metadata.annotations['${STATUS_ANNOTATION}']"}}`,
    ...(quit.env === undefined ? [] : [`- name: ${OPTIONS.quit.env}`, `  value: ${quit.env}`]),
  ]);
  const flow = (words: readonly string[]): string => `[${words.map((word) => JSON.stringify(word)).join(', ')}]`;
  const command = [PROGRAM, ...quit.flags, '--'];
  const container = split
    ? [`        command: ${flow(command)}`, `        args: ${flow([shell, '-c', script])}`]
    : [`        command: ${flow([...command, shell, '-c', script])}`];
  const named = quit.env === undefined ? quit.flags.join(' ') || 'default' : `${OPTIONS.quit.env}=${quit.env}`;
  return {
    id,
    shell,
    policy,
    script,
    shapes: [`wrapper:${named}`],
    manifest: manifestOf('labels', id, policy, false, [...env, ...container]),
  };
}

function wrapped(r: Random, id: string, shell: Shell, policy: Policy, job: string): GeneratedScript {
  const flag = `--${OPTIONS.quit.flag}`;
  const quit = r.weighted<WrapperQuit>([
    [4, { flags: [] }],
    [1, { flags: [flag, 'never'] }],
    [1, { flags: [`${flag}=never`] }],
    [1, { flags: [flag, 'on-success'] }],
    [1, { flags: [`${flag}=on-success`] }],
    [1, { flags: [], env: 'never' }],
    [1, { flags: [], env: 'on-success' }],
  ]);
  return wrapperScript(id, shell, policy, r.pick([job, `echo "Starting job"; ${job}`, `set -e; ${job}`]), quit, r.chance(0.5));
}

/** One script and its manifest. */
export function generateScript(seed: number, index: number): GeneratedScript {
  const r = new Random(seed ^ Math.imul(index + 1, 0x9e3779b1));
  const id = `proof-${String(index).padStart(3, '0')}`;
  const shell: Shell = r.chance(0.6) ? 'sh' : 'bash';
  const policy: Policy = r.chance(0.7) ? 'Never' : 'OnFailure';
  if (r.chance(0.04)) return wrapped(r, id, shell, policy, r.pick(JOBS));
  const quit = quitOf(r, shell);
  const shapes = [...quit.shapes];
  const job = r.pick(JOBS);
  const guardedQuit = guarded(r, quit.text);
  const variable = r.pick(['rc', 'rc', 'status', 'exit_code', 'RC', 'code']);
  const statements: string[] = [];
  const errexit = r.chance(0.3);
  if (errexit) {
    const setE = shell === 'bash' && r.chance(0.3) ? 'set -euo pipefail' : r.weighted(ERREXIT);
    statements.push(setE);
    shapes.push(setE);
  } else if (shell === 'sh' && r.chance(0.03)) {
    statements.push('set -eo pipefail');
    shapes.push('sh-pipefail');
  }
  if (quit.setup !== undefined) statements.push(quit.setup);
  if (r.chance(0.3)) {
    statements.push(r.pick(READINESS));
    shapes.push('readiness-wait');
  }
  if (r.chance(0.2)) statements.push(r.pick(['echo "Starting job"', 'echo "Running $(date)"']));
  const [, name, structure] = r.weighted(STRUCTURES.map((row) => [row[0], row] as const));
  shapes.push(name);
  statements.push(...structure({ r, shell, job, quit: guardedQuit, variable, errexit }, shapes));
  const oneLine = r.chance(0.45);
  const script = join(statements, oneLine);
  const env = quit.env === undefined ? [] : envLines([`- name: ${quit.env.name}`, `  value: ${JSON.stringify(quit.env.value)}`]);
  const container = [...env, ...containerLines(r, shell, script, oneLine, shapes)];
  const where = r.pick(['labels', 'annotations'] as const);
  return { id, shell, policy, script, shapes, manifest: manifestOf(where, id, policy, quit.sharesProcesses === true, container) };
}

/** A script written by hand, in a Job as `command: [PREFIX..., SHELL, "-c", SCRIPT]`. */
export function writtenScript(
  id: string,
  shell: Shell,
  policy: Policy,
  script: string,
  options: {
    readonly prefix?: readonly string[];
    readonly sharesProcesses?: boolean;
    /** The image, and the shell its sh is (an Alpine image's: ash). */
    readonly image?: readonly [string, 'dash' | 'ash'];
    /** No marker asks for the sidecar: its namespace injects it, and the script's quit is the only sign of it. */
    readonly unmarked?: boolean;
  } = {},
): GeneratedScript {
  const command = `        command: [${[...(options.prefix ?? []), shell, '-c', script].map((word) => JSON.stringify(word)).join(', ')}]`;
  return {
    id,
    shell,
    policy,
    script,
    shapes: ['written'],
    ...(options.image === undefined || shell === 'bash' ? {} : { truth: options.image[1] }),
    manifest: manifestOf(
      options.unmarked === true ? 'none' : 'labels',
      id,
      policy,
      options.sharesProcesses === true,
      [command],
      options.image?.[0],
    ),
  };
}

/** COUNT scripts from SEED. */
export function generateScripts(seed: number, count: number): GeneratedScript[] {
  return Array.from({ length: count }, (_, index) => generateScript(seed, index));
}

/** The scripts of the variants the proof makes besides, unless told otherwise. */
export const DEFAULT_VARIANTS = 150;

/** Images and what their sh is: Debian's dash, Alpine's ash, and one the manifest does not say (dash assumed). */
const IMAGES: readonly (readonly [number, string, 'dash' | 'ash'])[] = [
  [2, 'debian:12', 'dash'],
  [2, 'alpine:3.20', 'ash'],
  [1, 'python:3.12-alpine', 'ash'],
  [2, 'registry.example/app:1.0', 'dash'],
];

/** Lines of bash's that other shells read otherwise (src/manifest/script/dialect.ts), each in a job's script. */
const BASHISMS: readonly string[] = [
  '[[ -f /tmp/done ]] && echo done',
  'flags=(--all --verbose)',
  'cat <<< "job finished"',
  'echo "status ${rc/0/zero}"',
  '[ "$rc" == 0 ] && echo ok',
  'function note { echo "note: $1"; }',
  'source /dev/null',
  'declare -i tries=1',
  'local note=done',
  'let tries=1',
  'cat <(echo done) >/dev/null',
  'set -o errtrace',
  'echo "${rc:0:1}"',
  'echo "done" &> /dev/null',
  'echo "${HOSTNAME^^}"',
];

/** Quits as scripts write them, right and wrong: paths, schemes and methods the sidecar answers or not, defaults. */
const QUIT_VARIANTS: readonly (readonly [number, string, string])[] = [
  [6, 'right', `curl -fsS -X POST http://localhost:${STATUS_PORT}${QUIT_PATH}`],
  [1, 'path-short', `curl -fsS -X POST http://localhost:${STATUS_PORT}/quit`],
  [1, 'path-upper', `curl -fsS -X POST http://127.0.0.1:${STATUS_PORT}${QUIT_PATH.toUpperCase()}`],
  [1, 'path-slash', `curl -fsS -X POST http://localhost:${STATUS_PORT}${QUIT_PATH}/`],
  [1, 'path-query', `curl -fsS -X POST 'http://localhost:${STATUS_PORT}${QUIT_PATH}?now=1'`],
  [1, 'https', `curl -fsSk -X POST https://localhost:${STATUS_PORT}${QUIT_PATH}`],
  [1, 'method-lower', `curl -fsS -X post http://localhost:${STATUS_PORT}${QUIT_PATH}`],
  [1, 'request-lower', `curl -fsS --request post http://localhost:${STATUS_PORT}${QUIT_PATH}`],
  [1, 'get-data', `curl -fsS -G -d now=1 http://localhost:${STATUS_PORT}${QUIT_PATH}`],
  [1, 'get-x-post', `curl -fsS -G -X POST http://localhost:${STATUS_PORT}${QUIT_PATH}`],
  [2, 'url-default', `curl -fsS -X POST "\${QUIT_URL:-http://127.0.0.1:${STATUS_PORT}${QUIT_PATH}}"`],
  [2, 'port-default', `curl -fsS -X POST "http://localhost:\${STATUS_PORT:-${STATUS_PORT}}${QUIT_PATH}"`],
  [1, 'port-unset', `curl -fsS -X POST "http://localhost:\${STATUS_PORT-}${QUIT_PATH}"`],
];

/** How the quit is guarded: not at all, or by a variable the container sets or not. */
const GUARDS: readonly (readonly [number, string, (quit: string) => string, string | undefined])[] = [
  [6, 'unguarded', (quit) => quit, undefined],
  [1, 'guard-unset', (quit) => `[ -n "$ISTIO_ENABLED" ] && ${quit}`, undefined],
  [1, 'guard-set', (quit) => `[ -n "$ISTIO_ENABLED" ] && ${quit}`, 'ISTIO_ENABLED'],
  [1, 'if-unset', (quit) => `if [ "$MESH" = istio ]; then ${quit}; fi`, undefined],
  [1, 'if-set', (quit) => `if [ "$MESH" = istio ]; then ${quit}; fi`, 'MESH'],
];

/**
 * One script of the variants: sh in an image of known or unknown sh (or bash), maybe a line of bash's, maybe
 * `set -u` and an unset variable, a quit right or wrong, guarded by a variable or not, the status kept or not.
 */
export function generateVariant(seed: number, index: number): GeneratedScript {
  const r = new Random(seed ^ Math.imul(index + 7919, 0x85ebca6b));
  const id = `variant-${String(index).padStart(3, '0')}`;
  const shell: Shell = r.chance(0.8) ? 'sh' : 'bash';
  const policy: Policy = r.chance(0.8) ? 'Never' : 'OnFailure';
  const [, image, sh] = r.weighted(IMAGES.map((row) => [row[0], row] as const));
  const [, quitShape, quitText] = r.weighted(QUIT_VARIANTS.map((row) => [row[0], row] as const));
  const [, guardShape, guard, envName] = r.weighted(GUARDS.map((row) => [row[0], row] as const));
  const shapes = [`image:${image}`, `quit:${quitShape}`, guardShape];
  const job = r.pick(JOBS);
  const statements: string[] = [];
  if (r.chance(0.2)) {
    statements.push('set -u');
    shapes.push('set-u');
  }
  const bashism = r.chance(0.6) ? r.pick(BASHISMS) : undefined;
  if (bashism !== undefined) shapes.push(`bash:${bashism}`);
  const unset = r.chance(0.1) ? 'echo "mode: $JOB_MODE"' : undefined;
  if (unset !== undefined) shapes.push('unset-variable');
  const quit = guard(quitText);
  const form = r.weighted([
    [5, 'saved-status'],
    [2, 'and-quit'],
    [2, 'exit-trap'],
  ] as const);
  shapes.push(form);
  const middle = [...(bashism === undefined ? [] : [bashism]), ...(unset === undefined ? [] : [unset])];
  if (form === 'saved-status') statements.push(job, 'rc=$?', ...middle, quit, r.pick(['exit $rc', 'exit "$rc"']));
  else if (form === 'and-quit') statements.push(...middle, `${job} && ${quit}`);
  else statements.push(`cleanup() { ${quit}; }`, 'trap cleanup EXIT', ...middle, job);
  const script = join(statements, false);
  const env = envName === undefined ? [] : envLines([`- name: ${envName}`, `  value: ${envName === 'MESH' ? 'istio' : '"1"'}`]);
  const container = [...env, ...containerLines(r, shell, script, false, shapes)];
  return {
    id,
    shell,
    policy,
    script,
    shapes,
    truth: shell === 'bash' ? 'bash' : sh,
    manifest: manifestOf('labels', id, policy, false, container, image),
  };
}

/** COUNT variants from SEED. */
export function generateVariants(seed: number, count: number): GeneratedScript[] {
  return Array.from({ length: count }, (_, index) => generateVariant(seed, index));
}
