// Where this executable is. Started through the portable bundle's launcher, the process is the bundled
// dynamic loader running the executable: /proc/self/exe (process.execPath) names the loader, and the
// launcher passes its own path as argv[0].

import { basename, dirname, isAbsolute, join } from 'node:path';

export const LIB_DIR = 'istio-job-run.lib';
export const PROGRAM = 'istio-job-run';

export interface Self {
  /** What a user runs: the launcher of a bundle, or the executable itself. */
  readonly executable: string;
  /** Set when running from a portable bundle. */
  readonly bundle?: { readonly launcher: string; readonly lib: string };
}

export function locateSelf(execPath: string, argv0: string): Self {
  if (basename(execPath).startsWith('ld-linux') && isAbsolute(argv0)) {
    return { executable: argv0, bundle: { launcher: argv0, lib: join(dirname(argv0), LIB_DIR) } };
  }
  return { executable: execPath };
}
