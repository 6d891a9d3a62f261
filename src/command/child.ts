// The command as the plain executable runs it (the portable bundle's launcher runs it instead, see
// src/launcher/link.ts): with the wrapper's own stdin, stdout and stderr (the same descriptors, no pipes),
// and never killed by the wrapper on its own: the pod's grace period owns that.

import { execa } from 'execa';
import { spawnMessage, type Outcome } from './exit-code.ts';
import { signalNumber, type KillTarget } from './signals.ts';

export interface Child extends KillTarget {
  readonly pid: number | undefined;
  readonly outcome: Promise<Outcome>;
}

export function startChild(command: readonly string[]): Child {
  const [file = '', ...args] = command;
  const subprocess = execa(file, args, {
    stdio: 'inherit',
    reject: false,
    buffer: false,
    cleanup: false, // no kill when the wrapper exits: the command outlives nothing it should not
    forceKillAfterDelay: false, // no SIGKILL of our own after a forwarded TERM
    stripFinalNewline: false,
    windowsHide: false,
  });

  const outcome = subprocess.then((result): Outcome => {
    if (typeof result.exitCode === 'number') return { kind: 'exited', code: result.exitCode };
    if (result.signal !== undefined) return { kind: 'signaled', signal: signalNumber(result.signal) };
    const errno = typeof result.code === 'string' ? result.code : 'EUNKNOWN';
    return { kind: 'spawn-failed', errno, message: spawnMessage(errno) };
  });

  return {
    pid: subprocess.pid,
    outcome,
    kill: (signal) => subprocess.kill(signal),
  };
}
