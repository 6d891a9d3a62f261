// What each container of a pod runs, read from its command and args: the programs in front (an init, a wrapper and
// the kinds it stops), the shell script it hands a shell (read by src/manifest/script/shell.ts, with the shell its
// image gives), and the requests of that script, each to be aimed at a sidecar (sidecars.ts).

import type { Node, Scalar, YAMLMap } from 'yaml';
import { PROGRAM } from '../../bundle/self.ts';
import type { Options } from '../../config/options.ts';
import { type KindName, SIDECAR_KINDS, type SidecarKind } from '../../config/kinds.ts';
import type { Request } from '../script/requests.ts';
import { basename, innerCommand, readWrapper, shellScript } from '../script/commands.ts';
import { commandStart, INITS, SIDECAR_FRONTS, wrapperStops as tableStops } from '../script/programs.ts';
import { type Dialect, dialectOfProgram } from '../script/dialect.ts';
import { busyboxWget, shOfImage } from '../script/images.ts';
import { readScript, type Runs, type ScriptFacts, type ShellOptions, WRAPPERS } from '../script/shell.ts';
import { get, isMap, isScalar, items, lineOf, lineText, pairOf, type Source, text, type ValueLines, valueLines } from '../yaml/source.ts';
import type { Workload } from '../yaml/workloads.ts';

/** A request of a script and its target: the sidecar it speaks to, and what it asks of it. */
export interface RequestTarget {
  readonly request: Request & { readonly id: number; readonly runs: Runs };
  /** other: a request to loopback that is neither a known endpoint nor says quit. */
  readonly what: 'quit' | 'wait' | 'other';
  /**
   * The kind it speaks to (a signal to its process too, which reaches it only across a shared process namespace);
   * undefined: a quit of some sidecar (a loopback path that says quit, kill, shutdown).
   */
  readonly kind?: SidecarKind;
  /** A quit sent to Envoy's own admin port. */
  readonly envoyAdmin?: boolean;
  /**
   * Why the sidecar it is aimed at does not act on what is meant as a quit (then `what` is other): a path it
   * answers 404, a scheme other than the plain HTTP it serves, the pod's own address instead of loopback.
   */
  readonly unheard?: string;
  readonly line: number;
}

export interface ContainerFacts {
  readonly node: YAMLMap;
  readonly name: string;
  readonly init: boolean;
  /** The wrapper its command starts with, and the kinds it stops. */
  readonly wrapper?: {
    readonly program: string;
    readonly stops: readonly KindName[] | 'all';
    /** istio-job-run's options, as its own parser reads them. */
    readonly options?: Options;
    readonly child?: string;
  };
  readonly script?: {
    readonly node: Scalar;
    readonly facts: ScriptFacts;
    readonly lines: ValueLines;
    /** A folded block scalar that joined commands into one line: the line of each joined command. */
    readonly joined: readonly number[];
    /** The shell that runs it, and whether the image said what its sh is (false: dash assumed). */
    readonly shell: { readonly dialect: Dialect; readonly program: string; readonly image: string; readonly imageKnown: boolean };
    /** What the script was read with: its shell's options, and the environment it starts with (whether that is all). */
    readonly read: { readonly options: ShellOptions; readonly env: ReadonlyMap<string, string | undefined>; readonly closed: boolean };
  };
  readonly aimed: readonly RequestTarget[];
  /** The script's wrappers (linkerd-await --shutdown ...), with their lines. */
  readonly scriptWrappers: readonly (ScriptFacts['wrappers'][number] & { readonly line: number })[];
}

/** The words a container runs: its command, then its args. */
export function argvOf(container: Node): { words: string[]; nodes: Node[] } {
  const nodes = [...items(get(container, 'command')), ...items(get(container, 'args'))].filter((node) => isScalar(node));
  return { words: nodes.map((node) => text(node) ?? ''), nodes };
}

/** A pod's init containers and its containers. */
export function containersOf(workload: Workload): { readonly initContainers: YAMLMap[]; readonly regular: YAMLMap[] } {
  return {
    initContainers: items(get(workload.podSpec, 'initContainers')).filter(isMap) as YAMLMap[],
    regular: items(get(workload.podSpec, 'containers')).filter(isMap) as YAMLMap[],
  };
}

