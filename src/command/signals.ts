// Which signals reach the command, and what a signal means before, during and after it runs.
// This module decides. The plain executable gets the signals from Node directly. In the portable bundle the
// launcher (src/launcher/launcher.c) receives every signal first: while the command runs it passes each on itself,
// as decide() says for a running command (the rule is generated into its header), so the command gets them as it
// would alone, whatever Node is doing; the others it relays here.

import type { Logger } from '../log.ts';

/** Forwarded to the command, each delivery once, in the order the wrapper receives them. */
export const FORWARDED: readonly NodeJS.Signals[] = [
  'SIGHUP',
  'SIGINT',
  'SIGQUIT',
  'SIGTERM', // stop requests: kubelet, docker stop, Ctrl-C
  'SIGUSR1',
  'SIGUSR2',
  'SIGWINCH', // application-defined and terminal resize
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
  SIGPROF: "the wrapper's own CPU profiler timer",
  SIGVTALRM: "the wrapper's own virtual timer",
  SIGXCPU: "the wrapper's own CPU limit",
  SIGXFSZ: "the wrapper's own file size limit",
  SIGIO: "the wrapper's own asynchronous I/O",
  SIGPOLL: "another name of SIGIO: the wrapper's own asynchronous I/O",
  SIGSTKFLT: 'unused on Linux (a coprocessor stack fault)',
};

/** Real-time signals 34-64: Node names none of them, so they travel by number; each is forwarded. */
export const REALTIME_FIRST = 34;
export const REALTIME_LAST = 64;

