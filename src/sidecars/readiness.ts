// Poll a sidecar's readiness URL until it answers 2xx, the deadline passes, or a signal cancels the wait.
// The result says what the wait learned: whether the listener answered at all (so a refusal later means
// it is gone), and the last answer, still typed.

import type { Attempt } from '../http/attempt.ts';
import type { Clock } from '../clock.ts';
import { SLOW_INTERVAL_MS } from '../config/options.ts';
import type { Http } from '../http/undici.ts';

export type Readiness =
  | { readonly kind: 'ready'; readonly elapsedMs: number; readonly attempts: number }
  | {
      readonly kind: 'timeout';
      readonly elapsedMs: number;
      readonly attempts: number;
      readonly last: Attempt;
      /** Some attempt got an HTTP answer: the listener was up. */
      readonly answered: boolean;
    }
  | { readonly kind: 'cancelled' };

export interface ReadinessParams {
  readonly url: URL;
  readonly timeoutMs: number;
  readonly intervalMs: number;
  readonly requestTimeoutMs: number;
  readonly http: Http;
  readonly clock: Clock;
  readonly cancel: AbortSignal;
  /** Called after every attempt that was not ready, for the debug log. */
  readonly onAttempt?: (attempt: Attempt, n: number) => void;
}

/** True for the statuses that mean ready: Istio keeps answering 200 once it is. */
export const isReady = (attempt: Attempt): boolean => attempt.kind === 'response' && attempt.status >= 200 && attempt.status < 300;

/**
 * While the proxy is not ready the interval grows with the wait, to a fifth of the time waited so far, up to
 * SLOW_INTERVAL_MS (never below the interval asked for): each check wakes the wrapper and costs CPU that a
 * `cpu: 100m` job pays ten times over in wall time, and a proxy slow to start is found within a fifth of its
 * own delay, a tenth of a second at most.
 */
export const intervalAfter = (waitedMs: number, intervalMs: number): number =>
  Math.max(intervalMs, Math.min(SLOW_INTERVAL_MS, waitedMs / 5));

export async function waitUntilReady(params: ReadinessParams): Promise<Readiness> {
  const { url, timeoutMs, intervalMs, requestTimeoutMs, http, clock, cancel, onAttempt } = params;
  const started = clock.now();
  const deadline = started + timeoutMs;
  let attempts = 0;
  let answered = false;
  let last: Attempt = { kind: 'timeout' };

  // GET at once, then every interval (measured from the start of each attempt), growing as intervalAfter says.
  for (;;) {
    if (cancel.aborted) return { kind: 'cancelled' };
    const attemptStart = clock.now();
    const remaining = deadline - attemptStart;
    if (remaining <= 0) return { kind: 'timeout', elapsedMs: attemptStart - started, attempts, last, answered };

    attempts += 1;
    const attempt = await http.attempt('GET', url, Math.min(requestTimeoutMs, remaining), cancel);
    if (attempt.kind === 'aborted') return { kind: 'cancelled' };
    if (isReady(attempt)) return { kind: 'ready', elapsedMs: clock.now() - started, attempts };
    if (attempt.kind === 'response') answered = true;
    onAttempt?.(attempt, attempts);
    // A last attempt that timed out only because the deadline came would hide the answer before it.
    if (!(attempt.kind === 'timeout' && remaining < requestTimeoutMs && attempts > 1)) last = attempt;

    const next = Math.min(attemptStart + intervalAfter(attemptStart - started, intervalMs), deadline);
    await clock.sleep(next - clock.now(), cancel);
  }
}
