// The manifest tools' command lines: `istio-job-run --check FILE...` and `istio-job-run --inject FILE [--image
// IMAGE] [--native]`, and the same as the kubectl plugin (`kubectl istio-job-run check -f FILE`, `inject -f FILE
// ...`), which is translated into the flags first, so both give the same bytes. FILE `-` is stdin (a Helm
// post-renderer: `--post-renderer istio-job-run --post-renderer-args --inject --post-renderer-args -`).
// Exit codes: 0 clean, 1 an error found (--check) or a pod refused (--inject), 2 a file that cannot be read or
// parsed (past MAX_INPUT_MIB or the room an address-space limit leaves, nested too deeply), a usage error, or a
// stdout that cannot be written.

import { PROGRAM } from '../../bundle/self.ts';
import { wrap } from '../../config/help.ts';
import { LEVELS, TOOL_FLAG, TOOL_FLAGS } from '../../config/tool-flags.ts';
import { advised, inject } from '../inject/inject.ts';
import { admissionPolicy } from '../inject/policy.ts';
import { type CheckSettings, RULE_SUMMARIES } from '../check/rules.ts';
import { type CheckOutput, type Env, parseFlags, parsePlugin, type Request } from './flags.ts';
import type { ConfigFiles } from './config-file.ts';
import { NO_PROFILE } from '../../config/profile.ts';
import { fails, type Located, textLine, toJson, toSarif } from './report.ts';
import { asPlugin, EXIT_TOOL_USAGE, PLUGIN_NAME } from './select.ts';
import { CLUSTER_COMMANDS, CLUSTER_FLAGS, isClusterCommand, runCluster } from './cluster.ts';
import type { Kubectl } from '../cluster/kubectl.ts';
import { loadShellParserWithin } from '../script/shell.ts';
import { IGNORE_ANNOTATION, IGNORE_COMMENT, noneSuppressed, suppressedLine, unsuppressed } from './suppress.ts';
import { type AddressSpace, inputRoom, inputTooLarge, parserMemory, type Room, tooSmall } from '../yaml/memory.ts';
import { parseSource, type Source } from '../yaml/source.ts';

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
  /** Where the config file is looked for and read; none: no config file is read. */
  readonly configFiles?: ConfigFiles;
  /** Runs the user's kubectl (the plugin's profile and doctor); none: they cannot run. */
  readonly kubectl?: Kubectl;
}

const EXIT_FOUND = 1;
const EXIT_USAGE = EXIT_TOOL_USAGE;

/**
 * The largest file read: 64 MiB, over 40 times the 1.5 MiB that etcd (so the Kubernetes API server) takes in
 * one request. Nothing larger is a manifest; reading stops there (an endless stdin, /dev/zero).
 */
export const MAX_INPUT_MIB = 64;
const MAX_INPUT_BYTES = MAX_INPUT_MIB * 1024 * 1024;
/** What a DIR (the kubectl plugin's -f DIR) reads in a directory, as kubectl's -f does (not recursive, in name order). */
const MANIFEST_FILE = /\.(ya?ml|json)$/;

/** Runs the tools; returns the exit code. `invokedAs` is the name the executable was started by. */
export async function runManifest(argv: readonly string[], invokedAs: string, version: string, io: ManifestIo): Promise<number> {
  const plugin = asPlugin(invokedAs);
  const [command, ...rest] = argv;
  if (plugin && isClusterCommand(command)) {
    if (rest.includes('--help') || rest.includes('-h')) return write(io, usage(plugin, version)) === 'failed' ? EXIT_USAGE : 0;
    let failed = false;
    const code = await runCluster(command, rest, {
      kubectl:
        io.kubectl ??
        (async () => ({ status: null, stdout: '', stderr: '', error: Object.assign(new Error('no kubectl'), { code: 'ENOENT' }) })),
      stdout: (text) => {
        failed ||= write(io, text) === 'failed';
      },
      stderr: io.stderr,
    });
    return failed ? EXIT_USAGE : code;
  }
  const request = plugin ? parsePlugin(argv, io.env ?? {}, io.configFiles) : parseFlags(argv, io.env ?? {}, io.configFiles);
  if (request.kind === 'help') return write(io, usage(plugin, version)) === 'failed' ? EXIT_USAGE : 0;
  if (request.kind === 'error') {
    io.stderr(`${request.message} (see ${plugin ? `${PLUGIN_NAME} help` : `${PROGRAM} --help`})`);
    return EXIT_USAGE;
  }
  // Without a profile, once the run has read its manifests and its reader is still there: what it assumed.
  let readerGone = false;
  const watched: ManifestIo = {
    ...io,
    stdout: (text) => {
      try {
        io.stdout(text);
      } catch (error) {
        readerGone ||= (error as NodeJS.ErrnoException).code === 'EPIPE';
        throw error;
      }
    },
  };
  const code = await runTool(request, version, watched);
  if (request.profile === undefined && (code === 0 || code === EXIT_FOUND) && !readerGone) io.stderr(NO_PROFILE);
  return code;
}