/** Signals whose default action leaves a process running (signal(7)): it ignores, stops or continues it. */
const SPARED_BY_DEFAULT: readonly string[] = ['SIGCHLD', 'SIGURG', 'SIGWINCH', 'SIGCONT', 'SIGSTOP', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU'];

/** Node's start-up ignores these itself. */
export const IGNORED_BY_NODE: readonly NodeJS.Signals[] = ['SIGPIPE', 'SIGXFSZ'];

/**
 * The faults: the kernel raises them in a process for its own bad memory access, instruction or system call (and
 * abort() raises ABRT). Another process may send them too (kill(2): `timeout -s ABRT`, a parent's `kill -ABRT 0`), and
 * then they are signals like any other: forwarded to a running command, held before it runs and after it ended. Only
 * the launcher tells the two apart (from each signal's siginfo) and relays only those a process sent, so they are
 * forwarded only when no kernel sent them. Node never takes them itself: its handler would return to a real fault's
 * instruction for good (and Node's start-up takes back any mask it was given). The launcher keeps it out of the way
 * instead: without a terminal, or as PID 1, the Node part leads a process group of its own, so a signal sent to the
 * launcher's group never reaches it.
 */
export const FAULTS: readonly NodeJS.Signals[] = ['SIGSEGV', 'SIGBUS', 'SIGFPE', 'SIGILL', 'SIGTRAP', 'SIGSYS', 'SIGABRT', 'SIGIOT'];

/**
 * The named signals that would end the wrapper for nothing when it acts on `used` alone: every one whose default
 * action ends a process, but KILL (nothing can hold it) and the faults (blocked from its start). The wrapper holds
 * them with handlers.
 */
export function unusedSignals(used: readonly string[]): NodeJS.Signals[] {
  return [...FORWARDED, ...(Object.keys(NOT_FORWARDED) as NodeJS.Signals[])].filter(
    (name) => !SPARED_BY_DEFAULT.includes(name) && name !== 'SIGKILL' && !FAULTS.includes(name) && !used.includes(name),
  );
}

/**
 * The numbers 1-64 of the signals that would end the wrapper for nothing when it acts on `used` alone: those of
 * unusedSignals(used) and every real-time one (Node names none, so it can take none).
 */
export function unusedSignalNumbers(used: readonly string[]): number[] {
  const named = new Set(unusedSignals(used).map(signalNumber));
  return Array.from({ length: REALTIME_LAST }, (_, i) => i + 1).filter((n) => named.has(n) || !signalTables().names.has(n));
}

/** Before the command starts, these end the wait: no command runs, the sidecar is told to quit, exit 128+N. */
export const ENDS_WAIT: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT'];

/** A terminal sends these to its whole foreground process group, so the command already has them. */
export const FROM_TERMINAL: readonly NodeJS.Signals[] = ['SIGINT', 'SIGQUIT', 'SIGWINCH'];

/**
 * `starting`: the wrapper has asked for the command, which does not exist yet: a signal read now reached the
 * wrapper before the command did. A stop request can no longer prevent the start, so it goes to the command
 * as soon as it exists; anything else is as before the start.
 */
export type Phase = 'before' | 'starting' | 'running' | 'after';
export type Action = 'end-wait' | 'forward' | 'ignore' | 'leave-to-terminal';

interface SignalTables {
  readonly numbers: Readonly<Record<string, number>>;
  readonly names: ReadonlyMap<number, string>;
  readonly forwarded: ReadonlySet<number>;
  readonly endsWait: ReadonlySet<number>;
  readonly fromTerminal: ReadonlySet<number>;
  readonly faults: ReadonlySet<number>;
}

let tables: SignalTables | undefined;

/** Node's signal numbers (node:os, their only public source), read at the first use: start-up does not need them. */
function signalTables(): SignalTables {
  if (tables === undefined) {
    const numbers: Readonly<Record<string, number>> = process.getBuiltinModule('node:os').constants.signals;
    const numbersOf = (names: readonly string[]): ReadonlySet<number> => new Set(names.map((name) => numbers[name] ?? 0));
    tables = {
      numbers,
      // The first of two names of one number (SIGABRT, not SIGIOT; SIGIO, not SIGPOLL).
      names: new Map(
        Object.entries(numbers)
          .reverse()
          .map(([name, number]) => [number, name]),
      ),
      forwarded: numbersOf(FORWARDED),
      endsWait: numbersOf(ENDS_WAIT),
      fromTerminal: numbersOf(FROM_TERMINAL),
      faults: numbersOf(FAULTS),
    };
  }
  return tables;
}

/** SIGTERM, or "signal 40" for one Node has no name for. */
export function signalName(signal: number): string {
  return signalTables().names.get(signal) ?? `signal ${signal}`;
}

/** The number of a signal Node names; 0 for none. */
export function signalNumber(name: string): number {
  return signalTables().numbers[name] ?? 0;
}

/** A fault is forwarded only when a process sent it: the kernel sends one for the receiver's own fault. */
const isForwarded = (signal: number, byKernel: boolean): boolean =>
  signalTables().forwarded.has(signal) ||
  (signal >= REALTIME_FIRST && signal <= REALTIME_LAST) ||
  (!byKernel && signalTables().faults.has(signal));

/**
 * What a signal does; pure, so it is tested from a table. `fromTerminal`: the kernel sent it (a terminal's driver,
 * to the whole foreground process group, the command included), not a kill(2).
 */
export function decide(signal: number, phase: Phase, fromTerminal: boolean): Action {
  if (!isForwarded(signal, fromTerminal)) return 'ignore';
  switch (phase) {
    case 'before':
      return signalTables().endsWait.has(signal) ? 'end-wait' : 'ignore';
    case 'starting':
      return signalTables().endsWait.has(signal) ? 'forward' : 'ignore';
    case 'running':
      return fromTerminal && signalTables().fromTerminal.has(signal) ? 'leave-to-terminal' : 'forward';
    case 'after':
      return 'ignore';
  }
}

export interface SignalSource {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
}

export interface KillTarget {
  /** Sends signal N; false when the command has already ended. */
  kill(signal: number): boolean;
  /** False until the command exists (the launcher has not yet said it started it); absent: it exists. */
  readonly started?: boolean;
}

export interface SignalRouter {
  /** Aborted, with the signal's number as its reason, when a wait-ending signal arrives before the command starts. */
  readonly beforeStart: AbortSignal;
  /** A signal the launcher relayed, with whether a terminal sent it. */
  receive(signal: number, fromTerminal: boolean): void;
  /** A signal the launcher passed on to the running command itself: only noted. */
  passedOn(signal: number): void;
  /** The command has started: forward from now on. */
  forwardTo(target: KillTarget): void;
  /** The command has ended: signals are only noted from now on. */
  stopForwarding(): void;
}

/**
 * Routes the signals delivered to this process (`source`) and those the launcher relays (`receive`).
 * The handlers stay installed until the process ends: a signal during the exit is noted, never fatal.
 * `directFromTerminal` is asked only when a signal arrives, so start-up does not pay for loading node:tty.
 */
export function createSignalRouter(source: SignalSource, log: Logger, directFromTerminal: () => boolean): SignalRouter {
  const controller = new AbortController();
  let phase: Phase = 'before';
  let target: KillTarget | undefined;

  const handle = (signal: number, fromTerminal: boolean): void => {
    const name = signalName(signal);
    const now = phase === 'running' && target?.started === false ? 'starting' : phase;
    switch (decide(signal, now, fromTerminal)) {
      case 'end-wait':
        if (!controller.signal.aborted) {
          log.info(`received ${name} before the command started: not running it`);
          controller.abort(signal);
        }
        return;
      case 'forward':
        if (target !== undefined && !safeKill(target, signal)) {
          log.debug(`could not forward ${name}: the command has already exited`);
        } else {
          log.debug(`forwarded ${name}`);
        }
        return;
      case 'leave-to-terminal':
        log.debug(`${name} came from the terminal, which also sent it to the command`);
        return;
      case 'ignore':
        log.debug(
          `ignored ${name} (${now === 'after' ? 'the command has ended' : now === 'running' ? 'never forwarded' : 'the command has not started'})`,
        );
        return;
    }
  };

  const direct = (signal: NodeJS.Signals): void => {
    const number = signalNumber(signal);
    handle(number, phase === 'running' && signalTables().fromTerminal.has(number) && directFromTerminal());
  };
  for (const signal of FORWARDED) source.on(signal, direct);

  return {
    beforeStart: controller.signal,
    receive: handle,
    passedOn(signal) {
      log.debug(`forwarded ${signalName(signal)}`);
    },
    forwardTo(newTarget) {
      target = newTarget;
      phase = 'running';
    },
    stopForwarding() {
      phase = 'after';
      target = undefined;
    },
  };
}

function safeKill(target: KillTarget, signal: number): boolean {
  try {
    return target.kill(signal);
  } catch {
    return false;
  }
}
