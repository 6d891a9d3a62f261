// The steps: parse -> find the sidecars -> wait for them -> run the command -> quit them -> exit code.
// The invariant: every classic sidecar found is told to quit, as the policy allows, on every way out, and
// the outcome never changes the exit code.

import { readFileSync } from 'node:fs';
import type { Child } from './child.ts';
import type { Clock } from './clock.ts';
import { type AnnotationsFile, type Detection, describeSidecars, detect } from './detect.ts';
import { EXIT_WRAPPER_FAILED, exitCodeFor, signalExitCode } from './exit-code.ts';
import type { Http, HttpSettings } from './http.ts';
import type { QuitPlan } from './launcher-link.ts';
import type { Logger } from './log.ts';
import { parseInvocation } from './options-parse.ts';
import { DEFAULT_ANNOTATIONS_FILE, type Options } from './options-table.ts';
import type { SidecarLink } from './sidecars.ts';
import { signalName, type SignalRouter } from './signals.ts';

/** Everything main touches outside itself, passed in so tests can drive it. */
export interface System {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly version: string;
  readonly log: Logger;
  readonly signals: SignalRouter;
  readonly clock: Clock;
  readonly writeStdout: (text: string) => void;
  readonly loadHttp: (settings?: HttpSettings) => Promise<Http>;
  readonly startChild: (command: readonly string[]) => Child;
  /** The sidecars to tell to quit should this process die first: the portable bundle's launcher does then. */
  readonly planQuit?: (plan: QuitPlan) => void;
  /** --install DIR; returns the exit code. */
  readonly install: (dir: string) => number | Promise<number>;
  /** Reads a text file (the pod's annotations); throws as readFileSync does. Default: readFileSync. */
  readonly readFile?: (path: string) => string;
}

export async function main(sys: System): Promise<number> {
  const invocation = parseInvocation(sys.argv, sys.env);
  if (invocation.kind === 'help') {
    // Loaded when asked for (as are the sidecars' modules below): the bundle runs a module's top level only then.
    const { renderHelp } = await import('./options-help.ts');
    sys.writeStdout(renderHelp(sys.version));
    return 0;
  }
  if (invocation.kind === 'version') {
    sys.writeStdout(`istio-job-run ${sys.version}\n`);
    return 0;
  }
  if (invocation.kind === 'install') return sys.install(invocation.dir);

  const { options } = invocation;
  sys.log.configure(options.logLevel, options.logFormat);
  if (invocation.scuttle !== undefined) sys.log.info(invocation.scuttle);
  const detection = detect({
    options,
    env: sys.env,
    envoyAdmin: invocation.envoyAdmin,
    ...readAnnotations(sys, options),
  });
  const proxy = await announce(sys, options, detection);
  const quitUrls = proxy === undefined ? [] : detection.sidecars.flatMap((sidecar) => sidecar.quit);
  sys.planQuit?.({ urls: quitUrls, policy: options.quit, timeoutMs: options.quitTimeout });

  let code: number;
  try {
    const errors = [...(invocation.kind === 'usage-error' ? invocation.errors : []), ...detection.errors];
    if (invocation.kind === 'usage-error' || errors.length > 0) {
      for (const error of errors) sys.log.error(error);
      code = EXIT_WRAPPER_FAILED;
    } else {
      code = await runJob(sys, options, invocation.command, proxy);
    }
  } catch (error) {
    sys.log.error(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    code = EXIT_WRAPPER_FAILED;
  }

  await proxy?.quit(code);
  proxy?.close();
  return code;
}

/** Wait, run, and report how the command ended. Throws only before the command has started. */
async function runJob(sys: System, options: Options, command: readonly string[], proxy: SidecarLink | undefined): Promise<number> {
  const { log, signals } = sys;

  if (proxy !== undefined && options.wait) {
    const readiness = await proxy.waitUntilReady(signals.beforeStart);
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
  if (signals.beforeStart.aborted) return signalExitCode(signals.beforeStart.reason as number);

  const child = sys.startChild(command);
  signals.forwardTo(child);
  proxy?.prepare();
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

/** The pod's annotations file: the one named, or the default one when it exists. */
function readAnnotations(sys: System, options: Options): { annotations?: AnnotationsFile } {
  const path = options.podAnnotations;
  const read = sys.readFile ?? ((file: string) => readFileSync(file, 'utf8'));
  try {
    return { annotations: { path, text: read(path) } };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (path === DEFAULT_ANNOTATIONS_FILE && code === 'ENOENT') return {};
    return { annotations: { path, error: `cannot be read (${code ?? (error as Error).message})` } };
  }
}

/** Says what was found, warns about what cannot be stopped, and links the sidecars there are to talk to. */
async function announce(sys: System, options: Options, detection: Detection): Promise<SidecarLink | undefined> {
  const { log } = sys;
  log[detection.mode.level](detection.mode.reason);
  for (const note of detection.notes) log[note.level](note.message);
  if (detection.sidecars.length > 0) log.info(describeSidecars(detection.sidecars));
  const needsHttp = detection.sidecars.length > 0 || detection.probe !== undefined;
  if (!needsHttp) return undefined;
  const { linkSidecars } = await import('./sidecars.ts');
  const link = linkSidecars(
    { log, clock: sys.clock, loadHttp: () => sys.loadHttp({ lookupBoundMs: options.requestTimeout }) },
    detection.sidecars,
    options,
  );
  if (detection.probe !== undefined) await probeStatusPort(sys, options, detection.probe);
  if (detection.sidecars.length > 0) return link;
  link.close();
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
