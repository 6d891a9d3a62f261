// Telling classic sidecars to quit: whether to (the policy), how to read each answer (each kind's rules in
// src/config/kinds.ts), and the retrying POSTs. Nothing here throws, and nothing here changes the exit code.

import { type Attempt, describeAttempt } from '../http/attempt.ts';
import type { Clock } from '../clock.ts';
import { formatDuration } from '../config/duration.ts';
import type { Http } from '../http/undici.ts';
import type { Logger } from '../log.ts';
import type { QuitPolicy } from '../config/options.ts';
import type { QuitTarget, SidecarKind } from '../config/kinds.ts';
import { shownUrl } from '../quote.ts';

/** always; on-success only after exit 0 (restartPolicy OnFailure needs the proxy for the retry); never. */
export function shouldQuit(policy: QuitPolicy, exitCode: number): boolean {
  switch (policy) {
    case 'always':
      return true;
    case 'on-success':
      return exitCode === 0;
    case 'never':
      return false;
  }
}

export type Verdict = 'acknowledged' | 'gone' | 'retry' | 'rejected';

/**
 * The quit policy's numbers, here once: this side's retries follow them, and scripts/launcher-header.ts writes
 * them into the C header, so the launcher's own last-resort quit retries the same way. The per-attempt bound
 * is --request-timeout, which the quit plan carries to the launcher.
 */
export const QUIT_RETRY = {
  /** A status in [from, below) acknowledges the quit. */
  acknowledged: { from: 200, below: 300 },
  /** Retried: every status from this on (a sidecar still starting or stopping), and these. */
  retriedFrom: 500,
  retriedStatuses: [408, 429],
  /** The pause before retry n: firstBackoffMs doubling, at most maxBackoffMs. */
  firstBackoffMs: 20,
  maxBackoffMs: 1_000,
} as const;

const acknowledges = (status: number): boolean => status >= QUIT_RETRY.acknowledged.from && status < QUIT_RETRY.acknowledged.below;
const retried = (status: number): boolean =>
  status >= QUIT_RETRY.retriedFrom || (QUIT_RETRY.retriedStatuses as readonly number[]).includes(status);

/** What one answer to a quit means. `answeredBefore`: this listener has accepted a connection before. */
export function judge(attempt: Attempt, answeredBefore: boolean): Verdict {
  switch (attempt.kind) {
    case 'response': {
      const { status } = attempt;
      if (acknowledges(status)) return 'acknowledged';
      if (retried(status)) return 'retry';
      return 'rejected'; // 404 wrong path, 405 wrong method, 403 not from localhost: retrying cannot help.
    }
    case 'refused':
      // A sidecar closes its listener as soon as it accepts a quit: refused after an answer means gone.
      // Refused before any answer: it may not listen yet (the job's container can start first).
      return answeredBefore ? 'gone' : 'retry';
    case 'reset':
    case 'timeout':
    case 'failed':
    case 'aborted':
      return 'retry';
  }
}

/** The pause before retry number n (1-based), as QUIT_RETRY says. */
export function backoffMs(retry: number): number {
  return Math.min(QUIT_RETRY.maxBackoffMs, QUIT_RETRY.firstBackoffMs * 2 ** Math.max(0, retry - 1));
}

export interface QuitResult {
  readonly url: URL;
  readonly kind: SidecarKind;
  /** not-enabled: the sidecar answered that its quit endpoint is switched off. */
  readonly verdict: 'acknowledged' | 'gone' | 'rejected' | 'not-enabled' | 'gave-up';
  readonly attempts: number;
  readonly elapsedMs: number;
  readonly last: Attempt;
}

export interface QuitParams {
  /** Each URL with the kind of sidecar behind it, for its rules and hints. */
  readonly targets: readonly QuitTarget[];
  readonly timeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly http: Http;
  readonly clock: Clock;
  readonly log: Logger;
  /** Whether this URL's host and port accepted a connection before quitting began. */
  readonly answeredBefore: (url: URL) => boolean;
}

/** POSTs every quit URL in parallel, each until acknowledged, gone, rejected or out of time. */
export async function quitProxy(params: QuitParams): Promise<QuitResult[]> {
  const started = params.clock.now();
  const deadline = started + params.timeoutMs;
  return Promise.all(params.targets.map((target) => quitOne(target, deadline, params)));
}

async function quitOne({ url, kind }: QuitTarget, deadline: number, params: QuitParams): Promise<QuitResult> {
  const { http, clock, log, requestTimeoutMs } = params;
  const started = clock.now();
  let answered = params.answeredBefore(url);
  let attempts = 0;
  let last: Attempt = { kind: 'timeout' };

  const done = (verdict: QuitResult['verdict']): QuitResult => {
    const result: QuitResult = { url, kind, verdict, attempts, elapsedMs: clock.now() - started, last };
    report(log, result);
    return result;
  };

  try {
    for (;;) {
      const remaining = deadline - clock.now();
      if (remaining <= 0) return done('gave-up');
      attempts += 1;
      const cutShort = remaining < requestTimeoutMs;
      const attempt = await http.attempt('POST', url, Math.min(requestTimeoutMs, remaining));
      if (kind.notEnabled?.(attempt) === true) {
        last = attempt;
        return done('not-enabled');
      }
      const verdict = judge(attempt, answered);
      if (verdict !== 'retry') {
        last = attempt;
        return done(verdict);
      }
      // An attempt that only timed out because the overall deadline came says nothing about the proxy:
      // the answer before it is the one worth reporting.
      if (!(cutShort && attempt.kind === 'timeout' && attempts > 1)) last = attempt;
      if (attempt.kind === 'response') answered = true;
      log.debug(`quit attempt ${attempts} to ${shownUrl(url)}: ${describeAttempt(attempt)}; retrying`);
      await clock.sleep(Math.min(backoffMs(attempts), deadline - clock.now()));
    }
  } catch (error) {
    last = { kind: 'failed', code: error instanceof Error ? error.message : String(error) };
    return done('gave-up');
  }
}

function report(log: Logger, result: QuitResult): void {
  const { attempts, elapsedMs, kind } = result;
  const url = shownUrl(result.url);
  const last = describeAttempt(result.last);
  const who = kind.label;
  const fields = { url, attempts, ms: Math.round(elapsedMs), last };
  const tally = `${attempts} attempt${attempts === 1 ? '' : 's'}, ${formatDuration(elapsedMs)}`;
  switch (result.verdict) {
    case 'acknowledged':
      log.info(`${who} acknowledged the quit (POST ${url}: ${tally})`, fields);
      return;
    case 'gone':
      log.info(`${who} already gone (POST ${url} refused after it had answered: ${tally})`, fields);
      return;
    case 'not-enabled':
      log.warn(
        `${who} says its quit endpoint is not enabled: POST ${url} answered ${last} (${tally}); ` + `enable it with ${kind.enableQuit}`,
        fields,
      );
      return;
    case 'rejected':
      log.warn(`${who} rejected the quit, not retrying: POST ${url} answered ${last} (${tally})${hint(result)}`, fields);
      return;
    case 'gave-up':
      log.warn(`gave up telling the ${who} to quit: POST ${url}, last: ${last} (${tally})${hint(result)}`, fields);
      return;
  }
}

/** The hint that fits the last answer, from the kind's table; the answer is read as it is, never from text. */
function hint({ kind, last, verdict }: QuitResult): string {
  const text =
    verdict === 'rejected' && last.kind === 'response'
      ? kind.rejectHints?.[last.status]
      : verdict === 'gave-up'
        ? kind.gaveUpHint
        : undefined;
  return text === undefined ? '' : `; ${text}`;
}
