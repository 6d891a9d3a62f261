// Waiting for and stopping a list of sidecars: every readiness check under one deadline, every quit in
// parallel under one, and the memory behind "already gone": which listeners (host and port) have accepted a
// connection, from a readiness answer, a connect when the command starts, or an earlier quit attempt.

import { type Attempt, describeAttempt } from '../http/attempt.ts';
import type { Clock } from '../clock.ts';
import type { Sidecar } from '../config/detect.ts';
import { formatDuration } from '../config/duration.ts';
import type { Http } from '../http/undici.ts';
import type { Logger } from '../log.ts';
import type { Options } from '../config/options.ts';
import { isLoopback, listenerKey } from '../http/listener.ts';
import { shownUrl } from '../quote.ts';
import { quitProxy, shouldQuit } from './quit.ts';
import { type Readiness, waitUntilReady } from './readiness.ts';
import { GENERIC_KIND, type SidecarKind } from '../config/kinds.ts';

type ReadyOutcome =
  | { readonly kind: 'ready' }
  | { readonly kind: 'cancelled' }
  /** `what`: every sidecar that was not ready, its last answer and the hint that fits. */
  | { readonly kind: 'timeout'; readonly what: string };

export interface SidecarLink {
  waitUntilReady(cancel: AbortSignal): Promise<ReadyOutcome>;
  /** Loads the HTTP client while the command runs, and notes which quit listeners accept a connection now. */
  prepare(): void;
  /** Quits as the policy allows; never throws. */
  quit(exitCode: number): Promise<void>;
  close(): void;
}

export interface LinkDeps {
  readonly log: Logger;
  readonly clock: Clock;
  readonly loadHttp: () => Promise<Http>;
}

type Settings = Pick<Options, 'readyTimeout' | 'pollInterval' | 'requestTimeout' | 'quit' | 'quitTimeout'>;

export function linkSidecars(deps: LinkDeps, sidecars: readonly Sidecar[], settings: Settings): SidecarLink {
  const { log, clock } = deps;
  let http: Promise<Http> | undefined;
  const load = (): Promise<Http> => (http ??= deps.loadHttp());
  const accepted = new Set<string>();
  let probes: Promise<void> = Promise.resolve();

  const quitTargets = sidecars.flatMap((sidecar) => sidecar.quit);
  for (const { url, kind } of quitTargets) {
    if (!isLoopback(url)) {
      const who =
        kind === GENERIC_KIND || kind.name === 'istio' ? 'pilot-agent, like most sidecars,' : `${kind.label}, like most sidecars,`;
      log.warn(`quit URL ${shownUrl(url)} is not a loopback address: ${who} accepts a quit only from localhost`);
    }
  }
  const subject = sidecars.length === 1 ? (sidecars[0]?.kind.label ?? 'proxy') : 'sidecars';

  return {
    async waitUntilReady(cancel) {
      const waiting = sidecars.flatMap((sidecar) => (sidecar.ready === undefined ? [] : [{ sidecar, url: sidecar.ready }]));
      if (waiting.length === 0) return { kind: 'ready' };
      const client = await load();
      const results = await Promise.all(
        waiting.map(async ({ sidecar, url }) => {
          const of = waiting.length > 1 ? ` of ${sidecar.kind.label}` : '';
          const readiness = await waitUntilReady({
            url,
            timeoutMs: settings.readyTimeout,
            intervalMs: settings.pollInterval,
            requestTimeoutMs: settings.requestTimeout,
            http: client,
            clock,
            cancel,
            onAttempt: (attempt, n) => log.debug(`readiness check ${n}${of}: ${describeAttempt(attempt)}`),
          });
          if (readiness.kind === 'ready' || (readiness.kind === 'timeout' && readiness.answered)) accepted.add(listenerKey(url));
          if (readiness.kind === 'ready') {
            log.info(`${sidecar.kind.label} ready after ${formatDuration(readiness.elapsedMs)}`, {
              ms: Math.round(readiness.elapsedMs),
              attempts: readiness.attempts,
            });
          }
          return { sidecar, readiness };
        }),
      );
      if (results.some(({ readiness }) => readiness.kind === 'cancelled')) return { kind: 'cancelled' };
      const late = results.flatMap(({ sidecar, readiness }) => (readiness.kind === 'timeout' ? [notReady(sidecar, readiness)] : []));
      if (late.length === 0) return { kind: 'ready' };
      return { kind: 'timeout', what: late.join('; ') };
    },
    prepare() {
      // A listener that accepts a connection now and refuses one later has gone away: the rule behind "gone".
      probes = load().then(
        (client) =>
          Promise.all(
            quitTargets.map(async ({ url }) => {
              if (await client.connect(url, settings.requestTimeout)) accepted.add(listenerKey(url));
            }),
          ).then(() => undefined),
        () => undefined,
      );
    },
    async quit(exitCode) {
      if (quitTargets.length === 0) return;
      if (!shouldQuit(settings.quit, exitCode)) {
        const why = settings.quit === 'never' ? '--quit never' : `exit code ${exitCode} and --quit on-success`;
        log.info(`not telling the ${subject} to quit (${why})`);
        return;
      }
      try {
        const client = await load();
        await probes;
        await quitProxy({
          targets: quitTargets,
          timeoutMs: settings.quitTimeout,
          requestTimeoutMs: settings.requestTimeout,
          http: client,
          clock,
          log,
          answeredBefore: (url) => accepted.has(listenerKey(url)),
        });
      } catch (error) {
        log.warn(`could not tell the ${subject} to quit: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
    close() {
      http?.then((client) => client.close()).catch(() => undefined);
    },
  };
}

function notReady(sidecar: Sidecar, readiness: Readiness & { kind: 'timeout' }): string {
  const { kind } = sidecar;
  const hint = readyHint(kind, readiness.last);
  const tally = `${readiness.attempts} attempts, last: ${describeAttempt(readiness.last)}`;
  return `${kind.label} not ready after ${formatDuration(readiness.elapsedMs)} (GET ${sidecar.ready === undefined ? '' : shownUrl(sidecar.ready)}: ${tally})${hint}`;
}

/** The kind's readiness hint, when the answers say the endpoint is not there (refused or 404). */
function readyHint(kind: SidecarKind, last: Attempt): string {
  if (kind.readyHint === undefined) return '';
  const missing = last.kind === 'refused' || (last.kind === 'response' && last.status === 404);
  return missing ? `; ${kind.readyHint}` : '';
}
