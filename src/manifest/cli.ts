// The manifest tools' command lines: `istio-job-run --check FILE...` and `istio-job-run --inject FILE [--image
// IMAGE] [--native]`, and the same as the kubectl plugin (`kubectl istio-job-run check -f FILE`, `inject -f FILE
// ...`), which is translated into the flags first, so both give the same bytes. FILE `-` is stdin (a Helm
// post-renderer: `--post-renderer istio-job-run --post-renderer-args --inject --post-renderer-args -`).
// Exit codes: 0 clean, 1 an error found (--check) or a pod refused (--inject), 2 a file that cannot be read or
// parsed (past MAX_INPUT_MIB or the room an address-space limit leaves, nested too deeply), a usage error, or a
// stdout that cannot be written.

import { PROGRAM } from '../bundle/self.ts';
import type { KindName } from '../config/kinds.ts';
import { ENTRYPOINT_FLAG, inject } from './inject.ts';
import { type AddressSpace, inputRoom, inputTooLarge, parserMemory, type Room, tooSmall } from './memory.ts';
import { addInjectedNamespaces, INJECTED_NAMESPACES_FLAG, INJECTED_NAMESPACES_VARIABLE } from './pod.ts';
import { type CheckSettings, check, RULES } from './rules.ts';
import { EXIT_TOOL_USAGE, PLUGIN_NAME } from './select.ts';
import { loadShellParserWithin } from './shell.ts';
import { parseSource, type Source } from './source.ts';

