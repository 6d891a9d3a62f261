// Which start-ups are the manifest tools (--check, --inject, and the kubectl plugin `kubectl-istio_job_run`)
// rather than the wrapper: decided from the arguments and the name the executable was started by, before the
// wrapper's options are parsed. Small on purpose: it is in every start-up, the tools themselves are not.

import { readFileSync } from 'node:fs';
import { PROGRAM } from '../../bundle/self.ts';

/** The name krew and kubectl give the plugin: `kubectl istio-job-run ...` runs it. */
export const PLUGIN_NAME = 'kubectl-istio_job_run';
const MODE_FLAG = /^--(check|inject)(=|$)/;
/**
 * The signals that end a manifest tool at once, with 128+N: its work is synchronous, so no handler of Node's
 * could run; the default action ends it (the bundle's launcher, told by the `tool` line, passes them on as
 * signals and exits with 128+N). The wrapper's own signal handling is for wrapper mode only.
 */
export const ENDS_TOOL: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
/** The flags of --inject that may come before the mode flag. */
const INJECT_OPTION = /^--(native|image)(=|$)/;

/**
 * Whether these arguments are for the manifest tools: the executable runs as the plugin, or its options start
 * with --check or --inject (after --image/--native, if any). A job command never starts with a dash, and the
 * wrapper refuses --check and --inject as unknown options, so no wrapper invocation changes meaning.
 */
export function isManifestInvocation(argv: readonly string[], invokedAs: string): boolean {
  if (invokedAs.slice(invokedAs.lastIndexOf('/') + 1) === PLUGIN_NAME) return true;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (MODE_FLAG.test(arg)) return true;
    if (!INJECT_OPTION.test(arg)) return false;
    if (arg === '--image') i++;
  }
  return false;
}

/** The name a tool's error lines start with: the kubectl plugin's when run as it, else the program's. */
export const toolName = (invokedAs: string): string =>
  invokedAs.slice(invokedAs.lastIndexOf('/') + 1) === PLUGIN_NAME ? PLUGIN_NAME : PROGRAM;

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
