// The manifest tools' command lines: `istio-job-run --check FILE...` and `istio-job-run --inject FILE [--image
// IMAGE] [--native]`, and the same as the kubectl plugin (`kubectl istio-job-run check -f FILE`, `inject -f FILE
// ...`), which is translated into the flags first, so both give the same bytes. FILE `-` is stdin (a Helm
// post-renderer: `--post-renderer istio-job-run --post-renderer-args --inject --post-renderer-args -`).
// Exit codes: 0 clean, 1 an error found (--check) or a pod refused (--inject), 2 a file that cannot be read or
// parsed, or a usage error.

import { PROGRAM } from '../self.ts';
import { inject } from './inject.ts';
import { check, RULES } from './rules.ts';
import { PLUGIN_NAME } from './select.ts';
import { loadShellParser } from './shell.ts';
import { parseSource, type Source } from './source.ts';

export interface ManifestIo {
  /** The file's text; `-` is stdin. Throws as readFileSync does. */
  readonly readFile: (path: string) => string;
  readonly stdout: (text: string) => void;
  /** One line, without the program's prefix. */
  readonly stderr: (line: string) => void;
}

const EXIT_FOUND = 1;
const EXIT_USAGE = 2;

type Request =
  | { readonly kind: 'check'; readonly files: readonly string[] }
  | { readonly kind: 'inject'; readonly file: string; readonly image?: string; readonly native: boolean }
  | { readonly kind: 'help' }
  | { readonly kind: 'error'; readonly message: string };

/** Runs the tools; returns the exit code. `invokedAs` is the name the executable was started by. */
export async function runManifest(argv: readonly string[], invokedAs: string, version: string, io: ManifestIo): Promise<number> {
  const plugin = invokedAs.slice(invokedAs.lastIndexOf('/') + 1) === PLUGIN_NAME;
  const request = plugin ? parsePlugin(argv) : parseFlags(argv);
  if (request.kind === 'help') {
    io.stdout(usage(plugin, version));
    return 0;
  }
  if (request.kind === 'error') {
    io.stderr(`${request.message} (see ${plugin ? `${PLUGIN_NAME} help` : `${PROGRAM} --help`})`);
    return EXIT_USAGE;
  }
  await loadShellParser();
  if (request.kind === 'check') return runCheck(request.files, io);
  return runInject(request, `${PROGRAM}:${version}`, io);
}

function read(path: string, io: ManifestIo): Source | string {
  const name = path === '-' ? '<stdin>' : path;
  let content: string;
  try {
    content = io.readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return `${name}: cannot be read (${code ?? (error as Error).message})`;
  }
  const parsed = parseSource(name, content);
  return 'error' in parsed ? parsed.error : parsed;
}

function runCheck(files: readonly string[], io: ManifestIo): number {
  let code = 0;
  for (const file of files) {
    const source = read(file, io);
    if (typeof source === 'string') {
      io.stderr(source);
      code = EXIT_USAGE;
      continue;
    }
    const findings = check(source);
    const lines = findings.map((finding) => `${source.name}:${finding.line}: ${finding.level}: ${finding.rule}: ${finding.message}\n`);
    if (lines.length > 0) io.stdout(lines.join(''));
    if (code === 0 && findings.some((finding) => finding.level === 'error')) code = EXIT_FOUND;
  }
  return code;
}

function runInject(request: Extract<Request, { kind: 'inject' }>, defaultImage: string, io: ManifestIo): number {
  const source = read(request.file, io);
  if (typeof source === 'string') {
    io.stderr(source);
    return EXIT_USAGE;
  }
  const result = inject(source, { image: request.image ?? defaultImage, native: request.native });
  if (result.kind === 'refused') {
    for (const problem of result.problems) io.stderr(problem);
    io.stderr(
      `--inject: nothing written: ${result.problems.length === 1 ? 'a pod' : `${result.problems.length} pods`} cannot be rewritten safely`,
    );
    return EXIT_FOUND;
  }
  for (const note of result.notes) io.stderr(note);
  io.stdout(result.text);
  return 0;
}

