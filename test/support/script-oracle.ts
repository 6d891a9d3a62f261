// The oracle over real scripts: every container script of the shared samples (../shared/corpus, corpus2, corpus3:
// Jobs, CronJobs, Pods, Helm hooks; `sh -c`, `bash -c` and the scripts they feed a shell), run for real in the
// shell the model says runs it (dash, bash, busybox's ash, bash as sh), once per combination of the job's programs
// succeeding and failing, in the proof's pod (script-proof.ts: its own network and PID namespace, a stand-in of the
// sidecar on loopback that records readiness polls and quits) inside a root of stubs (script-oracle-stage.ts); and
// what the model (readScript, outcomeOf) predicts for the same combination. A run agrees when one of the model's
// paths ran the job's programs in the same order, sent its first effective quit at the same place among them, and
// ended with the same status (or one the model does not claim). A path the model cannot follow to its end (a
// sourced file, a loop that may not end) claims nothing: the run is then undetermined, and counted.
//
// The same oracle runs each --inject output: the programs run and the quits sent must be the original's, less its
// quits, with the wrapper's one quit after the job.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { YAMLMap } from 'yaml';
import { istioPort, SIDECAR_KINDS, type SidecarKind } from '../../src/config/kinds.ts';
import { PROXY_CONTAINER, STATUS_ANNOTATION } from '../../src/config/mode.ts';
import { inject, WRAPPER_PATH } from '../../src/manifest/inject/inject.ts';
import { argvOf, type ContainerFacts } from '../../src/manifest/pod/containers.ts';
import { readPod } from '../../src/manifest/pod/pod.ts';
import { BOOKKEEPING, FILTERS, innerCommand } from '../../src/manifest/script/commands.ts';
import { parseShell, readScript } from '../../src/manifest/script/shell.ts';
import type { Path } from '../../src/manifest/script/state.ts';
import type { Syntax } from '../../src/manifest/script/syntax.ts';
import { get, isMap, items, parseSource, text } from '../../src/manifest/yaml/source.ts';
import { workloads } from '../../src/manifest/yaml/workloads.ts';
import { root, WRAPPER } from './process.ts';
import { seeded } from './scenarios.ts';
import { type Planned, runAll } from './script-proof.ts';
import { type Dialect, oracleStage, PODINFO, pathFor, SHELLS, WORK_DIR } from './script-oracle-stage.ts';

/** What --inject is given. */
type InjectSettings = Parameters<typeof inject>[1];

/** The shared samples, beside the repository. */
export const SHARED = join(root, '..', 'shared');
export const SAMPLES = ['corpus', 'corpus2', 'corpus3'] as const;

/** Every combination while there are at most this many; past it, this many, seeded. */
export const MAX_COMBINATIONS = 32;
/** A run's bound: a script that runs longer has hung. */
const RUN_TIMEOUT_MS = 8_000;
const CLASSIC_STATUS = JSON.stringify({ containers: [PROXY_CONTAINER] });
const QUIT = 'QUIT';

/** One container script of a sample, as the model reads it, and how the oracle runs it. */
export interface OracleScript {
  /** sample/file, the workload and the container: `corpus/01-x.yaml Job/name container`. */
  readonly id: string;
  readonly text: string;
  readonly dialect: Dialect;
  readonly read: NonNullable<ContainerFacts['script']>['read'];
  /** The places (row:column in the script) of the requests the model takes to reach a sidecar and stop it. */
  readonly quits: ReadonlySet<string>;
  readonly argv: readonly string[];
  readonly env: readonly string[];
  readonly cwd: string;
  /** Folders the pod has: its volume mounts, and those the script changes to or writes into. */
  readonly folders: readonly string[];
  readonly shares: boolean;
  /** The job's programs, in the order the model first meets them. */
  readonly programs: readonly string[];
  /** The loopback ports its requests go to: the pod's stand-in answers on each. */
  readonly ports: readonly number[];
  /** A wrapper in front of the shell tells the sidecar to quit once the script ends (linkerd-await --shutdown, this project's). */
  readonly wrapperQuits: boolean;
  /** The script has a pipeline, whose commands run at once: their order among themselves is not the shell's to keep. */
  readonly piped: boolean;
  /** The script's rewrite by --inject, as the oracle runs it; undefined: --inject leaves it (or refuses: why). */
  readonly injected?: OracleScript | string;
}