export interface ManifestIo {
  /** The file's text; `-` is stdin. Throws as readFileSync does, and EFBIG as soon as it is past maxBytes. */
  readonly readFile: (path: string, maxBytes: number) => string;
  /** The names in a directory; undefined for anything else (stdin, a file). Throws as statSync does. */
  readonly listDir: (path: string) => readonly string[] | undefined;
  /** Writes all of the text; throws as writeSync does (EPIPE, ENOSPC, EBADF). */
  readonly stdout: (text: string) => void;
  /** One line, without the program's prefix. */
  readonly stderr: (line: string) => void;
  /** The environment (ISTIO_JOB_RUN_INJECTED_NAMESPACES); none in tests that leave it out. */
  readonly env?: Env;
  /** The address-space limit and what is mapped now (memory.ts); none without a limit. */
  readonly addressSpace?: () => AddressSpace | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

const EXIT_FOUND = 1;
const EXIT_USAGE = EXIT_TOOL_USAGE;

/**
 * The largest file read: 64 MiB, over 40 times the 1.5 MiB that etcd (so the Kubernetes API server) takes in
 * one request. Nothing larger is a manifest; reading stops there (an endless stdin, /dev/zero).
 */
export const MAX_INPUT_MIB = 64;
const MAX_INPUT_BYTES = MAX_INPUT_MIB * 1024 * 1024;
/** What the kubectl plugin's -f DIR reads in a directory, as kubectl's -f does (not recursive, in name order). */
const MANIFEST_FILE = /\.(ya?ml|json)$/;

type Request =
  | { readonly kind: 'check'; readonly files: readonly string[]; readonly settings: CheckSettings }
  | {
      readonly kind: 'inject';
      readonly files: readonly string[];
      readonly image?: string;
      readonly native: boolean;
      readonly settings: CheckSettings & { readonly entrypoints: ReadonlyMap<string, readonly string[]> };
    }
  | { readonly kind: 'help' }
  | { readonly kind: 'error'; readonly message: string };

/** Runs the tools; returns the exit code. `invokedAs` is the name the executable was started by. */
export async function runManifest(argv: readonly string[], invokedAs: string, version: string, io: ManifestIo): Promise<number> {
  const plugin = invokedAs.slice(invokedAs.lastIndexOf('/') + 1) === PLUGIN_NAME;
  const request = plugin ? parsePlugin(argv, io.env ?? {}) : parseFlags(argv, io.env ?? {});
  if (request.kind === 'help') return write(io, usage(plugin, version)) === 'failed' ? EXIT_USAGE : 0;
  if (request.kind === 'error') {
    io.stderr(`${request.message} (see ${plugin ? `${PLUGIN_NAME} help` : `${PROGRAM} --help`})`);
    return EXIT_USAGE;
  }
  const before = io.addressSpace?.();
  const small = tooSmall(before);
  if (small !== undefined) {
    io.stderr(small);
    return EXIT_USAGE;
  }
  await loadShellParserWithin(parserMemory(before));
  const files = plugin ? expandDirectories(request.files, io) : request.files;
  const now = io.addressSpace?.();
  const room = before === undefined || now === undefined ? undefined : { before, now };
  if (request.kind === 'check') return runCheck(files, request.settings, io, room);
  return runInject(files, request, `${PROGRAM}:${version}`, io, room);
}

/** A file or directory that cannot be used, said as one line. */
interface Unusable {
  readonly problem: string;
}

/** -f DIR: the directory's .yaml, .yml and .json files in name order; every other FILE as it is. */
function expandDirectories(files: readonly string[], io: ManifestIo): readonly (string | Unusable)[] {
  return files.flatMap((file): (string | Unusable)[] => {
    let names: readonly string[] | undefined;
    try {
      names = io.listDir(file);
    } catch {
      return [file]; // read as a file, which says why it cannot be
    }
    if (names === undefined) return [file];
    const found = names.filter((name) => MANIFEST_FILE.test(name)).sort();
    if (found.length === 0) return [{ problem: `${file}: a directory with no .yaml, .yml or .json file in it` }];
    return found.map((name) => `${file.replace(/\/+$/, '')}/${name}`);
  });
}

/** The file parsed, or one line saying why it cannot be (a size the address space has no room for, too). */
function read(path: string | Unusable, io: ManifestIo, room: Room | undefined): Source | Unusable {
  if (typeof path !== 'string') return path;
  const name = path === '-' ? '<stdin>' : path;
  let content: string;
  const most = inputRoom(room);
  try {
    content = io.readFile(path, Math.min(MAX_INPUT_BYTES, most));
  } catch (error) {
    const { code, size } = error as NodeJS.ErrnoException & { size?: number };
    const noRoom = code === 'EFBIG' ? most < MAX_INPUT_BYTES && !(size !== undefined && size > MAX_INPUT_BYTES) : outOfMemory(error);
    if (room !== undefined && noRoom) return { problem: inputTooLarge(name, room, size, MAX_INPUT_BYTES) };
    if (code === 'EFBIG') return { problem: `${name}: larger than ${MAX_INPUT_MIB} MiB, the limit of a manifest file` };
    return { problem: `${name}: cannot be read (${code ?? (error as Error).message})` };
  }
  const parsed = guarded(name, () => parseSource(name, content));
  if ('problem' in parsed) return parsed;
  if ('error' in parsed) return { problem: parsed.error.replace(/Maximum call stack size exceeded$/, TOO_DEEP) };
  return parsed;
}

const TOO_DEEP = 'nested too deeply';

/** A buffer that could not be allocated: Node's code for it, or V8's RangeError. */
const outOfMemory = (error: unknown): boolean =>
  (error as NodeJS.ErrnoException).code === 'ERR_MEMORY_ALLOCATION_FAILED' || error instanceof RangeError;

/** What a file nested deeper than the stack (100,000 `[`) makes the parser or the rules throw: one line. */
function guarded<T>(name: string, work: () => T): T | Unusable {
  try {
    return work();
  } catch (error) {
    if ((error as Error | undefined)?.name !== 'RangeError') throw error;
    return { problem: `${name}: not YAML: ${TOO_DEEP}` };
  }
}

type Written = 'written' | 'reader-gone' | 'failed';

/** Text to stdout. A reader that left (EPIPE: `| head -1`, `grep -q`) had what it wanted: quiet. */
function write(io: ManifestIo, text: string): Written {
  if (text === '') return 'written';
  try {
    io.stdout(text);
    return 'written';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EPIPE') return 'reader-gone';
    io.stderr(`stdout cannot be written (${code ?? (error as Error).message})`);
    return 'failed';
  }
}

function runCheck(files: readonly (string | Unusable)[], settings: CheckSettings, io: ManifestIo, room?: Room): number {
  let code = 0;
  let readerGone = false;
  for (const file of files) {
    const source = read(file, io, room);
    if ('problem' in source) {
      io.stderr(source.problem);
      code = EXIT_USAGE;
      continue;
    }
    const findings = guarded(source.name, () => check(source, settings));
    if ('problem' in findings) {
      io.stderr(findings.problem);
      code = EXIT_USAGE;
      continue;
    }
    const lines = findings.map((finding) => `${source.name}:${finding.line}: ${finding.level}: ${finding.rule}: ${finding.message}\n`);
    if (code === 0 && findings.some((finding) => finding.level === 'error')) code = EXIT_FOUND;
    // Once the reader is gone, the other files are still checked: the exit code is theirs too.
    const written: Written = readerGone ? 'reader-gone' : write(io, lines.join(''));
    if (written === 'failed') return EXIT_USAGE;
    readerGone = written === 'reader-gone';
  }
  return code;
}

function runInject(
  files: readonly (string | Unusable)[],
  request: Extract<Request, { kind: 'inject' }>,
  defaultImage: string,
  io: ManifestIo,
  room?: Room,
): number {
  const texts: string[] = [];
  const problems: string[] = [];
  const notes: string[] = [];
  for (const file of files) {
    const source = read(file, io, room);
    if ('problem' in source) {
      io.stderr(source.problem);
      return EXIT_USAGE;
    }
    const result = guarded(source.name, () =>
      inject(source, { image: request.image ?? defaultImage, native: request.native, ...request.settings }),
    );
    if ('problem' in result) {
      io.stderr(result.problem);
      return EXIT_USAGE;
    }
    if (result.kind === 'refused') problems.push(...result.problems);
    else {
      texts.push(result.text);
      notes.push(...result.notes);
    }
  }
  if (problems.length > 0) {
    for (const problem of problems) io.stderr(problem);
    io.stderr(`--inject: nothing written: ${problems.length === 1 ? 'a pod' : `${problems.length} pods`} cannot be rewritten safely`);
    return EXIT_FOUND;
  }
  for (const note of notes) io.stderr(note);
  return write(io, joinDocuments(texts)) === 'failed' ? EXIT_USAGE : 0;
}

/** Several files' text as one stream of YAML documents, as kubectl reads -f DIR: a `---` between two files. */
function joinDocuments(texts: readonly string[]): string {
  let out = texts[0] ?? '';
  for (const text of texts.slice(1)) {
    const eol = /\r\n/.test(text) ? '\r\n' : '\n';
    if (out !== '' && !out.endsWith('\n')) out += eol;
    out += (/^---(\s|$)/.test(text) ? '' : `---${eol}`) + text;
  }
  return out;
}

/** The value flags, and what each takes. */
const VALUE_FLAGS: Readonly<Record<string, string>> = {
  '--check': 'FILE',
  '--inject': 'FILE',
  '--image': 'IMAGE',
  [`--${INJECTED_NAMESPACES_FLAG}`]: '[KIND=]NAMESPACE,...',
  '--namespace': 'NAMESPACE',
  [ENTRYPOINT_FLAG]: 'CONTAINER=COMMAND',
};
const FLAGS = `--check FILE, --inject FILE, --image IMAGE, --native, --${INJECTED_NAMESPACES_FLAG} LIST, --namespace NAMESPACE, ${ENTRYPOINT_FLAG} CONTAINER=COMMAND, --help`;
/** An argument that is a flag, not a value: `-` alone is stdin. */
const flagLike = (arg: string): boolean => arg.startsWith('-') && arg !== '-';

/**
 * An image reference as the container runtimes take it: [HOST[:PORT]/]NAME[:TAG][@DIGEST], NAME's parts in
 * lower case (github.com/distribution/reference).
 */
const IMAGE_REFERENCE =
  /^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$/;

/**
 * --check FILE (repeatable) | --inject FILE (repeatable) [--image IMAGE] [--native], in any order; `--flag=value`
 * too. A value flag followed by another flag takes the next argument that is none: `--inject --native FILE`.
 */
function parseFlags(argv: readonly string[], env: Env): Request {
  const checks: string[] = [];
  const injects: string[] = [];
  let image: string | undefined;
  let native = false;
  let namespace: string | undefined;
  const namespaces = new Map<KindName, Set<string>>();
  const entrypoints = new Map<string, readonly string[]>();
  if (argv.includes('--help') || argv.includes('-h')) return { kind: 'help' };
  if (!argv.some((arg) => arg.startsWith(`--${INJECTED_NAMESPACES_FLAG}`))) {
    const fromEnv = env[INJECTED_NAMESPACES_VARIABLE];
    const problem = fromEnv === undefined ? undefined : addInjectedNamespaces(fromEnv, namespaces);
    if (problem !== undefined) return { kind: 'error', message: `${INJECTED_NAMESPACES_VARIABLE}: ${problem}` };
  }
  const waiting: string[] = [];
  const take = (flag: string, value: string): Request | undefined => {
    if (value === '') return { kind: 'error', message: `${flag}: needs a value (${flag} ${VALUE_FLAGS[flag]}), not ""` };
    if (flag === `--${INJECTED_NAMESPACES_FLAG}`) {
      const problem = addInjectedNamespaces(value, namespaces);
      return problem === undefined ? undefined : { kind: 'error', message: `${flag}: ${problem}` };
    }
    if (flag === '--namespace') {
      if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value))
        return {
          kind: 'error',
          message: `--namespace: ${JSON.stringify(value)} is not a namespace name (lower-case letters, digits and -)`,
        };
      namespace = value;
      return undefined;
    }
    if (flag === ENTRYPOINT_FLAG) {
      const at = value.indexOf('=');
      const words = value
        .slice(at + 1)
        .trim()
        .split(/\s+/)
        .filter((word) => word !== '');
      if (at <= 0 || words.length === 0)
        return {
          kind: 'error',
          message: `${flag}: ${JSON.stringify(value)} is not CONTAINER=COMMAND (job=/app/migrate: the image's ENTRYPOINT, split on spaces)`,
        };
      entrypoints.set(value.slice(0, at), words);
      return undefined;
    }
    if (flag === '--check') checks.push(value);
    else if (flag === '--inject') injects.push(value);
    else if (image !== undefined)
      return { kind: 'error', message: `--image: given twice (${JSON.stringify(image)}, ${JSON.stringify(value)}): one IMAGE` };
    else if (!IMAGE_REFERENCE.test(value))
      return { kind: 'error', message: `--image: ${JSON.stringify(value)} is not an image reference (REGISTRY/NAME[:TAG][@DIGEST])` };
    else image = value;
    return undefined;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const equals = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const [flag, inlineValue] = equals > 0 ? [arg.slice(0, equals), arg.slice(equals + 1)] : [arg, undefined];
    let problem: Request | undefined;
    if (flag === '--native') {
      if (inlineValue !== undefined)
        return { kind: 'error', message: `--native: takes no value (${JSON.stringify(arg)}): it is on when given` };
      native = true;
    } else if (VALUE_FLAGS[flag] !== undefined) {
      const next = argv[i + 1];
      if (inlineValue !== undefined) problem = take(flag, inlineValue);
      else if (next !== undefined && !flagLike(next)) problem = take(flag, argv[++i] as string);
      else waiting.push(flag);
    } else if (flagLike(arg)) {
      return { kind: 'error', message: `${JSON.stringify(arg)} is not an option of --check or --inject (${FLAGS})` };
    } else {
      // `--check a.yaml b.yaml`: a FILE after the files of --check or --inject is theirs too.
      const owner = waiting.shift() ?? (checks.length > 0 ? '--check' : injects.length > 0 ? '--inject' : undefined);
      if (owner === undefined)
        return { kind: 'error', message: `${JSON.stringify(arg)}: a FILE goes after --check or --inject (--check ${arg})` };
      problem = take(owner, arg);
    }
    if (problem !== undefined) return problem;
  }
  const unfilled = waiting[0];
  if (unfilled !== undefined) return { kind: 'error', message: `${unfilled}: needs a value (${unfilled} ${VALUE_FLAGS[unfilled]})` };
  if (checks.length > 0 && injects.length > 0) return { kind: 'error', message: '--check and --inject: use one at a time' };
  if (checks.length > 0) {
    if (image !== undefined || native)
      return { kind: 'error', message: `${image === undefined ? '--native' : '--image'}: goes with --inject, not --check` };
    if (entrypoints.size > 0) return { kind: 'error', message: `${ENTRYPOINT_FLAG}: goes with --inject, not --check` };
    return { kind: 'check', files: checks, settings: { namespaces, ...(namespace === undefined ? {} : { namespace }) } };
  }
  if (injects.length === 0) return { kind: 'error', message: '--check FILE or --inject FILE is needed' };
  if (image !== undefined && native)
    return { kind: 'error', message: '--image: --inject --native adds no init container, so it takes no image' };
  return {
    kind: 'inject',
    files: injects,
    native,
    ...(image === undefined ? {} : { image }),
    settings: { namespaces, entrypoints, ...(namespace === undefined ? {} : { namespace }) },
  };
}

