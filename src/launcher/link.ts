// The channel to the portable bundle's launcher (src/launcher/launcher.c), which stands in front of this process: it
// receives every signal, runs the command when asked (with its original argv and environment, byte for byte),
// passes a running command its signals itself and says so here, relays the others for this side to decide, and
// reports how the command ended.
// It also keeps what it needs to finish the job should this process die: the log format and the quit plan.
// The lines are those of protocol.ts.

import { writeSync } from 'node:fs';
import { Socket } from 'node:net';
import type { Child } from '../command/child.ts';
import { spawnMessage, type Outcome } from '../command/exit-code.ts';
import {
  CHANNEL_ENV,
  FROM_WRAPPER,
  fitsLine,
  MAX_LINE_BYTES,
  type QuitPolicy,
  quitTargetLine,
  SENT_BY_KERNEL,
  TO_WRAPPER,
} from './protocol.ts';
import type { LogFormat, Logger } from '../log.ts';

/** What the launcher needs to tell the sidecars to quit itself: each quit URL with the label of its sidecar. */
export interface QuitPlan {
  readonly targets: readonly { readonly url: URL; readonly label: string }[];
  readonly policy: QuitPolicy;
  readonly timeoutMs: number;
  readonly requestTimeoutMs: number;
}

/** What the wrapper hears of the signals that reach the launcher. */
interface SignalListener {
  /** Signal N, for the wrapper to decide: before the command runs, after it ended, or one it does not get. */
  receive(signal: number, fromTerminal: boolean): void;
  /** Signal N, which the launcher has already passed on to the running command itself. */
  passedOn(signal: number): void;
}

interface LauncherLink {
  /** Reads the relayed signals from now on: call it once the signal router exists, and not before. */
  listen(listener: SignalListener): void;
  /**
   * Instead of listen, for a manifest tool (src/manifest/cli/select.ts decides): nothing is read, and the launcher
   * passes TERM, INT and HUP on as signals, whose default action ends this process, and exits with 128+N.
   */
  tool(): void;
  /** Asks the launcher to run the command: the last `command.length` arguments it was given. */
  run(command: readonly string[]): Child;
  /** The launcher's own lines follow this format from now on. */
  logFormat(format: LogFormat): void;
  /** The sidecars the launcher tells to quit should this process end before it has. */
  planQuit(plan: QuitPlan): void;
  /** This process's exit code, said before exiting: the launcher passes it on even if the exit itself stalls. */
  declareExit(code: number): void;
}

/** A line waits this long for room in the channel before the launcher counts as no longer reading it. */
const WRITE_PATIENCE_MS = 10_000;
const nap = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes TEXT whole, synchronously, so a line is out before an exit. The socket is non-blocking (its reads are
 * the event loop's): while it is full, as in a flood of signals each answered with a kill, this waits a
 * millisecond at a time for the launcher to read, for up to WRITE_PATIENCE_MS. Nothing is dropped while the
 * launcher lives, and no line is cut in two.
 */
function write(fd: number, text: string): void {
  const bytes = Buffer.from(text);
  for (let written = 0, waited = 0; written < bytes.length; ) {
    try {
      written += writeSync(fd, bytes, written);
    } catch (error) {
      // EAGAIN: full. Anything else (EPIPE): the launcher is gone, and so is whoever would read the rest.
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || waited++ >= WRITE_PATIENCE_MS) return;
      Atomics.wait(nap, 0, 0, 1);
    }
  }
}

/** ENOENT for 2: node:os is loaded only when a start fails. */
function errnoName(errno: number): string {
  const names = Object.entries(process.getBuiltinModule('node:os').constants.errno);
  return names.find(([, number]) => number === errno)?.[0] ?? `errno ${errno}`;
}

/** Whether the launcher started this process (before connectLauncher removes the variable). */
export const startedByLauncher = (env: NodeJS.ProcessEnv): boolean => env[CHANNEL_ENV] !== undefined;