/** A run for real, as the oracle reads it: the job's programs and the first quit in order, and the exit status. */
export interface RealRun {
  readonly steps: readonly string[];
  readonly exit: number;
  readonly hung: boolean;
  readonly events: readonly string[];
}

export type Verdict = 'agrees' | 'disagrees' | 'undetermined';

export interface Judged {
  readonly script: OracleScript;
  /** The programs that fail in this combination. */
  readonly failing: readonly string[];
  readonly real: RealRun;
  readonly predicted: readonly { readonly steps: readonly string[]; readonly status: number | undefined; readonly unknown?: string }[];
  readonly verdict: Verdict;
}

const placeKey = (place: { readonly row: number; readonly column: number }): string => `${place.row}:${place.column}`;

/** Whether the model counts PROGRAM as the job's: neither bookkeeping nor a filter. */
const isWork = (program: string): boolean => !BOOKKEEPING.has(program) && !FILTERS.has(program);

/** A model path as the oracle compares it: the job's programs in order, and its first effective quit among them. */
function stepsOf(path: Path, quits: ReadonlySet<string>): string[] {
  const steps: string[] = [];
  for (const event of path.events) {
    if (event.what === 'work') steps.push(event.program ?? '?');
    else if (quits.has(placeKey(event.place)) && event.background !== true && !steps.includes(QUIT)) steps.push(QUIT);
  }
  return steps;
}

/** A run's events (script-proof's pod) as the oracle compares them. */
function realOf(result: { exit: number; events: readonly string[] } | undefined): RealRun {
  if (result === undefined) throw new Error('a run with no result from the pod');
  const steps: string[] = [];
  for (const event of result.events) {
    const [kind, name = ''] = event.split(' ');
    if (kind === 'work' && isWork(name)) steps.push(name);
    else if (kind === 'quit' && !steps.includes(QUIT)) steps.push(QUIT);
  }
  return { steps, exit: result.exit, hung: result.events.includes('timeout'), events: result.events };
}

/** The programs a script names (the first word of each command, behind timeout, env, exec...), for their stubs. */
export function namedPrograms(tree: Syntax | null): string[] {
  return commandsOf(tree).flatMap((words) =>
    [words[0] ?? '', innerCommand(words, (word) => word).words[0] ?? ''].filter((word) => /^[\w./-]+$/.test(word)),
  );
}

/** The words of each command of a tree, as written. */
const commandsOf = (tree: Syntax | null): string[][] =>
  (tree?.descendantsOfType('command') ?? []).map((command) =>
    [command.childForFieldName('name'), ...command.childrenForFieldName('argument')].map((word) => word?.text ?? ''),
  );

/**
 * The script files a shell of the script runs (`/bin/sh /config/initialize`), each with the shell's name, and the
 * files it sources (`. /scripts/env.sh`, shell `.`): the model reads past a file the manifest does not hold as one
 * that sets what it sets and returns, so the stage gives each an empty file.
 */
