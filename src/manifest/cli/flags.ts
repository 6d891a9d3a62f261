// The flags of the manifest tools, `--check FILE... | --inject FILE... [--image IMAGE] [--native] ...`, and the
// kubectl plugin's commands (`check -f FILE`, `inject -f FILE ...`), which are translated into the flags, parsed
// into what to run or one line saying what is wrong.

import type { KindName } from '../../config/kinds.ts';
import { type Mesh, parseKubernetes, parseMesh, type Profile, type Version } from '../../config/profile.ts';
import {
  CONFIG_FLAG,
  DEFAULT_THRESHOLD,
  ENTRYPOINT_FLAG,
  type Format,
  IGNORE_FLAG,
  IGNORE_VARIABLE,
  INJECTED_NAMESPACES_FLAG,
  INJECTED_NAMESPACES_VARIABLE,
  POLICY_VERSIONS,
  type PolicyVersion,
  type Threshold,
  TOOL_FLAG,
  TOOL_FLAGS,
  type Tool,
} from '../../config/tool-flags.ts';
import type { CheckSettings } from '../check/rules.ts';
import type { LabelSelector } from '../inject/policy.ts';
import { addInjectedNamespaces } from '../pod/sidecars.ts';
import { type ConfigFiles, type ConfigValues, defaultConfig, readConfig } from './config-file.ts';
import { flagLike, PLUGIN_NAME } from './select.ts';
import { ruleList } from './suppress.ts';

export type Env = Readonly<Record<string, string | undefined>>;

/** How --check writes its findings, which it leaves out, and which fail it. */
export interface CheckOutput {
  readonly format: Format;
  readonly threshold: Threshold;
  /** The rules of --ignore (or ISTIO_JOB_RUN_IGNORE). */
  readonly ignore: ReadonlySet<string>;
  /** The ids of --ignore that are no rule, each said as a line. */
  readonly warnings: readonly string[];
}

/** What the command line asks for; PROFILE: the cluster as stated (undefined: none stated, today's assumptions). */
export type Request =
  | {
      readonly kind: 'check';
      readonly files: readonly string[];
      readonly settings: CheckSettings;
      readonly output: CheckOutput;
      readonly profile?: Profile;
    }
  | {
      readonly kind: 'inject';
      readonly files: readonly string[];
      readonly image?: string;
      readonly native: boolean;
      /** --wrapper: the wrapper even where a native sidecar would do. */
      readonly wrapper: boolean;
      readonly imageVolume: boolean;
      readonly settings: CheckSettings & { readonly entrypoints: ReadonlyMap<string, readonly string[]> };
      readonly profile?: Profile;
    }
  | {
      readonly kind: 'policy';
      readonly image?: string;
      readonly native: boolean;
      readonly profile?: Profile;
      readonly imageVolume: boolean;
      readonly version: PolicyVersion;
      readonly namespaceSelector?: LabelSelector;
      readonly namespaces: ReadonlyMap<KindName, ReadonlySet<string>>;
    }
  | { readonly kind: 'help' }
  | { readonly kind: 'error'; readonly message: string };

/** The flags of --check's output, with their help: --help and docs/MANIFESTS.md list them. */
export const OUTPUT_FLAGS = TOOL_FLAGS.flatMap(({ flag, argument, tools, variable, help }) =>
  tools.length === 1 && tools[0] === 'check' && argument !== undefined && flag !== '--check'
    ? [{ usage: `${flag} ${argument}`, variable, help }]
    : [],
);
/** The value flags, and what each takes. */
const VALUE_FLAGS: Readonly<Record<string, string>> = Object.fromEntries(
  TOOL_FLAGS.flatMap(({ flag, argument }) => (argument === undefined ? [] : [[flag, argument]])),
);
/** The switches: on when given, no value. */
const SWITCHES = TOOL_FLAGS.filter(({ flag, argument }) => argument === undefined && flag !== '--help').map(({ flag }) => flag);
const FLAGS = TOOL_FLAGS.map(({ flag, argument, short }) => [flag, short ?? argument].filter((part) => part !== undefined).join(' ')).join(
  ', ',
);
/**
 * A label selector as kubectl's -l takes it, `KEY=VALUE`, `KEY!=VALUE`, `KEY`, `!KEY`, `KEY in (A,B)`, `KEY notin
 * (A,B)`, comma-separated, as the API's LabelSelector; a string saying what is wrong.
 */