/** `check -f FILE...` | `inject -f FILE... [--image IMAGE] [--native]`, kubectl's way, into the flags. */
function parsePlugin(argv: readonly string[], env: Env): Request {
  const [command, ...rest] = argv;
  if (command === undefined) return { kind: 'error', message: 'needs a command: check or inject' };
  if (command === 'help' || command === '--help' || command === '-h') return { kind: 'help' };
  if (command !== 'check' && command !== 'inject') {
    return { kind: 'error', message: `${JSON.stringify(command)} is not a command of ${PLUGIN_NAME} (check, inject, help)` };
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
    } else if (arg === '-n') {
      flags.push('--namespace', rest[++i] ?? '');
    } else if (
      /^--(namespace|injected-namespaces)(=|$)/.test(arg) ||
      (command === 'inject' && /^--(image|native|entrypoint)(=|$)/.test(arg))
    ) {
      flags.push(arg);
      if (!arg.includes('=') && arg !== '--native' && rest[i + 1] !== undefined) flags.push(rest[++i] as string);
    } else {
      return {
        kind: 'error',
        message: `${command}: ${JSON.stringify(arg)} is not an option (${command === 'check' ? '-f FILE [-n NAMESPACE] [--injected-namespaces LIST]' : '-f FILE [--image IMAGE] [--native] [--entrypoint CONTAINER=COMMAND] [-n NAMESPACE] [--injected-namespaces LIST]'})`,
      };
    }
  }
  if (!flags.some((flag) => flag.startsWith(`--${command}=`)))
    return { kind: 'error', message: `${command}: needs -f FILE (or -f - for stdin)` };
  return parseFlags(flags, env);
}

