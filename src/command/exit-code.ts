/** The wrapper failed before the command ran: usage or configuration error, readiness timeout, internal error. */
export const EXIT_WRAPPER_FAILED = 125;
/** The command exists but cannot be executed. */
export const EXIT_CANNOT_EXECUTE = 126;
/** The command was not found. */
export const EXIT_NOT_FOUND = 127;

/** How the command ended, as far as the wrapper can tell. */
export type Outcome =
  | { readonly kind: 'exited'; readonly code: number }
  | { readonly kind: 'signaled'; readonly signal: number }
  | { readonly kind: 'spawn-failed'; readonly errno: string; readonly message: string };

/** 128 + N, the shell's convention for a death by signal N (1-64, real-time signals included). */
export function signalExitCode(signal: number): number {
  return 128 + signal;
}

/** The one place where an outcome becomes the wrapper's exit code. */
export function exitCodeFor(outcome: Outcome): number {
  switch (outcome.kind) {
    case 'exited':
      return outcome.code;
    case 'signaled':
      return signalExitCode(outcome.signal);
    case 'spawn-failed':
      // ENOENT: no such file, or its interpreter (#!) is missing; ENOTDIR: a path part is a file.
      return outcome.errno === 'ENOENT' || outcome.errno === 'ENOTDIR' ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE;
  }
}

/** Why a command could not be started, from its errno. */
export function spawnMessage(errno: string): string {
  switch (errno) {
    case 'ENOENT':
      return 'not found (no such file on PATH, or its #! interpreter is missing)';
    case 'ENOTDIR':
      return 'not found (a part of its path is not a directory)';
    case 'EACCES':
      return 'cannot be executed (permission denied, or it is a directory)';
    case 'ENOEXEC':
      return 'cannot be executed (not an executable format)';
    default:
      return `cannot be executed (${errno})`;
  }
}