function parseSelector(text: string): LabelSelector | string {
  const matchLabels: Record<string, string> = {};
  const matchExpressions: NonNullable<LabelSelector['matchExpressions']>[number][] = [];
  const key = '([A-Za-z0-9][-A-Za-z0-9_./]*)';
  const value = '([-A-Za-z0-9_.]*)';
  const parts = text.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  for (const raw of parts.map((part) => part.trim()).filter((part) => part !== '')) {
    const set = new RegExp(`^${key}\\s+(in|notin)\\s*\\(([^)]*)\\)$`).exec(raw);
    const equal = new RegExp(`^${key}\\s*(==|=|!=)\\s*${value}$`).exec(raw);
    const exists = new RegExp(`^(!?)\\s*${key}$`).exec(raw);
    if (set !== null) {
      const values = (set[3] ?? '').split(',').map((item) => item.trim());
      if (values.some((item) => !new RegExp(`^${value}$`).test(item))) return `${JSON.stringify(raw)}: a value is not a label value`;
      matchExpressions.push({ key: set[1] as string, operator: set[2] === 'in' ? 'In' : 'NotIn', values });
    } else if (equal !== null) {
      if (equal[2] === '!=') matchExpressions.push({ key: equal[1] as string, operator: 'NotIn', values: [equal[3] as string] });
      else matchLabels[equal[1] as string] = equal[3] as string;
    } else if (exists !== null) {
      matchExpressions.push({ key: exists[2] as string, operator: exists[1] === '!' ? 'DoesNotExist' : 'Exists' });
    } else {
      return `${JSON.stringify(raw)} is not KEY=VALUE, KEY!=VALUE, KEY, !KEY, KEY in (A,B) or KEY notin (A,B)`;
    }
  }
  if (Object.keys(matchLabels).length === 0 && matchExpressions.length === 0)
    return 'an empty selector (it would select every namespace: leave it out)';
  return {
    ...(Object.keys(matchLabels).length === 0 ? {} : { matchLabels }),
    ...(matchExpressions.length === 0 ? {} : { matchExpressions }),
  };
}

/** Why a flag of the other tools means nothing to the policy, where that is not plain. */
const NOT_FOR_POLICY: Readonly<Record<string, string>> = {
  '--namespace': "the policy reads each object's own namespace",
  [ENTRYPOINT_FLAG]: "the API server does not show a policy an image's ENTRYPOINT",
};
/** The tools a flag goes with. */
const toolsOf = (flag: string): readonly Tool[] => TOOL_FLAGS.find((row) => row.flag === flag)?.tools ?? [];

/**
 * An image reference as the container runtimes take it: [HOST[:PORT]/]NAME[:TAG][@DIGEST], NAME's parts in
 * lower case (github.com/distribution/reference).
 */
const IMAGE_REFERENCE =
  /^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$/;

/** What the flags say, as they are read one by one, with what the environment says where a flag does not. */
interface Given {
  readonly checks: string[];
  readonly injects: string[];
  image?: string;
  native: boolean;
  wrapper: boolean;
  imageVolume: boolean;
  policy: boolean;
  kubernetes?: Version;
  readonly meshes: Map<string, Mesh>;
  configPath?: string;
  version?: PolicyVersion;
  selector?: LabelSelector;
  namespace?: string;
  readonly namespaces: Map<KindName, Set<string>>;
  readonly entrypoints: Map<string, readonly string[]>;
  readonly chosen: { format?: string; threshold?: string };
  readonly ignored: string[];
  ignoredBy: string;
  /** The flags given, in order: each must go with the tool asked for. */
  readonly flags: string[];
}

/** What each switch of the table turns on. */
const SWITCHED: Readonly<Record<string, 'native' | 'wrapper' | 'policy' | 'imageVolume'>> = {
  '--native': 'native',
  '--wrapper': 'wrapper',
  [TOOL_FLAG.policy]: 'policy',
  '--image-volume': 'imageVolume',
};