/** The tool the request asks for, run; its exit code. */
async function runTool(request: Exclude<Request, { kind: 'help' | 'error' }>, version: string, io: ManifestIo): Promise<number> {
  if (request.kind === 'policy') {
    const text = admissionPolicy({ ...request, image: request.image ?? `${PROGRAM}:${version}` });
    return write(io, text) === 'failed' ? EXIT_USAGE : 0;
  }
  const before = io.addressSpace?.();
  const small = tooSmall(before);
  if (small !== undefined) {
    io.stderr(small);
    return EXIT_USAGE;
  }
  await loadShellParserWithin(parserMemory(before));
  const files = expandDirectories(request.files, io);
  const now = io.addressSpace?.();
  const room = before === undefined || now === undefined ? undefined : { before, now };
  if (request.kind === 'check') return runCheck(files, request.settings, { ...request.output, version }, io, room);
  return runInject(files, request, `${PROGRAM}:${version}`, io, room);
}

/** A file or directory that cannot be used, said as one line. */
interface Unusable {
  readonly problem: string;
}

/** DIR (-f DIR): the directory's .yaml, .yml and .json files in name order; every other FILE as it is. */
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
    // Only a stack overflow is depth; V8's other RangeErrors are sizes (a string or an array longer than it makes).
    if (!/call stack/.test((error as Error).message)) return { problem: `${name}: too large to read (${(error as Error).message})` };
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