/** The link, when this process was started by the launcher; the variable is removed from `env` either way. */
export function connectLauncher(env: NodeJS.ProcessEnv, log: Logger): LauncherLink | undefined {
  const value = env[CHANNEL_ENV];
  delete env[CHANNEL_ENV];
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) {
    log.warn(`${CHANNEL_ENV}=${JSON.stringify(value)} is not "<fd>": running without the launcher`);
    return undefined;
  }
  const fd = Number(value);
  const channel = new Socket({ fd, readable: true, writable: false });
  channel.setEncoding('latin1');

  let signals: SignalListener | undefined;
  let command: { settle: (outcome: Outcome) => void; pid: number | undefined; ended: boolean } | undefined;
  let buffered = '';

  // Lines written while a chunk from the launcher is handled (a kill for each signal of a flood) go out in one
  // write when it is done; any other line at once.
  let corked: string[] | undefined;
  const send = (...words: (string | number)[]): void => {
    const text = words.join(' ');
    // Never past the protocol's longest line: the options refuse what would not fit, so this is a bug's guard.
    if (!fitsLine(text)) {
      log.error(`internal error: a line of ${Buffer.byteLength(text)} bytes to the launcher (at most ${MAX_LINE_BYTES}): not sent`);
      return;
    }
    const line = `${text}\n`;
    if (corked === undefined) write(fd, line);
    else corked.push(line);
  };
  const finish = (outcome: Outcome): void => {
    if (command === undefined || command.ended) return;
    command.ended = true;
    command.settle(outcome);
  };
  const handle = (line: string): void => {
    const [verb, first = '', second] = line.split(' ');
    const n = Number(first);
    switch (verb) {
      case TO_WRAPPER.signal:
        signals?.receive(n, second === SENT_BY_KERNEL);
        return;
      case TO_WRAPPER.passed:
        signals?.passedOn(n);
        return;
      case TO_WRAPPER.started:
        if (command !== undefined) command.pid = n;
        log.debug(`the command runs as pid ${n}`);
        return;
      case TO_WRAPPER.failed: {
        const errno = errnoName(n);
        finish({ kind: 'spawn-failed', errno, message: spawnMessage(errno) });
        return;
      }
      case TO_WRAPPER.exited:
        finish({ kind: 'exited', code: n });
        return;
      case TO_WRAPPER.signaled:
        finish({ kind: 'signaled', signal: n });
        return;
      default:
        log.debug(`unknown line from the launcher: ${JSON.stringify(line)}`);
    }
  };
  channel.on('data', (chunk: string) => {
    const lines = (buffered + chunk).split('\n');
    buffered = lines.pop() ?? '';
    corked = [];
    try {
      for (const line of lines) handle(line);
    } finally {
      const out = corked.join('');
      corked = undefined;
      if (out !== '') write(fd, out);
    }
  });
  channel.on('error', () => undefined);
  channel.on('close', () => finish({ kind: 'spawn-failed', errno: 'EPIPE', message: 'lost: the launcher is gone' }));
  // Nothing is read until listen(): the launcher holds every signal in the socket until then.
  channel.pause();

  return {
    listen(listener) {
      signals = listener;
      channel.resume();
      send(FROM_WRAPPER.hello);
    },
    tool() {
      send(FROM_WRAPPER.tool);
    },
    run(argv) {
      let settle: (outcome: Outcome) => void = () => undefined;
      const outcome = new Promise<Outcome>((resolve) => {
        settle = resolve;
      });
      const current = { settle, pid: undefined as number | undefined, ended: false };
      command = current;
      send(FROM_WRAPPER.run, argv.length);
      return {
        get pid() {
          return current.pid;
        },
        // The launcher says "started" in the same stream as the signals it relays: those read before it
        // reached the wrapper before the command existed.
        get started() {
          return current.pid !== undefined || current.ended;
        },
        outcome,
        kill(signal) {
          if (current.ended) return false;
          send(FROM_WRAPPER.kill, signal);
          return true;
        },
      };
    },
    logFormat(format) {
      send(FROM_WRAPPER.log, format);
    },
    planQuit(plan) {
      // One line a target, then the line that counts them and makes them the plan; none is past the longest line
      // (the options refused any that would be).
      const lines = plan.policy === 'never' ? [] : plan.targets.flatMap(({ url, label }) => quitTargetLine(label, url) ?? []);
      const fitting = lines.filter(fitsLine);
      for (const line of fitting) send(line);
      send(FROM_WRAPPER.quit, plan.policy, Math.round(plan.timeoutMs), Math.round(plan.requestTimeoutMs), fitting.length);
    },
    declareExit(code) {
      send(FROM_WRAPPER.exit, code);
    },
  };
}
