// --check: the recipes for a Job behind a classic Istio sidecar that cannot work, told from the manifest alone.
// Each rule has an id that CI configurations grep for, and a level: an error is a pod that hangs or a Job that
// reports the wrong outcome; a warning is a recipe that works only sometimes. The facts behind each message are
// Istio's and Kubernetes' own (the README's "What does not work, and why").

import { type Node, isMap, type Pair, type YAMLMap } from 'yaml';
import { PROXY_CONTAINER } from '../mode.ts';
import { OPTIONS } from '../options-table.ts';
import { PROGRAM } from '../self.ts';
import { kindNamed } from '../sidecar-kinds.ts';
import { entries, get, getIn, items, lineOf, pairOf, scalars, type Source, text } from './source.ts';
import {
  argv,
  containerStrings,
  INJECT_KEY,
  jobContainers,
  prospect,
  QUIT_PATH,
  quitsItself,
  runsWrapper,
  type Workload,
  workloads,
} from './workloads.ts';

export const RULES = {
  'prestop-quit': 'error',
  'misplaced-annotation': 'error',
  'exit-on-job-completion': 'error',
  'exit-code-lost': 'error',
  'proxy-command-override': 'error',
  'onfailure-quit-always': 'error',
  /** An error when the pod template asks for injection, a warning when it may come from the namespace. */
  unwrapped: 'error|warning',
  'quit-admin-port': 'warning',
  'shell-quit': 'warning',
  'pod-failure-policy-container': 'warning',
  'exit-on-zero-connections': 'warning',
} as const satisfies Record<string, Level | 'error|warning'>;

type Level = 'error' | 'warning';
export type RuleId = keyof typeof RULES;

export interface Finding {
  readonly line: number;
  readonly level: Level;
  readonly rule: RuleId;
  readonly message: string;
}

/** What to run instead, said by most rules. */
const WRAP = 'run the job\'s command under istio-job-run ("istio-job-run --inject FILE" rewrites the manifest)';
const ISTIO = kindNamed('istio');
/** pilot-agent's port for /quitquitquit. */
const STATUS_PORT = ISTIO.listeners[ISTIO.quit.listener]?.port ?? 0;
/** Envoy's own admin port: a quit there stops Envoy, not pilot-agent. */
const ENVOY_ADMIN_PORT = 15000;
const EXIT_ON_JOB_COMPLETION = /exitOnJobCompletion/i;
const EXIT_ON_ZERO = 'EXIT_ON_ZERO_ACTIVE_CONNECTIONS';
/** The Istio keys that only a pod's metadata is read for. */
const ISTIO_KEY = /(^|\.)istio\.io\//;

/** Every finding of one parsed file, in the order of its lines. */
export function check(source: Source): Finding[] {
  const findings: Finding[] = [];
  const add: Add = (node, rule, message, level) => {
    const fixed = RULES[rule];
    findings.push({ line: lineOf(source, node), level: level ?? (fixed === 'error|warning' ? 'error' : fixed), rule, message });
  };
  for (const document of source.documents) {
    for (const { value, node } of scalars(document.contents)) {
      if (EXIT_ON_JOB_COMPLETION.test(value)) {
        add(
          node,
          'exit-on-job-completion',
          `exitOnJobCompletion is no Istio setting (unknown proxy config keys are dropped silently): remove it and ${WRAP}`,
        );
      }
    }
  }
  for (const workload of workloads(source)) checkWorkload(workload, add);
  return findings.sort((a, b) => a.line - b.line);
}

/** A finding at a node, or at a pair's key (a block collection's own line is its key's). */
type Add = (node: Node | Pair | null | undefined, rule: RuleId, message: string, level?: Level) => void;