/** The scripts of a pod's containers (`sh -c SCRIPT`, init containers' too): each node, and where its lines come from. */
export function podScripts(workload: Workload): NonNullable<ContainerFacts['script']>[] {
  const { initContainers, regular } = containersOf(workload);
  return [
    ...initContainers.map((node) => readContainer(workload.source, node, true, sharesProcessesOf(workload)).script),
    ...regular.map((node) => readContainer(workload.source, node, false, sharesProcessesOf(workload)).script),
  ].filter((script) => script !== undefined);
}

/** The programs a command runs: its first word, and the command of an init or kubexit in front of it. */
export function programsOf(words: readonly string[]): string[] {
  const programs: string[] = [];
  for (let at = 0; at < words.length && programs.length < 4; ) {
    const program = basename(words[at] as string);
    programs.push(program);
    if (!SIDECAR_FRONTS.has(program)) break;
    at += 1 + (commandStart(program, words.slice(at + 1)) ?? 0);
  }
  return programs;
}

/** Whether a workload's pods share one process namespace (shareProcessNamespace: true). */
export const sharesProcessesOf = (workload: Workload): boolean => text(get(workload.podSpec, 'shareProcessNamespace')) === 'true';

/** A container's command read: its wrapper, and the script of its shell (SHARES: the pod shares its processes). */
export function readContainer(source: Source, node: YAMLMap, init: boolean, shares: boolean): ContainerFacts {
  const name = text(get(node, 'name')) ?? '(unnamed)';
  const { words, nodes } = argvOf(node);
  let at = 0;
  let wrapper: ContainerFacts['wrapper'];
  // tini -e 143 -- sh -c ..., then a wrapper, then the shell.
  for (let guard = 0; guard < 8 && at < words.length; guard++) {
    const program = basename(words[at] as string);
    if (INITS.has(program)) {
      at += 1 + (commandStart(program, words.slice(at + 1)) ?? 0);
    } else if ((WRAPPERS as readonly string[]).includes(program)) {
      const rest = words.slice(at + 1);
      const reading = readWrapper(program, rest, Object.fromEntries(containerEnv(node)));
      const child = reading.child === undefined ? words.length : at + 1 + reading.child;
      wrapper = {
        program,
        stops: wrapperStops(program, rest, reading.options, node),
        ...(reading.options === undefined ? {} : { options: reading.options }),
        ...(words[child] === undefined ? {} : { child: words[child] as string }),
      };
      at = child;
    } else break;
  }
  // `timeout 60 sh -c`, `env A=1 bash -c`, `exec sh -c`: the shell behind the programs that run their arguments.
  at = words.length - innerCommand(words.slice(at), (word) => word).words.length;
  let script: ContainerFacts['script'];
  const shell = shellScript(words.slice(at));
  const scriptNode = shell === undefined ? undefined : nodes[at + shell.at];
  if (shell !== undefined && scriptNode !== undefined && isScalar(scriptNode) && typeof scriptNode.value === 'string') {
    const lines = valueLines(source, scriptNode);
    const image = text(get(node, 'image')) ?? '';
    const sh = shOfImage(image);
    const viaBusybox = basename(words[at - 1] ?? '') === 'busybox' || basename(words[at] ?? '') === 'busybox';
    const program = basename(words[at + (basename(words[at] ?? '') === 'busybox' ? 1 : 0)] ?? '');
    const dialect = dialectOfProgram(program, sh.dialect, viaBusybox) ?? 'bash';
    const options: ShellOptions = {
      errexit: shell.errexit,
      pipefail: shell.pipefail,
      nounset: shell.nounset,
      dialect,
      sh: sh.dialect,
      sharesProcesses: shares,
    };
    const [env, closed] = scriptEnv(node);
    script = {
      node: scriptNode,
      facts: readScript(scriptNode.value, options, env, closed),
      read: { options, env, closed },
      shell: {
        dialect,
        program: viaBusybox ? `busybox ${program}` : program,
        image,
        imageKnown: sh.known || program !== 'sh' || viaBusybox,
      },
      lines,
      joined: scriptNode.type === 'BLOCK_FOLDED' ? joinedCommands(lines, source) : [],
    };
  }
  const lineAt = (row: number, column: number): number =>
    script === undefined
      ? lineOf(source, pairOf(node, 'command') ?? node)
      : (script.lines.lineAt(row, column) ?? lineOf(source, script.node));
  const aimed: RequestTarget[] = [];
  // busybox's wget, an Alpine image's, rejects GNU wget's options: it exits 1 and sends nothing.
  const busybox = script !== undefined && busyboxWget(script.shell.image, String(script.node.value));
  for (const request of script?.facts.requests ?? []) {
    const line = lineAt(request.place.row, request.place.column);
    const rejected = busybox && request.gnuOnly !== undefined && request.rejected === undefined ? { rejected: request.gnuOnly } : {};
    aimed.push({ request: { ...request, ...rejected }, what: 'quit', line });
  }
  const scriptWrappers = (script?.facts.wrappers ?? []).map((found) => ({ ...found, line: lineAt(found.place.row, found.place.column) }));
  return {
    node,
    name,
    init,
    ...(wrapper === undefined ? {} : { wrapper }),
    ...(script === undefined ? {} : { script }),
    aimed,
    scriptWrappers,
  };
}

