// The programs and libraries the build scripts take from the machine, and what to say when one is missing: the
// Debian package that has it (scripts/debian-packages.txt, the one list) and the command that installs it. A
// script's top level runs under runMain, so a missing tool or a failed step is one line, not a stack trace.

import { execFileSync, type ExecFileSyncOptions, spawn, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, readFileSync } from 'node:fs';
import { constants as os } from 'node:os';
import { delimiter, join } from 'node:path';
import { root } from './root.ts';

/** An error the scripts expect (a missing tool, a failed step): runMain prints its message alone. */
export class StepError extends Error {}

interface Provider {
  readonly name: string;
  readonly group: 'build' | 'tests';
}

/** What each package of the list provides (its third column), by program or library name. */
function providers(): Map<string, Provider> {
  const map = new Map<string, Provider>();
  for (const line of readFileSync(join(root, 'scripts', 'debian-packages.txt'), 'utf8').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const [name = '', group, provides = '-'] = line.trim().split(/\s+/);
    for (const what of provides.split(',')) if (what !== '-') map.set(what, { name, group: group === 'build' ? 'build' : 'tests' });
  }
  return map;
}

/** How to get WHAT: its Debian package and the setup command that installs it, or only that it is missing. */
export function howToGet(what: string): string {
  const provider = providers().get(what);
  if (provider === undefined) return `${what} is missing`;
  const setup = provider.group === 'build' ? 'npm run setup' : 'npm run setup -- --tests';
  return `${what} is missing: it comes with Debian's ${provider.name} (\`${setup}\` installs it, as root)`;
}

function onPath(command: string): boolean {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    try {
      accessSync(join(dir || '.', command), constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

/** Throws a StepError naming the package of every COMMAND that is not on PATH. */
export function need(...commands: string[]): void {
  const missing = commands.filter((command) => !command.includes('/') && !onPath(command));
  if (missing.length > 0) throw new StepError(missing.map(howToGet).join('; '));
}

/** execFileSync of a machine's program, after checking it is there; a failure is a StepError naming it. */
export function runTool(command: string, args: readonly string[], options: ExecFileSyncOptions = {}): string {
  need(command);
  try {
    return String(execFileSync(command, args, { encoding: 'utf8', ...options }));
  } catch (error) {
    const { status, signal } = error as { status?: number | null; signal?: string | null };
    throw new StepError(`${command} ${args[0] ?? ''} failed (${signal ?? `exit ${status}`}; its output is above)`);
  }
}

/** Runs a script's top level: a StepError is one line on stderr and exit 1; anything else is a bug, shown whole. */
export async function runMain(name: string, main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (error) {
    if (!(error instanceof StepError)) throw error;
    process.stderr.write(`${name}: ${error.message}\n`);
    process.exitCode = 1;
  }
}

/**
 * Runs COMMAND on this process's stdio and gives its exit status (128+N for signal N). An INT, TERM or HUP that
 * this process gets is passed on, and the script goes on to its clean-up once COMMAND has ended.
 */
export async function runAttached(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<number> {
  const child = spawn(command, args, { stdio: 'inherit', ...options });
  const pass = (signal: NodeJS.Signals): void => void child.kill(signal);
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const signal of signals) process.on(signal, pass);
  try {
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    return code ?? 128 + (signal === null ? 0 : os.signals[signal]);
  } finally {
    for (const signal of signals) process.off(signal, pass);
  }
}
