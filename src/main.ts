// The steps: parse -> resolve the sidecar mode -> wait for the proxy -> run the command -> quit -> exit code.
// The invariant: in classic mode the quit is attempted, as the policy allows, on every way out, and its
// outcome never changes the exit code.

import type { Child } from './child.ts';
import type { Clock } from './clock.ts';
import { formatDuration } from './duration.ts';
import { EXIT_WRAPPER_FAILED, exitCodeFor, signalExitCode } from './exit-code.ts';
import { describe } from './attempt.ts';
import type { Http } from './http.ts';
import type { Logger } from './log.ts';
import { resolveMode } from './mode.ts';
import { parseInvocation, renderHelp, type Options } from './options.ts';
import { isLoopback, quitProxy, sameProxy, shouldQuit } from './quit.ts';
import { waitUntilReady } from './readiness.ts';
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
  readonly loadHttp: () => Promise<Http>;
  readonly startChild: (command: readonly string[]) => Child;
  /** --install DIR; returns the exit code. */
  readonly install: (dir: string) => number;
}

export async function main(sys: System): Promise<number> {
  const invocation = parseInvocation(sys.argv, sys.env);
  if (invocation.kind === 'help') {
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
  const { mode, reason, level } = resolveMode(options.sidecar, sys.env);
  sys.log[level](reason);
  const proxy = mode === 'classic' ? linkProxy(sys, options) : undefined;

  let code: number;
  try {
    if (invocation.kind === 'usage-error') {
      for (const error of invocation.errors) sys.log.error(error);
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
async function runJob(sys: System, options: Options, command: readonly string[], proxy: ProxyLink | undefined): Promise<number> {
  const { log, signals } = sys;

  if (proxy !== undefined && options.wait) {
    const readiness = await proxy.waitUntilReady(signals.beforeStart);
    if (readiness.kind === 'ready') {
      log.info(`proxy ready after ${formatDuration(readiness.elapsedMs)}`, { ms: Math.round(readiness.elapsedMs), attempts: readiness.attempts });
    } else if (readiness.kind === 'timeout') {
      const what = `proxy not ready after ${formatDuration(readiness.elapsedMs)} (GET ${options.readyUrl.href}: ${readiness.attempts} attempts, last: ${readiness.last})`;
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

interface ProxyLink {
  waitUntilReady(cancel: AbortSignal): ReturnType<typeof waitUntilReady>;
  /** Loads the HTTP client while the command runs, so the quit starts at once. */
  prepare(): void;
  /** Quits as the policy allows; never throws. */
  quit(exitCode: number): Promise<void>;
  close(): void;
}

function linkProxy(sys: System, options: Options): ProxyLink {
  const { log, clock } = sys;
  let http: Promise<Http> | undefined;
  let answered = false;
  const load = (): Promise<Http> => (http ??= sys.loadHttp());

  for (const url of options.quitUrls) {
    if (!isLoopback(url)) {
      log.warn(`quit URL ${url.href} is not a loopback address: pilot-agent, like most sidecars, accepts a quit only from localhost`);
    }
  }

  return {
    async waitUntilReady(cancel) {
      const readiness = await waitUntilReady({
        url: options.readyUrl,
        timeoutMs: options.readyTimeout,
        intervalMs: options.pollInterval,
        requestTimeoutMs: options.requestTimeout,
        http: await load(),
        clock,
        cancel,
        onAttempt: (attempt, n) => {
          if (attempt.kind === 'response') answered = true;
          log.debug(`readiness check ${n}: ${describe(attempt)}`);
        },
      });
      if (readiness.kind === 'ready') answered = true;
      return readiness;
    },
    prepare() {
      load().catch(() => undefined);
    },
    async quit(exitCode) {
      if (!shouldQuit(options.quit, exitCode)) {
        const why = options.quit === 'never' ? '--quit never' : `exit code ${exitCode} and --quit on-success`;
        log.info(`not telling the proxy to quit (${why})`);
        return;
      }
      try {
        await quitProxy({
          urls: options.quitUrls,
          timeoutMs: options.quitTimeout,
          requestTimeoutMs: options.requestTimeout,
          http: await load(),
          clock,
          log,
          answeredBefore: (url) => answered && sameProxy(options.readyUrl, url),
        });
      } catch (error) {
        log.warn(`could not tell the proxy to quit: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
    close() {
      http?.then((client) => client.close()).catch(() => undefined);
    },
  };
}