/** The container's environment variables whose values the manifest gives. */
function containerEnv(container: Node): Map<string, string> {
  const env = new Map<string, string>();
  for (const entry of items(get(container, 'env'))) {
    const name = text(get(entry, 'name'));
    const value = text(get(entry, 'value'));
    if (name !== undefined && value !== undefined) env.set(name, value);
  }
  return env;
}

/**
 * The environment a container's script starts with, as far as the manifest says: each variable of its `env`, with
 * its value or (valueFrom) undefined, the pod setting it at run time; and whether that is all (no envFrom).
 */
function scriptEnv(container: Node): [Map<string, string | undefined>, boolean] {
  const env = new Map<string, string | undefined>();
  for (const entry of items(get(container, 'env'))) {
    const name = text(get(entry, 'name'));
    if (name !== undefined) env.set(name, get(entry, 'valueFrom') === undefined ? (text(get(entry, 'value')) ?? '') : undefined);
  }
  return [env, get(container, 'envFrom') === undefined];
}

/** The lines of a folded block scalar that YAML joined onto the line before, each starting what reads as a new command. */
function joinedCommands(lines: ValueLines, source: Source): number[] {
  const joined: number[] = [];
  for (const { pieces } of lines.rows) {
    for (let i = 1; i < pieces.length; i++) {
      const previous = lineText(source, pieces[i - 1]?.line ?? 1).trimEnd();
      const current = lineText(source, pieces[i]?.line ?? 1).trim();
      if (current.startsWith('-') || /(\\|&&|\|\||\||;|\(|\{)$/.test(previous)) continue;
      joined.push(pieces[i]?.line ?? 0);
    }
  }
  return joined;
}

/** Which kinds a wrapper at the start of a command stops. */
function wrapperStops(
  program: string,
  args: readonly string[],
  options: Options | undefined,
  container: Node,
): readonly KindName[] | 'all' {
  if (program !== PROGRAM) return tableStops(program, args);
  // istio-job-run: Istio unless --sidecar none, the kinds of --also, and those of the pod's annotations file.
  if (options === undefined) return [];
  const stops: KindName[] = [];
  if (options.sidecar !== 'none') stops.push('istio');
  for (const entry of options.also) stops.push(entry.kind);
  const mounts = items(get(container, 'volumeMounts')).map((mount) => text(get(mount, 'mountPath')) ?? '');
  if (mounts.some((path) => path !== '' && options.podAnnotations.startsWith(`${path.replace(/\/$/, '')}/`))) {
    for (const kind of SIDECAR_KINDS as readonly SidecarKind[]) if (kind.fromAnnotations !== undefined) stops.push(kind.name as KindName);
  }
  return stops;
}
