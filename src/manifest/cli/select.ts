// Which start-ups are the manifest tools (--check, --inject, and the kubectl plugin `kubectl-istio_job_run`)
// rather than the wrapper: decided from the arguments and the name the executable was started by, before the
// wrapper's options are parsed. Small on purpose: it is in every start-up, the tools themselves are not.

import { readFileSync } from 'node:fs';
import { PROGRAM } from '../../bundle/self.ts';
import { TOOL_FLAGS } from '../../config/tool-flags.ts';

/** The name krew and kubectl give the plugin: `kubectl istio-job-run ...` runs it. */
export const PLUGIN_NAME = 'kubectl-istio_job_run';
/** The flags that make a start-up a manifest tool, the tools' other flags, and those of them that take a value. */
export const MODE_FLAGS = TOOL_FLAGS.filter((row) => row.mode === true).map((row) => row.flag);
export const TOOL_OPTIONS = TOOL_FLAGS.filter((row) => row.mode !== true).map((row) => row.flag);
export const VALUE_FLAGS = TOOL_FLAGS.filter((row) => row.argument !== undefined).map((row) => row.flag);
/** A tool's exit for a usage error, a file it cannot use, or a limit too small for it. */
export const EXIT_TOOL_USAGE = 2;
/**
 * The signals that end a manifest tool at once, with 128+N: its work is synchronous, so no handler of Node's
 * could run; the default action ends it (the bundle's launcher, told by the `tool` line, passes them on as
 * signals and exits with 128+N). The wrapper's own signal handling is for wrapper mode only. While the kubectl
 * plugin's profile or doctor waits on a kubectl, they end its process group first, then the tool the same way (io.ts).
 */
export const ENDS_TOOL: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
/** An argument that is a flag, not a value: `-` alone is stdin. */
export const flagLike = (arg: string): boolean => arg.startsWith('-') && arg !== '-';
/** `--flag` or `--flag=VALUE`, for one of the flags named. */
const isFlag = (arg: string, flags: readonly string[]): boolean => flags.some((flag) => arg === flag || arg.startsWith(`${flag}=`));

/**
 * Whether these arguments are for the manifest tools: the executable runs as the plugin, or its options are the
 * tools' flags (src/config/tool-flags.ts) up to --check or --inject, in any order. A value flag given without `=`
 * takes the next argument unless that is a flag, as the parser reads it. A job command never starts with a dash, and
 * the wrapper refuses --check and --inject as unknown options, so no wrapper invocation changes meaning.
 */
export function isManifestInvocation(argv: readonly string[], invokedAs: string): boolean {
  if (asPlugin(invokedAs)) return true;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (isFlag(arg, MODE_FLAGS)) return true;
    if (!isFlag(arg, TOOL_OPTIONS)) return false;
    const next = argv[i + 1];
    if (VALUE_FLAGS.includes(arg) && next !== undefined && !flagLike(next)) i++;
  }
  return false;
}

/** The name a tool's error lines start with: the kubectl plugin's when run as it, else the program's. */
export const toolName = (invokedAs: string): string => (asPlugin(invokedAs) ? PLUGIN_NAME : PROGRAM);

/** Whether the executable was started by the kubectl plugin's name (a path's last part). */
export const asPlugin = (invokedAs: string): boolean => invokedAs.slice(invokedAs.lastIndexOf('/') + 1) === PLUGIN_NAME;

/**
 * The name the executable was started by. Through the portable bundle, Node's argv0 is the launcher's resolved
 * path (src/launcher/launcher.c passes it to the loader), so a link named kubectl-istio_job_run would not show there:
 * the launcher is this process's parent, and its own argv[0] is the name it was run by.
 */
export function invokedAs(launched: boolean, argv0: string): string {
  if (!launched) return argv0;
  try {
    const [first = ''] = readFileSync(`/proc/${process.ppid}/cmdline`, 'latin1').split('\0', 1);
    return first === '' ? argv0 : first;
  } catch {
    return argv0;
  }
}