function scriptFiles(tree: Syntax | null, cwd: string): { path: string; shell: string }[] {
  return commandsOf(tree).flatMap((words) => {
    const inner = innerCommand(words, (word) => word).words;
    const shell = (inner[0] ?? '').replace(/^.*\//, '').replace(/^source$/, '.');
    const file = inner[1] ?? '';
    if (shell === '.' && /^[\w./-]+$/.test(file)) return [{ path: file.startsWith('/') ? file : join(cwd, file), shell }];
    if (!/^(sh|bash|ash|dash)$/.test(shell) || !/^[\w./-]+$/.test(file) || file.startsWith('-')) return [];
    return [{ path: file.startsWith('/') ? file : join(cwd, file), shell }];
  });
}

/** Folders a script changes to or writes into, and a pod's volume mounts: they exist in the pod. */
function foldersOf(script: string, container: YAMLMap): string[] {
  const folders = items(get(container, 'volumeMounts')).map((mount) => text(get(mount, 'mountPath')) ?? '/');
  for (const match of script.matchAll(/\bcd\s+(\/[\w./-]*)/g)) folders.push(match[1] as string);
  for (const match of script.matchAll(/>>?\s*(\/[\w./-]+)\/[\w.-]+/g)) folders.push(match[1] as string);
  return folders.filter((folder) => folder !== '/' && !folder.startsWith('/dev') && !folder.startsWith('/proc'));
}

/** The container's argv with its shell replaced by the one the model says runs it. */
function runArgv(words: readonly string[], at: number, dialect: Dialect): string[] {
  const viaBusybox = words[at]?.endsWith('busybox') === true;
  return [...words.slice(0, at), SHELLS[dialect].run, ...words.slice(at + (viaBusybox ? 2 : 1))];
}

/**
 * The files of the downward API volumes CONTAINER mounts (annotations and labels), as kubelet writes them, with the
 * annotation each injector of a classic sidecar (INJECTED) writes: Istio's status, the others' markers.
 */
function podInfo(template: YAMLMap, podSpec: YAMLMap, container: YAMLMap, injected: readonly SidecarKind[]): string[] {
  const meta = get(template, 'metadata');
  const metadata = (field: 'annotations' | 'labels'): string => {
    const values: Record<string, unknown> =
      (isMap(meta) ? (meta.toJSON() as Record<string, Record<string, unknown>>)[field] : undefined) ?? {};
    const map = new Map(Object.entries(values).map(([key, value]) => [key, String(value)]));
    for (const kind of field === 'annotations' ? injected : []) {
      const marker = kind.template.injectedAnnotation;
      if (marker !== undefined && !map.has(marker)) map.set(marker, marker === STATUS_ANNOTATION ? CLASSIC_STATUS : 'injected');
    }
    return [...map]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, value]) => `${key}=${JSON.stringify(value)}\n`)
      .join('');
  };
  const volumes = new Map(items(get(podSpec, 'volumes')).map((volume) => [text(get(volume, 'name')), volume]));
  return items(get(container, 'volumeMounts')).flatMap((mount) => {
    const downward = get(volumes.get(text(get(mount, 'name'))), 'downwardAPI');
    return items(get(downward, 'items')).flatMap((item) => {
      const field = /^metadata\.(annotations|labels)$/.exec(text(get(get(item, 'fieldRef'), 'fieldPath')) ?? '')?.[1] as
        | 'annotations'
        | 'labels'
        | undefined;
      return field === undefined ? [] : [`${text(get(mount, 'mountPath'))}/${text(get(item, 'path'))}`, metadata(field)];
    });
  });
}

/** The environment a container runs with: its values, a set value for each variable the pod fills in at run time. */
function envOf(container: YAMLMap, sh: Dialect): string[] {
  const env = items(get(container, 'env')).map((entry) => {
    const name = text(get(entry, 'name')) ?? '';
    const from = get(entry, 'valueFrom');
    if (from === undefined) return `${name}=${text(get(entry, 'value')) ?? ''}`;
    return `${name}=${JSON.stringify(from).includes(STATUS_ANNOTATION) ? CLASSIC_STATUS : 'oracle-value'}`;
  });
  return [`PATH=${pathFor(sh)}`, ...env];
}