/** A choice flag of --check's output given once: its value kept in FIELD; what is wrong, after `FLAG: `. */
const choice =
  (flag: '--format' | '--failure-threshold', field: 'format' | 'threshold') =>
  (value: string, given: Given): string | undefined => {
    const allowed = VALUE_FLAGS[flag] as string;
    if (!allowed.split('|').includes(value)) return `${JSON.stringify(value)} is not one of ${allowed}`;
    if (given.chosen[field] !== undefined && given.chosen[field] !== value)
      return `given twice (${JSON.stringify(given.chosen[field])}, ${JSON.stringify(value)}): one of ${allowed}`;
    given.chosen[field] = value;
    return undefined;
  };

/** A value read by PARSE (a string: what is wrong) and kept in what the flags say by KEEP. */
const parsedInto =
  <T>(parse: (value: string) => T | string, keep: (parsed: T, given: Given) => void) =>
  (value: string, given: Given): string | undefined => {
    const parsed = parse(value);
    if (typeof parsed === 'string') return parsed;
    keep(parsed, given);
    return undefined;
  };

/** How each value flag of the table is read into what the flags say: what is wrong, after `FLAG: `, or undefined. */
const READERS: Readonly<Record<string, (value: string, given: Given) => string | undefined>> = {
  '--check': (value, given) => {
    given.checks.push(value);
    return undefined;
  },
  '--inject': (value, given) => {
    given.injects.push(value);
    return undefined;
  },
  '--image': (value, given) => {
    if (given.image !== undefined) return `given twice (${JSON.stringify(given.image)}, ${JSON.stringify(value)}): one IMAGE`;
    if (!IMAGE_REFERENCE.test(value)) return `${JSON.stringify(value)} is not an image reference (REGISTRY/NAME[:TAG][@DIGEST])`;
    given.image = value;
    return undefined;
  },
  [ENTRYPOINT_FLAG]: (value, given) => {
    const at = value.indexOf('=');
    const words = value
      .slice(at + 1)
      .trim()
      .split(/\s+/)
      .filter((word) => word !== '');
    if (at <= 0 || words.length === 0)
      return `${JSON.stringify(value)} is not CONTAINER=COMMAND (job=/app/migrate: the image's ENTRYPOINT, split on spaces)`;
    given.entrypoints.set(value.slice(0, at), words);
    return undefined;
  },
  [INJECTED_NAMESPACES_FLAG]: (value, given) => addInjectedNamespaces(value, given.namespaces),
  '--namespace': (value, given) => {
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value))
      return `${JSON.stringify(value)} is not a namespace name (lower-case letters, digits and -)`;
    given.namespace = value;
    return undefined;
  },
  '--kubernetes': parsedInto(parseKubernetes, (version, given) => {
    given.kubernetes = version;
  }),
  '--mesh': parsedInto(parseMesh, (mesh, given) => {
    given.meshes.set(mesh.name, mesh);
  }),
  [CONFIG_FLAG]: (value, given) => {
    if (given.configPath !== undefined && given.configPath !== value)
      return `given twice (${JSON.stringify(given.configPath)}, ${JSON.stringify(value)}): one FILE`;
    given.configPath = value;
    return undefined;
  },
  '--format': choice('--format', 'format'),
  '--failure-threshold': choice('--failure-threshold', 'threshold'),
  [IGNORE_FLAG]: (value, given) => {
    given.ignored.push(value);
    return undefined;
  },
  '--api-version': (value, given) => {
    if (!(POLICY_VERSIONS as readonly string[]).includes(value))
      return `${JSON.stringify(value)} is not one of ${POLICY_VERSIONS.join('|')}`;
    given.version = value as PolicyVersion;
    return undefined;
  },
  '--namespace-selector': parsedInto(parseSelector, (selector, given) => {
    given.selector = selector;
  }),
};

/** FLAG's VALUE read into GIVEN; the refusal, if any. */
function take(flag: string, value: string, given: Given): Request | undefined {
  if (value === '') return { kind: 'error', message: `${flag}: needs a value (${flag} ${VALUE_FLAGS[flag]}), not ""` };
  const problem = READERS[flag]?.(value, given);
  return problem === undefined ? undefined : { kind: 'error', message: `${flag}: ${problem}` };
}