function usage(plugin: boolean, version: string): string {
  const [check, inject] = plugin
    ? [
        `${PLUGIN_NAME} check -f FILE|DIR [-f ...] [OPTIONS]`,
        `${PLUGIN_NAME} inject -f FILE|DIR [-f ...] [--image IMAGE] [--native] [OPTIONS]`,
      ]
    : [`${PROGRAM} --check FILE... [OPTIONS]`, `${PROGRAM} --inject FILE... [--image IMAGE] [--native] [OPTIONS]`];
  const width = Math.max(...Object.keys(RULES).map((rule) => rule.length));
  return [
    `${PROGRAM} ${version}: the manifest tools`,
    '',
    `Usage: ${check}`,
    `       ${inject}`,
    '',
    'FILE is YAML with any number of documents (a kind: List too); - reads stdin.',
    ...(plugin ? ['-f DIR reads the .yaml, .yml and .json files in DIR (not below it), in name order.'] : []),
    `A FILE larger than ${MAX_INPUT_MIB} MiB is refused (the Kubernetes API server takes 1.5 MiB in one`,
    'object); so is one nested too deeply to parse. Flags go in any order; --flag=VALUE too.',
    '',
    'check: one line per finding on stdout, FILE:LINE: error|warning: RULE: what to do',
    'instead. Exit 0 without errors, 1 with one, 2 when a FILE cannot be read or parsed.',
    'Rules:',
    ...Object.entries(RULES).map(([rule, { level }]) => `  ${rule.padEnd(width)}  ${level}`),
    '',
    'A pod gets a sidecar when its template shows one (an injection label or annotation,',
    'a sidecar container); a Job that shows none is clean, unless its namespace injects:',
    `  --${INJECTED_NAMESPACES_FLAG} [KIND=]NAMESPACE,...  namespaces whose pods get KIND (istio`,
    `      when left out; * is every namespace); or ${INJECTED_NAMESPACES_VARIABLE}`,
    `  ${plugin ? '-n, ' : ''}--namespace NAMESPACE  of objects that name none (default: default)`,
    '',
    'inject: writes FILE back to stdout with each Job, CronJob and bare Pod whose classic',
    'sidecar nothing stops rewritten to run under istio-job-run, set up for the sidecars',
    `it has: an emptyDir, an init container from IMAGE (default ${PROGRAM}:${version}) that`,
    "--installs it there, the job container's command prefixed with it. Everything else",
    'stays byte for byte. A pod it cannot rewrite safely is named on stderr; then nothing',
    'is written and the exit is 1. Several FILEs come out as one stream, a --- between two.',
    '--native: only add sidecar.istio.io/nativeSidecar: "true" to those pod templates',
    '(every node Kubernetes 1.29+, Istio 1.24+).',
    `${ENTRYPOINT_FLAG} CONTAINER=COMMAND: the command of a container that writes none (its`,
    "image's ENTRYPOINT, split on spaces), so --inject can prefix it.",
    '',
    'Exit 2 also for a usage error, and for a stdout that cannot be written (a full disk,',
    'a closed stdout); a reader that leaves early (| head -1) is not an error. TERM, INT',
    'and HUP end it at once with 128+N (143, 130, 129).',
    '',
  ].join('\n');
}