function runCheck(
  files: readonly (string | Unusable)[],
  settings: CheckSettings,
  output: CheckOutput & { readonly version: string },
  io: ManifestIo,
  room?: Room,
): number {
  let code = 0;
  let readerGone = false;
  const all: Located[] = [];
  const suppressed = noneSuppressed();
  for (const warning of output.warnings) io.stderr(warning);
  for (const file of files) {
    const source = read(file, io, room);
    if ('problem' in source) {
      io.stderr(source.problem);
      code = EXIT_USAGE;
      continue;
    }
    // The advice to run --inject, as --inject would do for this file.
    const findings = guarded(source.name, () => advised(source, settings));
    if ('problem' in findings) {
      io.stderr(findings.problem);
      code = EXIT_USAGE;
      continue;
    }
    const warnings: string[] = [];
    const kept = unsuppressed(source, findings, output.ignore, suppressed, warnings).map((finding) => ({ ...finding, file: source.name }));
    for (const warning of warnings) io.stderr(warning);
    if (code === 0 && kept.some((finding) => fails(finding.level, output.threshold))) code = EXIT_FOUND;
    if (output.format !== 'text') {
      all.push(...kept);
      continue;
    }
    // Once the reader is gone, the other files are still checked: the exit code is theirs too.
    const written: Written = readerGone ? 'reader-gone' : write(io, kept.map(textLine).join(''));
    if (written === 'failed') return EXIT_USAGE;
    readerGone = written === 'reader-gone';
  }
  const summary = suppressedLine(suppressed);
  if (summary !== undefined) io.stderr(summary);
  if (output.format === 'text') return code;
  const text = output.format === 'json' ? toJson(all) : toSarif(all, output.version);
  return write(io, text) === 'failed' ? EXIT_USAGE : code;
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
      inject(source, {
        image: request.image ?? defaultImage,
        native: request.native,
        wrapper: request.wrapper,
        imageVolume: request.imageVolume,
        ...request.settings,
      }),
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

/** Each flag of the table with its argument, its variable, the tools that take it and its help. */
function flagLines(plugin: boolean): string[] {
  return TOOL_FLAGS.filter((row) => !(plugin && row.mode === true)).flatMap(({ flag, argument, pluginShort, tools, variable, help }) => [
    `  ${plugin && pluginShort !== undefined ? `${pluginShort}, ` : ''}${flag}${argument === undefined ? '' : ` ${argument}`}` +
      `${variable === undefined ? '' : ` (or ${variable})`}  [${tools.join(', ')}]`,
    ...wrap(help, 80).map((line) => `      ${line}`),
  ]);
}

function usage(plugin: boolean, version: string): string {
  const [check, inject] = plugin
    ? [`${PLUGIN_NAME} check -f FILE|DIR [-f ...] [OPTIONS]`, `${PLUGIN_NAME} inject -f FILE|DIR [-f ...] [OPTIONS]`]
    : [`${PROGRAM} --check FILE|DIR... [OPTIONS]`, `${PROGRAM} --inject FILE|DIR... [OPTIONS]`];
  const width = Math.max(...Object.keys(RULE_SUMMARIES).map((rule) => rule.length));
  return [
    `${PROGRAM} ${version}: the manifest tools`,
    '',
    `Usage: ${check}`,
    `       ${inject}`,
    ...(plugin ? Object.keys(CLUSTER_COMMANDS).map((name) => `       ${PLUGIN_NAME} ${name} [--context NAME] [--kubeconfig FILE]`) : []),
    ...(plugin ? [] : [`       ${PROGRAM} ${TOOL_FLAG.policy} [OPTIONS]`]),
    '',
    'FILE is YAML with any number of documents (a kind: List too); - reads stdin.',
    `${plugin ? '-f DIR' : 'A DIR'} reads the .yaml, .yml and .json files in DIR (not below it), in name order.`,
    `A FILE larger than ${MAX_INPUT_MIB} MiB is refused (the Kubernetes API server takes 1.5 MiB in one`,
    'object); so is one nested too deeply to parse. Flags go in any order; --flag=VALUE too.',
    '',
    `check: one line per finding on stdout, FILE:LINE: ${Object.keys(LEVELS).join('|')}: RULE: what to`,
    'do instead. Exit 0 without errors, 1 with one (at or above --failure-threshold), 2',
    'when a FILE cannot be read or parsed.',
    ...Object.entries(LEVELS).map(([level, means]) => `  ${level.padEnd(7)}  ${means}`),
    'Rules:',
    ...Object.entries(RULE_SUMMARIES).map(([rule, { level }]) => `  ${rule.padEnd(width)}  ${level}`),
    '',
    ...wrap(
      `Suppressed for one object: the annotation ${IGNORE_ANNOTATION}: "RULE[,RULE...]" on it or its pod template; ` +
        `for one finding: a comment ${IGNORE_COMMENT} on its line or the line above (YAML's or the script's). ` +
        'A count of what was suppressed goes to stderr.',
      86,
    ),
    '',
    'A pod gets a sidecar when its template shows one (an injection label or annotation,',
    "a sidecar container, the sidecar's own settings, a script that quits it); a Job that",
    'shows none is clean, unless its namespace injects (--injected-namespaces).',
    '',
    'inject: writes FILE back to stdout with each Job, CronJob and bare Pod whose classic',
    'sidecar nothing stops (or that check advises inject for) rewritten to run under',
    'istio-job-run, set up for the sidecars it has: an emptyDir, an init container from',
    `IMAGE (default ${PROGRAM}:${version}) that --installs it there, the job container's`,
    'command prefixed with it. Everything else stays byte for byte. A pod it cannot',
    'rewrite safely (a script that sends a wrong quit of its own, too) is named on stderr;',
    'then nothing is written and the exit is 1. A pod with another error is left, with a',
    'line on stderr. Several FILEs come out as one stream, a --- between two.',
    '',
    ...(plugin
      ? []
      : [
          `${TOOL_FLAG.policy}: prints what inject does as a MutatingAdmissionPolicy and its binding,`,
          'for the API server to apply to every Job, CronJob and bare Pod it admits. It leaves',
          'alone a pod inject refuses or leaves, and one whose commands speak to a sidecar.',
          '',
        ]),
    ...(plugin
      ? [
          ...Object.entries(CLUSTER_COMMANDS).flatMap(([name, help]) => wrap(`${name}: ${help}.`, 86)),
          ...wrap(
            'Both read the cluster through kubectl (on PATH), with these flags passed on to it; exit 2 when a read fails ' +
              'or RBAC refuses it (the line names the permission), doctor 1 when a Job or CronJob has an error:',
            86,
          ),
          ...CLUSTER_FLAGS.flatMap(({ flag, argument, help }) => [
            `  ${flag} ${argument}`,
            ...wrap(help, 80).map((line) => `      ${line}`),
          ]),
          '',
        ]
      : []),
    'Flags (the tool that takes each in brackets):',
    ...flagLines(plugin),
    '',
    'Exit 2 also for a usage error, and for a stdout that cannot be written (a full disk,',
    'a closed stdout); a reader that leaves early (| head -1) is not an error. TERM, INT',
    'and HUP end it at once with 128+N (143, 130, 129).',
    '',
  ].join('\n');
}