function checkWorkload(workload: Workload, add: Add): void {
  const { kind, podSpec } = workload;
  misplaced(workload, add);
  const containers = [...items(get(podSpec, 'initContainers')), ...items(get(podSpec, 'containers'))].filter(isMap) as YAMLMap[];
  for (const container of containers) {
    const name = text(get(container, 'name')) ?? '(unnamed)';
    if (name === PROXY_CONTAINER) {
      for (const key of ['command', 'args']) {
        const node = pairOf(container, key);
        if (node !== undefined) {
          add(
            node,
            'proxy-command-override',
            `the ${PROXY_CONTAINER} container declared here sets ${key}, which replaces the injected proxy's own: ` +
              `remove ${key} from it (declare only what the injected container should change)`,
          );
        }
      }
    }
    const preStop = pairOf(get(container, 'lifecycle'), 'preStop');
    if ([...scalars(preStop?.value)].some(({ value }) => value.includes(QUIT_PATH))) {
      add(
        preStop,
        'prestop-quit',
        `container ${name}: a preStop hook runs only when the pod is being stopped, never when the job ends: remove it and ${WRAP}`,
      );
    }
    const adminPort = (): string =>
      `container ${name}: quitquitquit on ${ENVOY_ADMIN_PORT} stops Envoy, and pilot-agent may restart it or keep running: ` +
      `quit pilot-agent on ${STATUS_PORT} instead (istio-job-run's default)`;
    for (const { value, node } of containerStrings(container)) {
      if (value.includes(QUIT_PATH) && new RegExp(`:${ENVOY_ADMIN_PORT}\\b`).test(value)) add(node, 'quit-admin-port', adminPort());
      if (value.includes(EXIT_ON_ZERO)) add(node, 'exit-on-zero-connections', zeroConnections());
    }
    for (const hook of ['preStop', 'postStart']) {
      const httpGet = getIn(container, ['lifecycle', hook, 'httpGet']);
      const port = pairOf(httpGet, 'port');
      if (text(get(httpGet, 'path'))?.includes(QUIT_PATH) && text(port?.value) === String(ENVOY_ADMIN_PORT))
        add(port, 'quit-admin-port', adminPort());
    }
    if (name !== PROXY_CONTAINER) shellQuit(container, name, add);
  }
  for (const [key, value, pair] of annotationsOf(workload.template)) {
    if (key === 'proxy.istio.io/config' && text(value)?.includes(EXIT_ON_ZERO))
      add(pair.value, 'exit-on-zero-connections', zeroConnections());
  }

  const restartPolicy = workload.restartPolicy;
  if (restartPolicy === 'OnFailure') {
    for (const container of jobContainers(workload)) {
      const policy = quitPolicy(container);
      if (policy === 'always') {
        add(
          pairOf(container, 'command') ?? container,
          'onfailure-quit-always',
          `container ${text(get(container, 'name')) ?? '(unnamed)'}: restartPolicy OnFailure restarts the job in the same pod, ` +
            'but istio-job-run quits the proxy after a failure too (--quit always), so the retry runs without it: ' +
            'add --quit on-success (or set restartPolicy: Never)',
        );
      }
    }
  }

  const outlook = prospect(workload);
  if (kind !== 'Pod' && outlook.kind !== 'none') podFailurePolicy(workload, add);
  if (outlook.kind === 'asked' || outlook.kind === 'maybe') {
    const all = items(get(podSpec, 'containers'));
    if (!all.some((container) => runsWrapper(container) || quitsItself(container))) {
      const asked = outlook.kind === 'asked';
      add(
        pairOf(workload.template, 'spec')?.key,
        'unwrapped',
        `${kind} ${workload.name} ${asked ? `gets a classic Istio sidecar (${outlook.why})` : 'gets a classic Istio sidecar wherever its namespace has injection on'}, ` +
          'and no container runs istio-job-run or quits it, so the pod never completes: ' +
          `${WRAP}, or set sidecar.istio.io/nativeSidecar: "true" on ${workload.templatePath} (every node Kubernetes 1.29+, Istio 1.24+)` +
          (asked ? '' : `, or ${INJECT_KEY}: "false" where it needs no mesh`),
        asked ? 'error' : 'warning',
      );
    }
  }
}

const zeroConnections = (): string =>
  `${EXIT_ON_ZERO} only shortens the proxy's drain after a TERM, and nothing sends it a TERM when the job ends: ${WRAP}`;

function annotationsOf(node: unknown): ReturnType<typeof entries> {
  return entries(getIn(node, ['metadata', 'annotations']));
}

/** Istio's keys on a Job's or CronJob's own metadata (and a CronJob's Job template), where injection never looks. */
function misplaced(workload: Workload, add: Add): void {
  if (workload.kind === 'Pod') return;
  const places: [unknown, string][] = [[workload.object, `the ${workload.kind}'s own metadata`]];
  if (workload.kind === 'CronJob') places.push([getIn(workload.object, ['spec', 'jobTemplate']), "the Job template's metadata"]);
  for (const [owner, where] of places) {
    for (const field of ['annotations', 'labels']) {
      for (const [key, , pair] of entries(getIn(owner, ['metadata', field]))) {
        if (!ISTIO_KEY.test(key)) continue;
        add(
          pair.key as Node,
          'misplaced-annotation',
          `${key} is on ${where}, which Istio's injector never reads: move it to ${workload.templatePath}.metadata.${field}`,
        );
      }
    }
  }
}