/** What the variables say where their flags are not given: the namespaces that inject, and the rules to ignore. */
function fromEnvironment(argv: readonly string[], env: Env, given: Given): Request | undefined {
  if (!argv.some((arg) => arg.startsWith(INJECTED_NAMESPACES_FLAG))) {
    const fromEnv = env[INJECTED_NAMESPACES_VARIABLE];
    const problem = fromEnv === undefined ? undefined : addInjectedNamespaces(fromEnv, given.namespaces);
    if (problem !== undefined) return { kind: 'error', message: `${INJECTED_NAMESPACES_VARIABLE}: ${problem}` };
  }
  if (!argv.some((arg) => arg.startsWith(IGNORE_FLAG))) {
    given.ignored.push(env[IGNORE_VARIABLE] ?? '');
    given.ignoredBy = IGNORE_VARIABLE;
  }
  return undefined;
}

/** Each argument read by its row of the table: a switch, a value flag (now or once a FILE comes), or a FILE. */
function readArguments(argv: readonly string[], given: Given): Request | undefined {
  const waiting: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const equals = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const [flag, inlineValue] = equals > 0 ? [arg.slice(0, equals), arg.slice(equals + 1)] : [arg, undefined];
    let problem: Request | undefined;
    if (flag.startsWith('--')) given.flags.push(flag);
    if (SWITCHES.includes(flag)) {
      if (inlineValue !== undefined)
        return { kind: 'error', message: `${flag}: takes no value (${JSON.stringify(arg)}): it is on when given` };
      given[SWITCHED[flag] ?? 'imageVolume'] = true;
    } else if (VALUE_FLAGS[flag] !== undefined) {
      const next = argv[i + 1];
      if (inlineValue !== undefined) problem = take(flag, inlineValue, given);
      else if (next !== undefined && !flagLike(next)) problem = take(flag, argv[++i] as string, given);
      else waiting.push(flag);
    } else if (flagLike(arg)) {
      return { kind: 'error', message: `${JSON.stringify(arg)} is not an option of --check, --inject or ${TOOL_FLAG.policy} (${FLAGS})` };
    } else {
      // `--check a.yaml b.yaml`: a FILE after the files of --check or --inject is theirs too.
      const owner = waiting.shift() ?? (given.checks.length > 0 ? '--check' : given.injects.length > 0 ? '--inject' : undefined);
      if (owner === undefined)
        return { kind: 'error', message: `${JSON.stringify(arg)}: a FILE goes after --check or --inject (--check ${arg})` };
      problem = take(owner, arg, given);
    }
    if (problem !== undefined) return problem;
  }
  const unfilled = waiting[0];
  if (unfilled !== undefined) return { kind: 'error', message: `${unfilled}: needs a value (${unfilled} ${VALUE_FLAGS[unfilled]})` };
  return undefined;
}

/** The tool the flags ask for (undefined: none), each flag given going with it; or the refusal. */
function toolOf(given: Given): Tool | undefined | { readonly refused: Request } {
  const { checks, injects, policy } = given;
  if (checks.length > 0 && injects.length > 0) return { refused: { kind: 'error', message: '--check and --inject: use one at a time' } };
  if (policy && checks.length + injects.length > 0)
    return {
      refused: {
        kind: 'error',
        message: `${TOOL_FLAG.policy}: reads no FILE (it prints a policy for the cluster): leave out --check and --inject`,
      },
    };
  const tool: Tool | undefined = policy ? 'policy' : checks.length > 0 ? 'check' : injects.length > 0 ? 'inject' : undefined;
  const stray = given.flags.find((flag) => tool !== undefined && !toolsOf(flag).includes(tool));
  if (stray !== undefined && tool !== undefined) {
    const others = toolsOf(stray).map((owner) => TOOL_FLAG[owner]);
    const why = tool === 'policy' ? NOT_FOR_POLICY[stray] : undefined;
    const message = `${stray}: goes with ${others.join(' or ')}, not ${TOOL_FLAG[tool]}${why === undefined ? '' : `: ${why}`}`;
    return { refused: { kind: 'error', message } };
  }
  const policyOnly = given.flags.find((flag) => toolsOf(flag).every((owner) => owner === 'policy') && toolsOf(flag).length > 0);
  if (tool === undefined && policyOnly !== undefined)
    return { refused: { kind: 'error', message: `${policyOnly}: goes with ${TOOL_FLAG.policy}` } };
  return tool;
}

