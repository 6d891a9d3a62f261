// The steps: parse -> find the sidecars -> wait for them -> run the command -> quit them -> exit code.
// The invariant: every classic sidecar found is told to quit, as the policy allows, on every way out, and
// the outcome never changes the exit code.

import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import type { Child } from './command/child.ts';
import type { Clock } from './clock.ts';
import { configure, type Job } from './config/configuration.ts';
import { errorCode, errorMessage } from './errors.ts';
import { EXIT_WRAPPER_FAILED, exitCodeFor, signalExitCode } from './command/exit-code.ts';
import type { Http, HttpSettings } from './http/undici.ts';
import type { QuitPlan } from './launcher/link.ts';
import type { Logger } from './log.ts';
import { isManifestInvocation } from './manifest/cli/select.ts';
import type { Options } from './config/options.ts';
import type { SidecarLink } from './sidecars/sidecars.ts';
import { signalName, type SignalRouter } from './command/signals.ts';

/** Everything main touches outside itself, passed in so tests can drive it. */
export interface System {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly version: string;
  readonly log: Logger;
  readonly signals: SignalRouter;
  readonly clock: Clock;
  /** Writes all of the text to stdout; throws as writeSync does (ENOSPC, EPIPE, EBADF). */
  readonly writeStdout: (text: string) => void;
  readonly loadHttp: (settings?: HttpSettings) => Promise<Http>;
  readonly startChild: (command: readonly string[]) => Child;
  /** The sidecars to tell to quit should this process die first: the portable bundle's launcher does then. */
  readonly planQuit?: (plan: QuitPlan) => void;
  /** --install DIR; returns the exit code. */
  readonly install: (dir: string) => number | Promise<number>;
  /** Reads a text file (the pod's annotations); throws as readFileSync does. Default: readFileSync. */
  readonly readFile?: (path: string) => string;
  /** The manifest tools (--check, --inject, the kubectl plugin) and the name this process was started by. */
  readonly manifest?: { readonly invokedAs: string; readonly run: (argv: readonly string[]) => Promise<number> };
}

export async function main(sys: System): Promise<number> {
  if (sys.manifest !== undefined && isManifestInvocation(sys.argv, sys.manifest.invokedAs)) return sys.manifest.run(sys.argv);
  const readFile = sys.readFile ?? readRegularFile;
  const invocation = configure({ argv: sys.argv, env: sys.env, readFile });
  if (invocation.kind === 'help') {
    // Loaded when asked for (as are the sidecars' modules below): the bundle runs a module's top level only then.
    const { renderHelp } = await import('./config/help.ts');
    return print(sys, 'the help', renderHelp(sys.version));
  }
  if (invocation.kind === 'version') return print(sys, 'the version', `istio-job-run ${sys.version}\n`);
  if (invocation.kind === 'install') return sys.install(invocation.dir);

  const { options, errors } = invocation;
  sys.log.configure(options.logLevel, options.logFormat);
  for (const line of invocation.lines) sys.log[line.level](line.message);
  const sidecarLink = await link(sys, invocation);
  const targets = sidecarLink === undefined ? [] : invocation.sidecars.flatMap((sidecar) => sidecar.quit);
  sys.planQuit?.({
    targets: targets.map(({ url, kind }) => ({ url, label: kind.label })),
    policy: options.quit,
    timeoutMs: options.quitTimeout,
    requestTimeoutMs: options.requestTimeout,
  });

  let code: number;
  try {
    if (errors.length > 0) {
      for (const error of errors) sys.log.error(error);
      code = EXIT_WRAPPER_FAILED;
    } else {
      code = await runJob(sys, options, invocation.command, sidecarLink);
    }
  } catch (error) {
    sys.log.error(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    code = EXIT_WRAPPER_FAILED;
  }

  await sidecarLink?.quit(code);
  sidecarLink?.close();
  return code;
}

/** The most of the annotations file read: a downwardAPI file holds a pod's annotations, at most 256 KiB. */
const MAX_FILE_BYTES = 1 << 20;

/**
 * Reads a regular file, and refuses anything else: a FIFO or a terminal would block this thread, and with it
 * the signals relayed before the command (a TERM must end the wait at once). Opened without blocking, so even
 * a FIFO without a writer is refused at once.
 */
function readRegularFile(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      const what = stat.isFIFO()
        ? 'a FIFO'
        : stat.isCharacterDevice() || stat.isBlockDevice()
          ? 'a device'
          : stat.isDirectory()
            ? 'a directory'
            : 'a socket';
      throw new Error(`${what}, not a regular file`);
    }
    const chunks: Buffer[] = [];
    for (let total = 0; ; ) {
      const chunk = Buffer.alloc(64 * 1024);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) return Buffer.concat(chunks).toString('utf8');
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > MAX_FILE_BYTES) throw new Error(`larger than ${MAX_FILE_BYTES} bytes`);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * --help and --version: a stdout that cannot take the text (a full disk, /dev/full, a closed descriptor) is a
 * failure said in one line. A reader that left early (`--help | head -1`) is not: it had what it wanted.
 */