/** The wrapper's --quit policy as the container's command says it; undefined when it does not run the wrapper visibly. */
function quitPolicy(container: Node): string | undefined {
  const { command, args } = argv(container);
  const words = [...command, ...args];
  const start = words.findIndex((word) => word.slice(word.lastIndexOf('/') + 1) === PROGRAM);
  if (start < 0) return undefined;
  let policy: string | undefined;
  for (let i = start + 1; i < words.length; i++) {
    const word = words[i] as string;
    if (word === '--' || !word.startsWith('-')) break;
    if (word === '--quit') policy = words[++i];
    else if (word.startsWith('--quit=')) policy = word.slice('--quit='.length);
  }
  if (policy !== undefined) return policy.trim().toLowerCase();
  const env = items(get(container, 'env')).find((entry) => text(get(entry, 'name')) === OPTIONS.quit.env);
  if (env !== undefined) return text(get(env, 'value'))?.trim().toLowerCase();
  return 'always';
}

/** A container whose script quits the proxy itself; and one whose last command is that quit. */
function shellQuit(container: YAMLMap, name: string, add: Add): void {
  const { command, args } = argv(container);
  const words = [...command, ...args];
  if (!words.some((word) => word.includes(QUIT_PATH))) return;
  const script = scriptOf(words);
  // istio-job-run's own --quit-url: the wrapper quits, with its wait and retries.
  if (script === undefined && runsWrapper(container)) return;
  const node = pairOf(container, 'args') ?? pairOf(container, 'command');
  add(
    node,
    'shell-quit',
    `container ${name}: the container calls quitquitquit itself, with no wait for the proxy's readiness, no retry, ` +
      `and curl needed in the image: ${WRAP}`,
  );
  if (script !== undefined && lastStatement(script).includes(QUIT_PATH)) {
    add(
      node,
      'exit-code-lost',
      `container ${name}: the script ends with the quit, so the container exits with the quit's code, not the job's, ` +
        `and a failed job is reported as a success: ${WRAP}, which exits with the job's code`,
    );
  }
}

/** The script of `sh -c SCRIPT` (or -ec, -xc ...), or the command itself when it calls the quit directly. */
function scriptOf(words: readonly string[]): string | undefined {
  const flag = words.findIndex((word) => /^-[a-z]*c[a-z]*$/.test(word));
  if (flag >= 0) return words[flag + 1];
  return undefined;
}

/**
 * The last statement of a shell script: split at newlines and `;` outside quotes, `#` comments and the
 * closing words of a block left out. A trap runs at the exit and leaves its code as it was: it counts as none.
 */
function lastStatement(script: string): string {
  const statements: string[] = [];
  let current = '';
  let quote = '';
  let comment = false;
  for (const char of script) {
    if (comment) {
      if (char === '\n') comment = false;
      else continue;
    }
    if (quote !== '') {
      if (char === quote) quote = '';
      current += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      current += char;
    } else if (char === '#' && (current === '' || /\s$/.test(current))) {
      comment = true;
    } else if (char === ';' || char === '\n') {
      statements.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  statements.push(current);
  const last =
    statements
      .map((statement) => statement.trim())
      .filter((statement) => !/^(|fi|done|esac|\}|\))$/.test(statement))
      .at(-1) ?? '';
  return /^trap\b/.test(last) ? '' : last;
}

/** A podFailurePolicy rule on exit codes that names no container, in a pod that gets a sidecar. */
function podFailurePolicy(workload: Workload, add: Add): void {
  const policy = get(workload.jobSpec, 'podFailurePolicy');
  const policyPair = pairOf(workload.jobSpec, 'podFailurePolicy');
  const perIndex = pairOf(workload.jobSpec, 'backoffLimitPerIndex');
  if (workload.restartPolicy !== 'Never') {
    for (const [node, field] of [
      [policyPair, 'podFailurePolicy'],
      [perIndex, 'backoffLimitPerIndex'],
    ] as const) {
      if (node !== undefined) {
        add(
          node,
          'pod-failure-policy-container',
          `${field} needs restartPolicy: Never (this pod template has ${workload.restartPolicy ?? 'none'})`,
        );
      }
    }
  }
  const jobs = jobContainers(workload).map((container) => text(get(container, 'name')));
  for (const rule of items(get(policy, 'rules'))) {
    const onExitCodes = pairOf(rule, 'onExitCodes');
    if (onExitCodes === undefined || get(onExitCodes.value, 'containerName') !== undefined) continue;
    const name = jobs.length === 1 && jobs[0] !== undefined ? jobs[0] : 'the job container';
    add(
      onExitCodes,
      'pod-failure-policy-container',
      "an onExitCodes rule without containerName is matched against every container, so the sidecar's own exit codes " +
        `(137, 143, 255) can trip or hide it: set containerName: ${name}`,
    );
  }
}
