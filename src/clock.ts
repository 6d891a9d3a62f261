export interface Clock {
  /** Monotonic milliseconds. */
  now(): number;
  /** Resolves after ms, or early (without throwing) when cancel aborts. */
  sleep(ms: number, cancel?: AbortSignal): Promise<void>;
}

/**
 * Monotonic milliseconds from process.hrtime: `performance.now()` would load perf_hooks and eight more of Node's
 * modules at its first call, in a process that only needs a number.
 */
export function monotonicMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}

export const systemClock: Clock = {
  now: monotonicMs,
  sleep: (ms, cancel) =>
    new Promise((resolve) => {
      if (cancel?.aborted === true) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        cancel?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      cancel?.addEventListener('abort', done, { once: true });
    }),
};
