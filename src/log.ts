// The wrapper's own lines: stderr only (stdout belongs to the job), written synchronously so they keep
// their order with the job's output and survive process.exit. A failing or full stderr never fails or
// stalls the wrapper.

import { writeSync } from 'node:fs';

/** The levels and formats of --log-level and --log-format, whose table (src/config/options.ts) reads them here. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = (typeof LOG_FORMATS)[number];

const RANK: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
/** What leads each line in the text format, the launcher's own lines too. */
export const PREFIX = 'istio-job-run:';

export type Fields = Readonly<Record<string, string | number | boolean | undefined>>;

export interface Logger {
  debug(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
  /** Applied once the options are known; until then the defaults hold. */
  configure(level: LogLevel, format: LogFormat): void;
}

/**
 * Writes what stderr takes now. In the portable bundle fd 2 is a non-blocking pipe to the launcher, which
 * passes the lines on: a line that does not fit is dropped (a stalled log reader must never stall the wrapper).
 */
export function writeStderr(text: string): void {
  try {
    let bytes = Buffer.from(text);
    while (bytes.length > 0) bytes = bytes.subarray(writeSync(2, bytes));
  } catch {
    // EAGAIN (full), or stderr closed or broken: the job's exit code matters more than our message.
  }
}

export function createLogger(write: (text: string) => void = writeStderr, now: () => Date = () => new Date()): Logger {
  let threshold = RANK.info;
  let format: LogFormat = 'text';

  const emit = (level: Exclude<LogLevel, 'silent'>, message: string, fields: Fields = {}): void => {
    if (RANK[level] < threshold) return;
    if (format === 'json') {
      const record = { time: now().toISOString(), level, msg: message };
      // The record's keys lead the line, and no field can overwrite them.
      write(`${JSON.stringify({ ...record, ...fields, ...record })}\n`);
      return;
    }
    const tag = level === 'warn' ? ' warning:' : level === 'debug' ? ' debug:' : '';
    write(`${PREFIX}${tag} ${message}\n`);
  };

  return {
    debug: (message, fields) => emit('debug', message, fields),
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
    configure(level, newFormat) {
      threshold = RANK[level];
      format = newFormat;
    },
  };
}