/** The scripts of one file's workloads (and of its --inject output when READ_INJECTED). */
function scriptsOf(name: string, yaml: string, injectOptions?: InjectSettings): OracleScript[] {
  const source = parseSource(name, yaml);
  if ('error' in source) throw new Error(source.error);
  const rewritten = injectOptions === undefined ? undefined : inject(source, injectOptions);
  const rewrites =
    rewritten === undefined || rewritten.kind === 'refused' || rewritten.text === yaml
      ? undefined
      : scriptsOf(name, rewritten.text.replaceAll(WRAPPER_PATH, WRAPPER));
  const refusal = rewritten?.kind === 'refused' ? rewritten.problems.join('; ') : undefined;
  const found: OracleScript[] = [];
  workloads(source).forEach((workload) => {
    const pod = readPod(workload, new Map(), undefined);
    const shares = text(get(workload.podSpec, 'shareProcessNamespace')) === 'true';
    for (const container of pod.containers) {
      const script = container.script;
      if (script === undefined) continue;
      const { words, nodes } = argvOf(container.node);
      const at = words.findIndex((word) => /(^|\/)(sh|bash|ash|dash|busybox)$/.test(word));
      if (at < 0 || !nodes.includes(script.node)) continue;
      const dialect = script.shell.dialect as Dialect;
      const id = `${name} ${workload.kind}/${workload.name} ${container.name}`;
      const quits = new Set([
        ...container.aimed
          .filter(
            ({ what, request }) =>
              what === 'quit' && (request.method === 'POST' || request.method === 'SIGNAL') && request.rejected === undefined,
          )
          .map(({ request }) => placeKey(request.place)),
        ...container.scriptWrappers.filter((wrapper) => wrapper.quits).map((wrapper) => placeKey(wrapper.place)),
      ]);
      const wrapper = container.wrapper;
      const programs = [
        ...new Set(
          [...script.facts.outcome.success, ...script.facts.outcome.failure].flatMap((path) =>
            path.events.flatMap((event) => (event.what === 'work' && event.program !== undefined ? [event.program] : [])),
          ),
        ),
      ];
      const cwd = text(get(container.node, 'workingDir')) ?? WORK_DIR;
      const injectors = pod.sidecars
        .filter((sidecar) => sidecar.form === 'classic' && sidecar.container === undefined)
        .map((sidecar) => sidecar.kind);
      const info = podInfo(workload.template, workload.podSpec, container.node, injectors);
      const injected = rewrites?.find((one) => one.id === id);
      found.push({
        id,
        text: String(script.node.value),
        dialect,
        read: script.read,
        quits,
        argv: [...(info.length === 0 ? [] : [PODINFO, ...info, '--']), ...runArgv(words, at, dialect)],
        env: envOf(container.node, script.read.options.sh as Dialect),
        cwd,
        folders: foldersOf(String(script.node.value), container.node),
        shares,
        programs,
        ports: container.aimed.flatMap(({ request }) => (request.port === undefined ? [] : [request.port])),
        wrapperQuits: wrapper !== undefined && (wrapper.stops === 'all' || wrapper.stops.length > 0),
        piped: (parseShell(String(script.node.value))?.descendantsOfType('pipeline').length ?? 0) > 0,
        ...(injected !== undefined && injected.text !== String(script.node.value)
          ? { injected }
          : refusal === undefined
            ? {}
            : { injected: refusal }),
      });
    }
  });
  return found;
}

/** Every container script of the shared samples there are, with its --inject rewrite. */
export function sampleScripts(
  injectOptions: InjectSettings = { image: 'registry.example/istio-job-run:0.0.0', native: false },
): OracleScript[] {
  return SAMPLES.flatMap((sample) => {
    const dir = join(SHARED, sample);
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((file) => /\.ya?ml$/.test(file))
      .sort()
      .flatMap((file) => scriptsOf(`${sample}/${file}`, readFileSync(join(dir, file), 'utf8'), injectOptions));
  });
}

/** The combinations of PROGRAMS failing: every one up to the bound; past it none, all, each alone, then seeded. */
export function combinations(programs: readonly string[], seed: number): string[][] {
  if (2 ** programs.length <= MAX_COMBINATIONS) {
    return Array.from({ length: 2 ** programs.length }, (_, mask) => programs.filter((_, at) => (mask >> at) & 1));
  }
  const found = new Map<string, string[]>();
  const add = (failing: string[]): void => {
    if (found.size < MAX_COMBINATIONS) found.set(failing.join(','), failing);
  };
  add([]);
  add([...programs]);
  for (const program of programs) add([program]);
  const next = seeded(seed);
  for (let tries = 0; found.size < MAX_COMBINATIONS && tries < MAX_COMBINATIONS * 20; tries++) add(programs.filter(() => next() < 0.5));
  return [...found.values()];
}

/** What the model predicts for SCRIPT with FAILING failing: each path's steps and status. */
function predict(script: OracleScript, failing: readonly string[]): Judged['predicted'] {
  const { options, env, closed } = script.read;
  const outcome = readScript(script.text, { ...options, failing: new Set(failing) }, env, closed).outcome;
  if (outcome.unknown.success !== undefined && outcome.success.length <= 1) {
    return [{ steps: [], status: undefined, unknown: outcome.unknown.success }];
  }
  return outcome.success.map((path) => ({
    steps: [...stepsOf(path, script.quits), ...(script.wrapperQuits && path.end !== 'exec' ? [QUIT] : [])].filter(
      (step, at, steps) => step !== QUIT || steps.indexOf(QUIT) === at,
    ),
    status: path.status,
    ...(path.unknown === undefined ? {} : { unknown: path.unknown }),
  }));
}