/** --check FILE (repeatable) | --inject FILE [--image IMAGE] [--native]; `--flag=value` too. */
function parseFlags(argv: readonly string[]): Request {
  const checks: string[] = [];
  const injects: string[] = [];
  let image: string | undefined;
  let native = false;
  if (argv.includes('--help') || argv.includes('-h')) return { kind: 'help' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag = '', inlineValue] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg];
    if (flag === '--native') {
      if (inlineValue !== undefined) return { kind: 'error', message: '--native: takes no value' };
      native = true;
      continue;
    }
    if (flag !== '--check' && flag !== '--inject' && flag !== '--image') {
      return { kind: 'error', message: `${JSON.stringify(arg)} is not an option of --check or --inject` };
    }
    const value = inlineValue ?? argv[++i];
    if (value === undefined || value === '')
      return { kind: 'error', message: `${flag}: needs a value (${flag} ${flag === '--image' ? 'IMAGE' : 'FILE'})` };
    if (flag === '--check') checks.push(value);
    else if (flag === '--inject') injects.push(value);
    else image = value;
  }
  if (checks.length > 0 && injects.length > 0) return { kind: 'error', message: '--check and --inject: use one at a time' };
  if (checks.length > 0) {
    if (image !== undefined || native)
      return { kind: 'error', message: `${image === undefined ? '--native' : '--image'}: goes with --inject, not --check` };
    return { kind: 'check', files: checks };
  }
  if (injects.length !== 1)
    return { kind: 'error', message: injects.length === 0 ? '--check FILE or --inject FILE is needed' : '--inject: one FILE at a time' };
  if (image !== undefined && native)
    return { kind: 'error', message: '--image: --inject --native adds no init container, so it takes no image' };
  return { kind: 'inject', file: injects[0] as string, native, ...(image === undefined ? {} : { image }) };
}

/** `check -f FILE...` | `inject -f FILE [--image IMAGE] [--native]`, kubectl's way, into the flags. */
function parsePlugin(argv: readonly string[]): Request {
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
        return { kind: 'error', message: `${command}: -f needs a file (-f FILE, or -f - for stdin)` };
      flags.push(`--${command}`, value);
    } else if (arg === '--help' || arg === '-h') {
      return { kind: 'help' };
    } else if (command === 'inject' && /^--(image|native)(=|$)/.test(arg)) {
      flags.push(arg);
      if (arg === '--image' && rest[i + 1] !== undefined) flags.push(rest[++i] as string);
    } else {
      return {
        kind: 'error',
        message: `${command}: ${JSON.stringify(arg)} is not an option (${command === 'check' ? '-f FILE' : '-f FILE [--image IMAGE] [--native]'})`,
      };
    }
  }
  if (!flags.includes(`--${command}`)) return { kind: 'error', message: `${command}: needs -f FILE (or -f - for stdin)` };
  return parseFlags(flags);
}

function usage(plugin: boolean, version: string): string {
  const [check, inject] = plugin
    ? [`${PLUGIN_NAME} check -f FILE [-f FILE...]`, `${PLUGIN_NAME} inject -f FILE [--image IMAGE] [--native]`]
    : [`${PROGRAM} --check FILE [--check FILE...]`, `${PROGRAM} --inject FILE [--image IMAGE] [--native]`];
  const width = Math.max(...Object.keys(RULES).map((rule) => rule.length));
  return [
    `${PROGRAM} ${version}: the manifest tools`,
    '',
    `Usage: ${check}`,
    `       ${inject}`,
    '',
    'FILE is YAML with any number of documents (a kind: List too); - reads stdin.',
    '',
    'check: one line per finding on stdout, FILE:LINE: error|warning: RULE: what to do',
    'instead. Exit 0 without errors, 1 with one, 2 when a FILE cannot be read or parsed.',
    'Rules:',
    ...Object.entries(RULES).map(([rule, { level }]) => `  ${rule.padEnd(width)}  ${level}`),
    '',
    'inject: writes FILE back to stdout with each Job, CronJob and bare Pod that gets',
    'a classic Istio sidecar rewritten to run under istio-job-run: an emptyDir, an init',
    `container from IMAGE (default ${PROGRAM}:${version}) that --installs it there, the job`,
    "container's command prefixed with it. Everything else stays byte for byte. A pod it",
    'cannot rewrite safely is named on stderr; then nothing is written and the exit is 1.',
    '--native: only add sidecar.istio.io/nativeSidecar: "true" to those pod templates',
    '(every node Kubernetes 1.29+, Istio 1.24+).',
    '',
  ].join('\n');
}
