// Test doubles shared by the unit tests: a virtual clock, a scripted Http, a recording Logger.
// Not a test file itself (no .test.ts), so the runner only loads it through imports.

import type { Clock } from '../../src/clock.ts';
import type { Attempt } from '../../src/http/attempt.ts';
import type { Http } from '../../src/http/undici.ts';
import type { Fields, Logger } from '../../src/log.ts';
import type { LogFormat, LogLevel } from '../../src/config/options.ts';

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fire: () => void;
}

/**
 * Virtual time. `sleep` never waits for real time: once every task is blocked (checked with setImmediate,
 * after the microtasks have run), time jumps to the earliest pending timer. Concurrent sleepers therefore
 * see the same timeline, as with real timers.
 */
export class VirtualClock implements Clock {
  #now = 0;
  #seq = 0;
  #timers: Timer[] = [];
  #pumping = false;

  now(): number {
    return this.#now;
  }

  sleep(ms: number, cancel?: AbortSignal): Promise<void> {
    if (cancel?.aborted === true) return Promise.resolve();
    return new Promise((resolve) => {
      const onAbort = (): void => {
        this.#timers = this.#timers.filter((timer) => timer !== entry);
        resolve();
      };
      const entry = this.#add(this.#now + Math.max(0, ms), () => {
        cancel?.removeEventListener('abort', onAbort);
        resolve();
      });
      cancel?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Runs `action` when virtual time reaches `time`, e.g. to abort a wait part-way. */
  at(time: number, action: () => void): void {
    this.#add(time, action);
  }

  #add(at: number, fire: () => void): Timer {
    const timer = { at, seq: this.#seq++, fire };
    this.#timers.push(timer);
    this.#schedule();
    return timer;
  }

  #schedule(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    setImmediate(() => {
      this.#pumping = false;
      this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.#timers.shift();
      if (next === undefined) return;
      this.#now = Math.max(this.#now, next.at);
      next.fire();
      if (this.#timers.length > 0) this.#schedule();
    });
  }
}

export interface Call {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly timeoutMs: number;
  /** Virtual time when the attempt began. */
  readonly at: number;
  readonly cancel: AbortSignal | undefined;
}

/** One scripted answer: a fixed Attempt, or a function of the call (may take virtual time, or throw). */
export type Step = Attempt | ((call: Call, clock: Clock) => Attempt | Promise<Attempt>);

/** An Http whose attempts follow a script per URL; the last step repeats once the script runs out. */
export class ScriptedHttp implements Http {
  readonly calls: Call[] = [];
  readonly #clock: Clock;
  readonly #scripts: Map<string, Step[]>;

  constructor(clock: Clock, scripts: Readonly<Record<string, readonly Step[]>>) {
    this.#clock = clock;
    this.#scripts = new Map(Object.entries(scripts).map(([url, steps]) => [url, [...steps]]));
  }

  async attempt(method: 'GET' | 'POST', url: URL, timeoutMs: number, cancel?: AbortSignal): Promise<Attempt> {
    const call = { method, url: url.href, timeoutMs, at: this.#clock.now(), cancel };
    this.calls.push(call);
    const steps = this.#scripts.get(url.href);
    if (steps === undefined || steps.length === 0) throw new Error(`no script for ${url.href}`);
    const step = (steps.length > 1 ? steps.shift() : steps[0]) as Step;
    return typeof step === 'function' ? step(call, this.#clock) : step;
  }

  /** Listeners that accept a TCP connection (hrefs with any path of that host and port); none unless told. */
  readonly accepting = new Set<string>();
  readonly connects: string[] = [];

  async connect(url: URL): Promise<boolean> {
    this.connects.push(url.href);
    return this.accepting.has(url.host);
  }

  close(): void {}

  callsTo(href: string): Call[] {
    return this.calls.filter((call) => call.url === href);
  }
}

export const response = (status: number, body = ''): Attempt => ({ kind: 'response', status, body });
export const refused: Attempt = { kind: 'refused' };

/** An attempt that hangs until its own timeout (or the cancel signal), as a silent peer does. */
export const hangs: Step = async ({ timeoutMs, cancel }, clock) => {
  await clock.sleep(timeoutMs, cancel);
  return cancel?.aborted === true ? { kind: 'aborted' } : { kind: 'timeout' };
};

export interface Line {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields: Fields | undefined;
}

/** A Logger that keeps every line, whatever the level. */
export class RecordingLogger implements Logger {
  readonly lines: Line[] = [];
  configured: { level: LogLevel; format: LogFormat } | undefined;

  debug(message: string, fields?: Fields): void {
    this.lines.push({ level: 'debug', message, fields });
  }
  info(message: string, fields?: Fields): void {
    this.lines.push({ level: 'info', message, fields });
  }
  warn(message: string, fields?: Fields): void {
    this.lines.push({ level: 'warn', message, fields });
  }
  error(message: string, fields?: Fields): void {
    this.lines.push({ level: 'error', message, fields });
  }
  configure(level: LogLevel, format: LogFormat): void {
    this.configured = { level, format };
  }

  at(level: Line['level']): string[] {
    return this.lines.filter((line) => line.level === level).map((line) => line.message);
  }
}