const same = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((item, at) => item === b[at]);

/** The steps before and after the quit, each sorted: a pipeline's commands run at once, in no order of the shell's. */
const unordered = (steps: readonly string[]): string[] => {
  const at = steps.indexOf(QUIT);
  return at < 0 ? [...steps].sort() : [...steps.slice(0, at).sort(), QUIT, ...steps.slice(at + 1).sort()];
};

function verdictOf(script: OracleScript, real: RealRun, predicted: Judged['predicted']): Verdict {
  const known = predicted.filter((path) => path.unknown === undefined);
  const alike = (steps: readonly string[]): boolean =>
    same(steps, real.steps) || (script.piped && same(unordered(steps), unordered(real.steps)));
  if (known.some((path) => alike(path.steps) && (path.status === undefined || path.status === real.exit) && !real.hung)) {
    return 'agrees';
  }
  return predicted.some((path) => path.unknown !== undefined) ? 'undetermined' : 'disagrees';
}

/** Istio's ports, which the pod's stand-in serves as Istio does. */
const ISTIO_PORTS = [istioPort('status'), istioPort('health'), istioPort('envoy-admin')];

/** The ports of the sidecars other than Istio, which the pod's stand-in answers too. */
const OTHER_PORTS = [
  ...new Set(SIDECAR_KINDS.filter((kind) => kind.name !== 'istio').flatMap((kind) => kind.listeners.map((listener) => listener.port))),
];

/** A run of --inject's rewrite against the run of the original in the same combination. */
export interface Rewritten {
  readonly script: OracleScript;
  readonly failing: readonly string[];
  readonly original: RealRun;
  readonly real: RealRun;
  /** The original's steps less its quits, and the wrapper's one quit after the job (as its --quit says). */
  readonly expected: readonly string[];
  readonly verdict: Verdict;
}

export interface OracleResult {
  readonly judged: readonly Judged[];
  readonly rewritten: readonly Rewritten[];
  /** Runs not made: every path of the model's stops where it cannot follow (its reason, by script). */
  readonly unfollowed: readonly { readonly script: OracleScript; readonly failing: readonly string[]; readonly why: string }[];
  readonly seconds: number;
}

