export interface Clock {
  /** Monotonic milliseconds. */
  now(): number;
  /** Resolves after ms, or early (without throwing) when cancel aborts. */
  sleep(ms: number, cancel?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  // node:timers/promises is loaded at the first wait (classic mode only), not at start.
  sleep: (ms, cancel) =>
    process
      .getBuiltinModule('node:timers/promises')
      .setTimeout(Math.max(0, ms), undefined, cancel === undefined ? {} : { signal: cancel })
      .catch(() => undefined),
};
