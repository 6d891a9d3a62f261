import { setTimeout as delay } from 'node:timers/promises';

export interface Clock {
  /** Monotonic milliseconds. */
  now(): number;
  /** Resolves after ms, or early (without throwing) when cancel aborts. */
  sleep(ms: number, cancel?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  sleep: (ms, cancel) => delay(Math.max(0, ms), undefined, cancel === undefined ? {} : { signal: cancel }).catch(() => undefined),
};
