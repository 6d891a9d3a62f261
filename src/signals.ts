// Which signals reach the command, and what a signal means before, during and after it runs.
// The handlers are installed at start-up, so the wrapper also works as PID 1, where the kernel drops
// every signal that has no handler.

import type { Logger } from './log.ts';

/** Forwarded to the command, each delivery once, in the order the wrapper receives them. */
export const FORWARDED: readonly NodeJS.Signals[] = [
  'SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGTERM', // stop requests: kubelet, docker stop, Ctrl-C
  'SIGUSR1', 'SIGUSR2', 'SIGWINCH', // application-defined and terminal resize
  'SIGALRM', // a timer someone outside set for the job
  'SIGPWR', // some container managers (LXC) ask init to power off with it
];

/** Never forwarded, and why. */
export const NOT_FORWARDED: Readonly<Record<string, string>> = {
  SIGCHLD: "reports the wrapper's own children; the command gets its own",
  SIGURG: "out-of-band data on the wrapper's own sockets",
  SIGPIPE: "raised by the wrapper's own writes (Node ignores it)",
  SIGKILL: 'cannot be caught',
  SIGSTOP: 'cannot be caught',
  SIGTSTP: 'job control: the terminal stops the whole process group itself',
  SIGTTIN: 'job control: about the reader of the terminal, not the job',
  SIGTTOU: 'job control: about the writer to the terminal, not the job',
  SIGCONT: 'job control: the kernel continues the process group itself',
  SIGSEGV: "a fault of the wrapper's own, delivered to the faulting thread",
  SIGBUS: "a fault of the wrapper's own",
  SIGFPE: "a fault of the wrapper's own",
  SIGILL: "a fault of the wrapper's own",
  SIGABRT: "the wrapper's own abort()",
  SIGIOT: "another name of SIGABRT: the wrapper's own abort()",
  SIGTRAP: "a debugger's breakpoint in the wrapper",
  SIGSYS: "a bad system call of the wrapper's own",
  SIGPROF: "the wrapper's own CPU profiler timer",
  SIGVTALRM: "the wrapper's own virtual timer",
  SIGXCPU: "the wrapper's own CPU limit",
  SIGXFSZ: "the wrapper's own file size limit",
  SIGIO: "the wrapper's own asynchronous I/O",
  SIGPOLL: "another name of SIGIO: the wrapper's own asynchronous I/O",
  SIGSTKFLT: 'unused on Linux (a coprocessor stack fault)',
};

/** Before the command starts, these end the wait: no command runs, the sidecar is told to quit, exit 128+N. */
export const ENDS_WAIT: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT'];

/** A terminal sends these to its whole foreground process group, so the command already has them. */
export const FROM_TERMINAL: readonly NodeJS.Signals[] = ['SIGINT', 'SIGQUIT', 'SIGWINCH'];

export type Phase = 'before' | 'running' | 'after';
export type Action = 'end-wait' | 'forward' | 'ignore' | 'leave-to-terminal';

/** What a signal does; pure, so it is tested from a table. */
export function decide(signal: NodeJS.Signals, phase: Phase, stdinIsTerminal: boolean): Action {
  switch (phase) {
    case 'before':
      return ENDS_WAIT.includes(signal) ? 'end-wait' : 'ignore';
    case 'running':
      return stdinIsTerminal && FROM_TERMINAL.includes(signal) ? 'leave-to-terminal' : 'forward';
    case 'after':
      return 'ignore';
  }
}

export interface SignalSource {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
}

export interface KillTarget {
  kill(signal: NodeJS.Signals): boolean;
}

export interface SignalRouter {
  /** Aborted, with the signal name as its reason, when a wait-ending signal arrives before the command starts. */
  readonly beforeStart: AbortSignal;
  /** The command has started: forward from now on. */
  forwardTo(target: KillTarget): void;
  /** The command has ended: signals are only noted from now on. */
  stopForwarding(): void;
  dispose(): void;
}

/** `stdinIsTerminal` is asked only when a signal arrives, so start-up does not pay for loading node:tty. */
export function createSignalRouter(source: SignalSource, log: Logger, stdinIsTerminal: () => boolean): SignalRouter {
  const controller = new AbortController();
  let phase: Phase = 'before';
  let target: KillTarget | undefined;

  const handle = (signal: NodeJS.Signals): void => {
    switch (decide(signal, phase, phase === 'running' && stdinIsTerminal())) {
      case 'end-wait':
        if (!controller.signal.aborted) {
          log.info(`received ${signal} before the command started: not running it`);
          controller.abort(signal);
        }
        return;
      case 'forward':
        if (target !== undefined && !safeKill(target, signal)) {
          log.debug(`could not forward ${signal}: the command has already exited`);
        } else {
          log.debug(`forwarded ${signal}`);
        }
        return;
      case 'leave-to-terminal':
        log.debug(`${signal} came from the terminal, which also sent it to the command`);
        return;
      case 'ignore':
        log.debug(`ignored ${signal} (${phase === 'before' ? 'the command has not started' : 'the command has ended'})`);
        return;
    }
  };

  for (const signal of FORWARDED) source.on(signal, handle);

  return {
    beforeStart: controller.signal,
    forwardTo(newTarget) {
      target = newTarget;
      phase = 'running';
    },
    stopForwarding() {
      phase = 'after';
      target = undefined;
    },
    dispose() {
      for (const signal of FORWARDED) source.off(signal, handle);
    },
  };
}

function safeKill(target: KillTarget, signal: NodeJS.Signals): boolean {
  try {
    return target.kill(signal);
  } catch {
    return false;
  }
}