function print(sys: System, what: string, text: string): number {
  try {
    sys.writeStdout(text);
    return 0;
  } catch (error) {
    if (errorCode(error) === 'EPIPE') return 0;
    sys.log.error(`cannot write ${what} to stdout: ${errorMessage(error)}`);
    return EXIT_WRAPPER_FAILED;
  }
}

/** Wait, run, and report how the command ended. Throws only before the command has started. */
async function runJob(sys: System, options: Options, command: readonly string[], sidecarLink: SidecarLink | undefined): Promise<number> {
  const { log, signals } = sys;

  if (sidecarLink !== undefined && options.wait) {
    const readiness = await sidecarLink.waitUntilReady(signals.beforeStart);
    if (readiness.kind === 'timeout') {
      const { what } = readiness;
      if (!options.startWithoutProxy) {
        log.error(`${what}; not running the command`);
        return EXIT_WRAPPER_FAILED;
      }
      log.warn(`${what}; running the command anyway (--start-without-proxy)`);
    }
  }

  // A stop request before the command started: it never runs.
  const stopped: unknown = signals.beforeStart.reason;
  if (signals.beforeStart.aborted && typeof stopped === 'number') return signalExitCode(stopped);

  const child = sys.startChild(command);
  signals.forwardTo(child);
  sidecarLink?.prepare();
  log.debug(`started ${JSON.stringify(command[0])}`);

  let outcome;
  try {
    outcome = await child.outcome;
  } finally {
    signals.stopForwarding();
  }
  switch (outcome.kind) {
    case 'spawn-failed':
      log.error(`${command[0]}: ${outcome.message}`);
      break;
    case 'signaled':
      log.debug(`the command (pid ${child.pid ?? 'none'}) died of ${signalName(outcome.signal)}`);
      break;
    case 'exited':
      log.debug(`the command (pid ${child.pid ?? 'none'}) exited with ${outcome.code}`);
      break;
  }
  return exitCodeFor(outcome);
}

/** Links the sidecars there are to talk to. */
async function link(sys: System, job: Job): Promise<SidecarLink | undefined> {
  const { options, sidecars, probe } = job;
  if (sidecars.length === 0 && probe === undefined) return undefined;
  const { linkSidecars } = await import('./sidecars/sidecars.ts');
  const linked = linkSidecars(
    { log: sys.log, clock: sys.clock, loadHttp: () => sys.loadHttp({ lookupBoundMs: options.requestTimeout }) },
    sidecars,
    options,
  );
  if (probe !== undefined) await probeStatusPort(sys, options, probe);
  if (sidecars.length > 0) return linked;
  linked.close();
  return undefined;
}

/** The status says no sidecar: one quick connect to pilot-agent's port shows whether one is there anyway. */
async function probeStatusPort(sys: System, options: Options, url: URL): Promise<void> {
  try {
    const http = await sys.loadHttp({ lookupBoundMs: options.requestTimeout });
    const answered = await http.connect(url, Math.min(options.requestTimeout, 500));
    http.close();
    if (answered) {
      sys.log.warn(
        `SIDECAR FOUND ALTHOUGH THE STATUS SAYS NONE: something listens on ${url.host} (pilot-agent's status port), ` +
          'so a classic istio-proxy seems to run in this pod and will keep it running after the job. ' +
          'Check the fieldPath of ISTIO_JOB_RUN_SIDECAR_STATUS, or set --sidecar classic',
      );
    }
  } catch {
    // No HTTP client: nothing to check with; the status stands.
  }
}