/** Runs every script in every combination, and judges each run against the model's prediction. */
export async function runOracle(scripts: readonly OracleScript[], options: { seed: number; pods?: number }): Promise<OracleResult> {
  const started = performance.now();
  const stubbed = scripts.flatMap((script) => [
    ...script.programs.map((name) => ({ name, cwd: script.cwd })),
    ...namedPrograms(parseShell(script.text)).map((name) => ({ name, cwd: script.cwd })),
  ]);
  const folders = scripts.flatMap((script) => [script.cwd, ...script.folders]);
  const files = scripts.flatMap((script) => scriptFiles(parseShell(script.text), script.cwd));
  const stage = oracleStage(stubbed, folders, files);
  try {
    const planned: Planned[] = [];
    const pending: { script: OracleScript; failing: string[]; predicted: Judged['predicted']; id: string }[] = [];
    const run = (id: string, script: OracleScript, failing: readonly string[]): void => {
      planned.push({
        id,
        lacks: [],
        busyboxWget: false,
        argv: script.argv,
        env: [...script.env, `PROOF_FAILING=,${failing.join(',')},`, `PROOF_PASSING=,${[...FILTERS].join(',')},`],
        shares: script.shares,
        status: 0,
        cwd: script.cwd,
      });
    };
    const unfollowed: OracleResult['unfollowed'][number][] = [];
    scripts.forEach((script, index) => {
      for (const failing of combinations(script.programs, options.seed + index)) {
        const predicted = predict(script, failing);
        if (predicted.every((path) => path.unknown !== undefined)) {
          unfollowed.push({ script, failing, why: predicted[0]?.unknown ?? '' });
          continue;
        }
        const id = `${index}.${failing.join('+') || 'none'}`.replace(/[^\w.+-]/g, '_');
        pending.push({ script, failing, predicted, id });
        run(id, script, failing);
        if (typeof script.injected === 'object') run(`${id}.injected`, script.injected, failing);
      }
    });
    const results = await runAll(stage, planned, options.pods ?? availableParallelism() * 2, {
      launch: stage.launch,
      timeoutMs: RUN_TIMEOUT_MS,
      ports: [...new Set([...OTHER_PORTS, ...scripts.flatMap((script) => script.ports)])].filter((port) => !ISTIO_PORTS.includes(port)),
    });
    const judged = pending.map(({ script, failing, predicted, id }): Judged => {
      const real = realOf(results.get(id));
      return { script, failing, real, predicted, verdict: verdictOf(script, real, predicted) };
    });
    const rewritten = pending.flatMap(({ script, failing, id }): Rewritten[] => {
      if (typeof script.injected !== 'object') return [];
      const original = realOf(results.get(id));
      const real = realOf(results.get(`${id}.injected`));
      const expected = [
        ...original.steps.filter((step) => step !== QUIT),
        ...(wrapperQuits(script.injected.argv, real.exit) ? [QUIT] : []),
      ];
      const alike = same(expected, real.steps) || (script.piped && same(unordered(expected), unordered(real.steps)));
      const verdict: Verdict = original.hung ? 'undetermined' : alike && !real.hung ? 'agrees' : 'disagrees';
      return [{ script: script.injected, failing, original, real, expected, verdict }];
    });
    return { judged, rewritten, unfollowed, seconds: (performance.now() - started) / 1000 };
  } finally {
    stage.remove();
  }
}

/** Whether the wrapper in front of ARGV quits after its command ended with EXIT, as its --quit says. */
function wrapperQuits(argv: readonly string[], exit: number): boolean {
  const at = argv.findIndex((word) => word === '--quit' || word.startsWith('--quit='));
  const policy = at < 0 ? 'always' : argv[at]?.includes('=') ? argv[at]?.split('=')[1] : argv[at + 1];
  return policy === 'always' || (policy === 'on-success' && exit === 0);
}

/** One run of a rewrite that does not do what the original did: the combination, both runs, what was expected. */
export function describeRewritten(one: Rewritten): string {
  return [
    `${one.script.id} (--inject, ${one.script.dialect}): ${one.verdict}`,
    `  failing:  ${one.failing.length === 0 ? 'nothing' : one.failing.join(', ')}`,
    `  original: ${one.original.steps.join(' ') || '(nothing)'}; exit ${one.original.exit}${one.original.hung ? ' (hung)' : ''}`,
    `  expected: ${one.expected.join(' ') || '(nothing)'}`,
    `  rewrite:  ${one.real.steps.join(' ') || '(nothing)'}; exit ${one.real.exit}${one.real.hung ? ' (hung)' : ''}`,
    `  events:   ${one.real.events.join(' | ')}`,
    `  argv:     ${JSON.stringify(one.script.argv).slice(0, 300)}`,
  ].join('\n');
}

/** One disagreement as the model's author reads it: the script, the combination, what the shell did, what the model said. */
export function describeJudged(one: Judged): string {
  const { script } = one;
  return [
    `${script.id} (${script.dialect}${script.read.options.errexit ? ', -e' : ''}): ${one.verdict}`,
    `  failing: ${one.failing.length === 0 ? 'nothing' : one.failing.join(', ')}`,
    `  shell:   ${one.real.steps.join(' ') || '(nothing)'}; exit ${one.real.exit}${one.real.hung ? ' (hung)' : ''}`,
    ...one.predicted.map(
      (path) =>
        `  model:   ${path.steps.join(' ') || '(nothing)'}; exit ${path.status ?? '?'}${path.unknown === undefined ? '' : ` (unknown: ${path.unknown})`}`,
    ),
    `  events:  ${one.real.events.join(' | ')}`,
    '  script:',
    ...script.text
      .trimEnd()
      .split('\n')
      .slice(0, 40)
      .map((line) => `    | ${line}`),
  ].join('\n');
}