/** What the flags leave unsaid, from the config file: a flag beats it (an install by its NAME), and so does the variable. */
function fromConfig(config: ConfigValues | undefined, env: Env, given: Given): Request | undefined {
  for (const { value, line } of config?.values.get('--kubernetes') ?? []) {
    const parsed = parseKubernetes(value);
    if (typeof parsed === 'string') return { kind: 'error', message: `${config?.name}:${line}: kubernetes: ${parsed}` };
    given.kubernetes ??= parsed;
  }
  for (const { value, line } of config?.values.get('--mesh') ?? []) {
    const parsed = parseMesh(value);
    if (typeof parsed === 'string') return { kind: 'error', message: `${config?.name}:${line}: mesh: ${parsed}` };
    if (!given.meshes.has(parsed.name)) given.meshes.set(parsed.name, parsed);
  }
  for (const [flag, field] of [
    ['--format', 'format'],
    ['--failure-threshold', 'threshold'],
  ] as const) {
    for (const { value, line } of config?.values.get(flag) ?? []) {
      const allowed = VALUE_FLAGS[flag] as string;
      if (!allowed.split('|').includes(value))
        return { kind: 'error', message: `${config?.name}:${line}: ${flag.slice(2)}: ${JSON.stringify(value)} is not one of ${allowed}` };
      given.chosen[field] ??= value;
    }
  }
  const fileIgnores = config?.values.get(IGNORE_FLAG) ?? [];
  for (const { value, line } of fileIgnores) {
    const warning = ruleList(value, '').warnings[0];
    if (warning !== undefined)
      return { kind: 'error', message: `${config?.name}:${line}: ignore: ${warning.replace(/^: /, '').replace(/, ignored \(/, ' (')}` };
  }
  if (given.ignoredBy === IGNORE_VARIABLE && env[IGNORE_VARIABLE] === undefined && fileIgnores.length > 0) {
    given.ignored.splice(0, given.ignored.length, ...fileIgnores.map(({ value }) => value));
    given.ignoredBy = config?.name ?? IGNORE_VARIABLE;
  }
  return undefined;
}

/** What to run, from what the flags and the file say; a combination the tool refuses, said in one line. */
function requestOf(tool: Tool | undefined, given: Given): Request {
  const { checks, injects, image, native, wrapper, imageVolume, kubernetes, meshes, namespace, namespaces, selector } = given;
  const profile: Profile | undefined =
    kubernetes === undefined && meshes.size === 0
      ? undefined
      : { ...(kubernetes === undefined ? {} : { kubernetes }), meshes: [...meshes.values()] };
  const stated = profile === undefined ? {} : { profile };
  if (tool === 'policy') {
    if (image !== undefined && native) return { kind: 'error', message: '--image: --native adds no init container, so it takes no image' };
    if (imageVolume && native)
      return { kind: 'error', message: '--image-volume: --native adds no wrapper, so it mounts no image: use one of the two' };
    return {
      kind: 'policy',
      ...stated,
      native,
      imageVolume,
      version: given.version ?? POLICY_VERSIONS[0],
      namespaces,
      ...(image === undefined ? {} : { image }),
      ...(selector === undefined ? {} : { namespaceSelector: selector }),
    };
  }
  if (checks.length > 0) {
    const listed = ruleList(given.ignored.join(','), given.ignoredBy);
    return {
      kind: 'check',
      ...stated,
      files: checks,
      settings: { namespaces, ...(namespace === undefined ? {} : { namespace }), ...stated },
      output: {
        format: (given.chosen.format ?? 'text') as Format,
        threshold: (given.chosen.threshold ?? DEFAULT_THRESHOLD) as Threshold,
        ignore: new Set(listed.rules),
        warnings: listed.warnings,
      },
    };
  }
  if (injects.length === 0) return { kind: 'error', message: `--check FILE, --inject FILE or ${TOOL_FLAG.policy} is needed` };
  if (image !== undefined && native)
    return { kind: 'error', message: '--image: --inject --native adds no init container, so it takes no image' };
  if (imageVolume && native)
    return { kind: 'error', message: '--image-volume: --inject --native adds no wrapper, so it mounts no image: use one of the two' };
  if (native && wrapper) return { kind: 'error', message: '--wrapper: --native asks for native sidecars only: use one of the two' };
  return {
    kind: 'inject',
    ...stated,
    files: injects,
    native,
    wrapper,
    imageVolume,
    ...(image === undefined ? {} : { image }),
    settings: { namespaces, entrypoints: given.entrypoints, ...(namespace === undefined ? {} : { namespace }), ...stated },
  };
}

