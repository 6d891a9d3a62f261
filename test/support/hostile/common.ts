// What every case of the adversarial suite shares: the table's types, the constants and small judges, the
// C helper as a job that reports signals, and defineCase, the scaffold of one try (its variant, what it
// sends, the load, the stand-in or a scratch directory, and `got` as one line), so a case states only
// what it sends and how it judges.

import { mkdtempSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Sidecar, type SidecarOptions } from '../sidecar.ts';
import { childOf, helper, type Spawned, underLoad } from './tools.ts';

export type Size = 'short' | 'long';

export interface Try {
  /** What was sent this time (the varying part: signal, moment, PID 1 or not, load). */
  readonly sent: string;
  readonly ok: boolean;
  /** What came back, stable across tries with the same outcome. */
  readonly got: string;
}

export interface HostileCase {
  readonly name: string;
  /** What the case sends, and what it expects. */
  readonly about: string;
  readonly tries: Readonly<Record<Size, number>>;
  run(index: number): Promise<Try>;
}

export const BUSYBOX = '/bin/busybox';
export const CLASSIC = ['--sidecar', 'classic', '--ready-timeout', '3s', '--quit-timeout', '2s'];
/** How long after the job's end the wrapper may take to exit, beyond its own timeouts (generous: a shared, loaded machine). */
export const EXIT_BOUND_MS = 3_000;
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT'] as const;
export const signo = (name: string): number => constants.signals[name as NodeJS.Signals];
export const pid1Argv = (pid1: boolean, argv: readonly string[]): string[] =>
  pid1 ? ['unshare', '--pid', '--fork', '--mount-proc', ...argv] : [...argv];
export const where = (pid1: boolean, loaded = false): string => `${pid1 ? 'as PID 1' : 'not PID 1'}${loaded ? ', loaded' : ''}`;

/** The stand-in on the real ports of this network namespace, for one try. */
async function withStandIn<T>(options: SidecarOptions, body: (sidecar: Sidecar) => Promise<T>): Promise<T> {
  const sidecar = await Sidecar.start({ agentPort: 15020, envoyPort: 15021, ...options });
  try {
    return await body(sidecar);
  } finally {
    await sidecar.close();
  }
}

/** A temporary directory for one try, removed afterwards. */
async function withScratch<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-hostile-'));
  try {
    return await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const acknowledged = (sidecar: Sidecar): number => sidecar.quitRequests.filter((r) => r.status === 200).length;

/** The pid to signal: the wrapper itself, or PID 1 of its namespace. */
export async function target(spawned: Spawned, pid1: boolean): Promise<number> {
  const pid = await spawned.pid;
  return pid1 ? childOf(pid) : pid;
}

export const describeStatus = (status: {
  code: number | undefined;
  timedOut: boolean;
  leftover?: boolean;
  killedBy: number | undefined;
}): string =>
  (status.timedOut
    ? 'hang (killed by the bound)'
    : status.killedBy !== undefined
      ? `killed by signal ${status.killedBy} (${status.code})`
      : `exit ${status.code}`) + (status.leftover === true ? ', processes left running (killed at the bound)' : '');

export const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts of "signal NAME" lines from a job that reports signals (the reporter fixture, the C helper's catch). */
export const reportedCount = (stdout: string, signal: string): number =>
  stdout.split('\n').filter((line) => line === `signal ${signal}`).length;

/** A try's `got`: its parts, the empty and false ones left out, joined by commas. */
const joinGot = (parts: readonly (string | false | undefined)[]): string =>
  parts.filter((part): part is string => typeof part === 'string' && part !== '').join(', ');

/**
 * Sends `signal` to `pid` and waits for the job to say it got it, twice: then every signal relayed before the first
 * has been reported (signals pending together are handled highest number first, so one round is not enough).
 */
export async function barrier(spawned: Spawned, pid: number, signal = 'SIGPWR'): Promise<boolean> {
  for (let round = 0; round < 2; round++) {
    const before = reportedCount(spawned.stdout(), signal);
    process.kill(pid, signal);
    const until = performance.now() + 5_000;
    while (reportedCount(spawned.stdout(), signal) <= before) {
      if (performance.now() > until || spawned.helperProcess.exitCode !== null) return false;
      await wait(5);
    }
  }
  return true;
}

/** The C helper as a job that reports each signal delivery at once and obeys kill verbs on stdin (hostile.c, `catch`). */
export const CATCHER = (): string[] => [helper(), 'catch'];

/** Tells the catcher to run one of its kill verbs; undefined when it said "killed", else what it said. */
export async function catcherKills(spawned: Spawned, verb: string, signal: string): Promise<string | undefined> {
  spawned.helperProcess.stdin?.write(`${verb} ${signo(signal)}\n`);
  const said = await spawned.line(/^kill/);
  return said === 'killed' ? undefined : `the command's ${verb} said "${said}"`;
}

// ---------------------------------------------------------------------------------------------------------
// The scaffold of one try

/** A case's judgement of one try. */
export interface Verdict {
  readonly ok: boolean;
  /** The parts of what came back; empty and false parts are left out of the try's `got`. */
  readonly got: readonly (string | false | undefined)[];
  /** What was sent, when only the run can say (a limit that could not be set up); else the case's own `sent`. */
  readonly sent?: string;
}

/** What a try runs beside: the stand-in and the scratch directory, each there only when the case asks for it. */
export interface Around {
  readonly sidecar: Sidecar;
  readonly scratch: string;
}

export interface CaseSpec<V> {
  readonly name: string;
  readonly about: string;
  readonly tries: Readonly<Record<Size, number>>;
  /** What varies between tries, from the try's index. */
  variant(index: number): V;
  /** What the try sends, as the report says it. */
  sent(variant: V): string;
  /** Whether the try runs with a busy loop per core (underLoad); not loaded when absent. */
  loaded?(variant: V): boolean;
  /** The stand-in's options, when the try needs the stand-in on the real ports 15020/15021. */
  readonly standIn?: SidecarOptions;
  /** Whether the try needs a temporary directory (removed afterwards). */
  readonly scratch?: boolean;
  /** Starts the wrapper and judges what came back. */
  judge(variant: V, around: Around): Promise<Verdict>;
}

/**
 * A case from what varies: each try takes its variant from its index, runs under load if asked, inside a
 * scratch directory and then beside the stand-in if asked, and reports `sent`, `ok` and `got` as one line.
 */
export function defineCase<V>(spec: CaseSpec<V>): HostileCase {
  return {
    name: spec.name,
    about: spec.about,
    tries: spec.tries,
    async run(index) {
      const variant = spec.variant(index);
      const sent = spec.sent(variant);
      const missing = (what: string): never => {
        throw new Error(`the case "${spec.name}" asked for no ${what}`);
      };
      const inStandIn = (scratch: string | undefined): Promise<Verdict> => {
        const around = (sidecar: Sidecar | undefined): Around => ({
          get sidecar() {
            return sidecar ?? missing('stand-in');
          },
          get scratch() {
            return scratch ?? missing('scratch directory');
          },
        });
        return spec.standIn === undefined
          ? spec.judge(variant, around(undefined))
          : withStandIn(spec.standIn, (sidecar) => spec.judge(variant, around(sidecar)));
      };
      const verdict = await underLoad(spec.loaded?.(variant) ?? false, () =>
        spec.scratch === true ? withScratch((scratch) => inStandIn(scratch)) : inStandIn(undefined),
      );
      return { sent: verdict.sent ?? sent, ok: verdict.ok, got: joinGot(verdict.got) };
    },
  };
}
