// The two pipes to the portable bundle's launcher (src/launcher.c), which stands in front of this process:
// it receives every signal and relays it here, runs the command when asked (with its original argv and
// environment, byte for byte), sends it the signals this side decides to forward, and reports how it ended.
// Lines in:  sig N k|u PID | started PID | failed ERRNO | exited CODE | signaled N
// Lines out: hello | run COUNT | kill N | exit CODE

import { writeSync } from 'node:fs';
import { Socket } from 'node:net';
import type { Child } from './child.ts';
import { spawnMessage, type Outcome } from './exit-code.ts';
import type { Logger } from './log.ts';

/** Set by the launcher for this process only: "<fd to read>,<fd to write>". The command never sees it. */
export const LAUNCHER_ENV = 'ISTIO_JOB_RUN_LAUNCHER';

export interface LauncherLink {
  /** Reads the relayed signals from now on: call it once the signal router exists, and not before. */
  listen(onSignal: (signal: number, fromTerminal: boolean) => void): void;
  /** Asks the launcher to run the command: the last `command.length` arguments it was given. */
  run(command: readonly string[]): Child;
  /** This process's exit code, said before exiting: the launcher passes it on even if the exit itself stalls. */
  declareExit(code: number): void;
}

/** ENOENT for 2: node:os is loaded only when a start fails. */
function errnoName(errno: number): string {
  const names = Object.entries(process.getBuiltinModule('node:os').constants.errno);
  return names.find(([, number]) => number === errno)?.[0] ?? `errno ${errno}`;
}

/** The link, when this process was started by the launcher; the variable is removed from `env` either way. */
export function connectLauncher(env: NodeJS.ProcessEnv, log: Logger): LauncherLink | undefined {
  const value = env[LAUNCHER_ENV];
  delete env[LAUNCHER_ENV];
  if (value === undefined) return undefined;
  const fds = /^(\d+),(\d+)$/.exec(value);
  if (fds === null) {
    log.warn(`${LAUNCHER_ENV}=${JSON.stringify(value)} is not "<fd>,<fd>": running without the launcher`);
    return undefined;
  }
  const output = Number(fds[2]);
  const input = new Socket({ fd: Number(fds[1]), readable: true, writable: false });
  input.setEncoding('latin1');

  let onSignal: ((signal: number, fromTerminal: boolean) => void) | undefined;
  let command: { settle: (outcome: Outcome) => void; pid: number | undefined; ended: boolean } | undefined;
  let buffered = '';

  const send = (line: string): void => {
    try {
      writeSync(output, `${line}\n`);
    } catch {
      // The launcher is gone: the process is already on its way out.
    }
  };
  const finish = (outcome: Outcome): void => {
    if (command === undefined || command.ended) return;
    command.ended = true;
    command.settle(outcome);
  };
  const handle = (line: string): void => {
    const [kind, first = '', second] = line.split(' ');
    const n = Number(first);
    switch (kind) {
      case 'sig':
        onSignal?.(n, second === 'k');
        return;
      case 'started':
        if (command !== undefined) command.pid = n;
        log.debug(`the command runs as pid ${n}`);
        return;
      case 'failed': {
        const errno = errnoName(n);
        finish({ kind: 'spawn-failed', errno, message: spawnMessage(errno) });
        return;
      }
      case 'exited':
        finish({ kind: 'exited', code: n });
        return;
      case 'signaled':
        finish({ kind: 'signaled', signal: n });
        return;
      default:
        log.debug(`unknown line from the launcher: ${JSON.stringify(line)}`);
    }
  };
  input.on('data', (chunk: string) => {
    const lines = (buffered + chunk).split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) handle(line);
  });
  input.on('error', () => undefined);
  input.on('close', () => finish({ kind: 'spawn-failed', errno: 'EPIPE', message: 'lost: the launcher is gone' }));
  // Nothing is read until listen(): the launcher holds every signal in the pipe until then.
  input.pause();

  return {
    listen(listener) {
      onSignal = listener;
      input.resume();
      send('hello');
    },
    run(argv) {
      let settle: (outcome: Outcome) => void = () => undefined;
      const outcome = new Promise<Outcome>((resolve) => {
        settle = resolve;
      });
      const current = { settle, pid: undefined as number | undefined, ended: false };
      command = current;
      send(`run ${argv.length}`);
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
          send(`kill ${signal}`);
          return true;
        },
      };
    },
    declareExit(code) {
      send(`exit ${code}`);
    },
  };
}