/**
 * --check FILE (repeatable) | --inject FILE (repeatable) [--image IMAGE] [--native] ..., in any order; `--flag=value`
 * too. A value flag followed by another flag takes the next argument that is none: `--inject --native FILE`. FILES:
 * where the config file is looked for and read (none: no config file is read).
 */
export function parseFlags(argv: readonly string[], env: Env, files?: ConfigFiles): Request {
  const given: Given = {
    checks: [],
    injects: [],
    native: false,
    wrapper: false,
    imageVolume: false,
    policy: false,
    meshes: new Map(),
    namespaces: new Map(),
    entrypoints: new Map(),
    chosen: {},
    ignored: [],
    ignoredBy: IGNORE_FLAG,
    flags: [],
  };
  if (argv.includes('--help') || argv.includes('-h')) return { kind: 'help' };
  const refused = fromEnvironment(argv, env, given) ?? readArguments(argv, given);
  if (refused !== undefined) return refused;
  const tool = toolOf(given);
  if (typeof tool === 'object') return tool.refused;
  const config = loadConfig(given.configPath, files);
  if (typeof config === 'string') return { kind: 'error', message: config };
  return fromConfig(config, env, given) ?? requestOf(tool, given);
}

/** The config file's values: FILE of --config, else the default file where there is one; a string saying what is wrong. */
function loadConfig(path: string | undefined, files: ConfigFiles | undefined): ConfigValues | string | undefined {
  const chosen = path ?? (files === undefined ? undefined : defaultConfig(files));
  if (chosen === undefined) return undefined;
  let text: string | undefined;
  try {
    text = files?.read(chosen);
  } catch (error) {
    return `${CONFIG_FLAG}: ${chosen}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  if (text === undefined) return `${CONFIG_FLAG}: ${chosen}: no such file`;
  return readConfig(chosen, text);
}

/** The plugin's usage of COMMAND: -f FILE, then its flags of the table. */
function pluginUsage(command: Tool): string {
  const options = TOOL_FLAGS.filter((row) => row.mode !== true && row.flag !== '--help' && row.tools.includes(command));
  return [
    '-f FILE',
    ...options.map((row) => `[${[row.pluginShort ?? row.flag, row.short ?? row.argument].filter(Boolean).join(' ')}]`),
  ].join(' ');
}

/** `check -f FILE...` | `inject -f FILE... [--image IMAGE] [--native|--image-volume]`, kubectl's way, into the flags. */
export function parsePlugin(argv: readonly string[], env: Env, files?: ConfigFiles): Request {
  const [command, ...rest] = argv;
  if (command === undefined) return { kind: 'error', message: 'needs a command: check, inject, profile or doctor' };
  if (command === 'help' || command === '--help' || command === '-h') return { kind: 'help' };
  if (command !== 'check' && command !== 'inject') {
    return {
      kind: 'error',
      message: `${JSON.stringify(command)} is not a command of ${PLUGIN_NAME} (check, inject, profile, doctor, help)`,
    };
  }
  const flags: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    const file = /^(?:-f|--filename)(?:=(.*))?$/.exec(arg) ?? /^-f(.+)$/.exec(arg);
    if (file !== null) {
      const value = file[1] ?? rest[++i];
      if (value === undefined || value === '')
        return { kind: 'error', message: `${command}: -f needs a file or directory (-f FILE, -f DIR, or -f - for stdin)` };
      flags.push(`--${command}=${value}`);
    } else if (arg === '--help' || arg === '-h') {
      return { kind: 'help' };
    } else {
      const [name = arg] = arg.split('=', 1);
      const row = TOOL_FLAGS.find(
        (candidate) =>
          candidate.mode !== true && candidate.tools.includes(command) && (candidate.flag === name || candidate.pluginShort === arg),
      );
      if (row === undefined)
        return { kind: 'error', message: `${command}: ${JSON.stringify(arg)} is not an option (${pluginUsage(command)})` };
      flags.push(row.pluginShort === arg ? row.flag : arg);
      if (!arg.includes('=') && row.argument !== undefined && rest[i + 1] !== undefined) flags.push(rest[++i] as string);
    }
  }
  if (!flags.some((flag) => flag.startsWith(`--${command}=`)))
    return { kind: 'error', message: `${command}: needs -f FILE (or -f - for stdin)` };
  return parseFlags(flags, env, files);
}
