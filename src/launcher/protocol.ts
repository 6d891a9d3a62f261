// The protocol between the portable bundle's launcher (src/launcher/launcher.c) and the wrapper (src/launcher/link.ts):
// text lines, a verb and its numbers, over the channel the launcher names in CHANNEL_ENV. This module is its one
// definition; scripts/launcher-header.ts writes it, with the other names the launcher shares with the
// wrapper, as the C header launcher.c is compiled with.

/**
 * The longest line either side sends, its newline included. The wrapper never sends a longer one: a quit URL
 * whose line would not fit is a usage error when the options are read (quitTargetLine measures it). The
 * launcher reads lines into a buffer of this size; a longer line is discarded through its newline, said in one
 * line on stderr, and never read as lines of its own.
 */
export const MAX_LINE_BYTES = 4096;

/** At most this many quit targets in a quit plan; more is a usage error when the options are read. */
export const MAX_QUIT_TARGETS = 16;

/** Set by the launcher for the wrapper only: "<fd>", a socket for both directions. The command never sees it. */
export const CHANNEL_ENV = 'ISTIO_JOB_RUN_LAUNCHER';

/** Lines the launcher writes to the wrapper. */
export const TO_WRAPPER = {
  /**
   * `sig N k|u`: signal N reached the launcher, sent by the kernel (k: a terminal's key, say) or by a process (u),
   * and the wrapper decides what it does: it came before the command ran, after it ended, or is one the command
   * does not get (decide() in src/command/signals.ts).
   */
  signal: 'sig',
  /**
   * `passed N k|u`: signal N reached the launcher while the command ran, and the launcher passed it on to the
   * command as it read it, as decide() says for a running command: the wrapper only notes it.
   */
  passed: 'passed',
  /** `started PID`: the command runs. */
  started: 'started',
  /** `failed ERRNO`: the command could not be started. */
  failed: 'failed',
  /** `exited CODE`: the command ended with CODE. */
  exited: 'exited',
  /** `signaled N`: the command died of signal N. */
  signaled: 'signaled',
} as const;

/** Lines the wrapper writes to the launcher. */
export const FROM_WRAPPER = {
  /** `hello`: its signal handlers exist; relayed signals are read from now on. */
  hello: 'hello',
  /**
   * `tool`, instead of `hello`: this is a manifest tool (--check, --inject, the kubectl plugin), which reads no
   * line: TERM, INT and HUP (ENDS_TOOL) are sent to it as signals, whose default action ends it at once, and the
   * launcher exits with 128+N.
   */
  tool: 'tool',
  /** `run COUNT`: run the last COUNT arguments the launcher was given, as the command. */
  run: 'run',
  /**
   * `kill N`: send signal N to the command. The launcher passes a running command its signals itself (`passed`);
   * this is for one it relayed (`sig`) that the wrapper decides the command gets: a stop request read after the
   * wrapper asked for the command and before it started.
   */
  kill: 'kill',
  /** `log FORMAT`: the format of the launcher's own lines from now on (LOG_FORMATS). */
  log: 'log',
  /**
   * `target LABEL ADDRESS PORT HOST PATH`: one sidecar's quit endpoint as the launcher POSTs it, parsed here
   * (quitTargetLine): the numeric address to connect to, its port, the Host header and the request's path and
   * query. It waits for the `quit` line that counts it.
   */
  target: 'target',
  /**
   * `quit POLICY TIMEOUT_MS REQUEST_TIMEOUT_MS COUNT`: the sidecars to tell to quit, should the wrapper end
   * before it has: the COUNT `target` lines just before it, when (QUIT_POLICIES), for how long in all
   * (--quit-timeout) and for how long each attempt (--request-timeout).
   */
  quit: 'quit',
  /** `exit CODE`: the wrapper is done; the launcher stops it and exits with the command's code (CODE if none ran). */
  exit: 'exit',
} as const;

/** The sender of a relayed signal, the third word of a `sig` line. */
export const SENT_BY_KERNEL = 'k';
export const SENT_BY_PROCESS = 'u';

/** Where the launcher connects for a quit URL: what it can reach itself, plain HTTP to a numeric address. */
interface Endpoint {
  readonly address: string;
  readonly port: number;
}

function endpoint(url: URL): Endpoint | undefined {
  if (url.protocol !== 'http:') return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const address = host === 'localhost' ? '127.0.0.1' : host;
  // The URL parser writes IPv4 in dotted decimal; a name (anything with a letter but IPv6's hex) is not reachable.
  const numeric = /^\d+\.\d+\.\d+\.\d+$/.test(address) || (address.includes(':') && /^[0-9a-f:.]+$/i.test(address));
  return numeric ? { address, port: url.port === '' ? 80 : Number(url.port) } : undefined;
}

/**
 * The `target` line (without its newline) for one quit URL, or undefined when the launcher cannot reach it
 * itself (https, a host name). Every field is free of spaces: the URL parser percent-encodes them in a path
 * and a query.
 */
export function quitTargetLine(label: string, url: URL): string | undefined {
  const at = endpoint(url);
  if (at === undefined) return undefined;
  return [FROM_WRAPPER.target, label, at.address, at.port, url.host, `${url.pathname}${url.search}`].join(' ');
}

/** Whether a line of this text (and its newline) fits MAX_LINE_BYTES. */
export const fitsLine = (line: string): boolean => Buffer.byteLength(line) + 1 <= MAX_LINE_BYTES;

/** The quit policies (--quit): when the sidecars are told to quit, a word the quit plan carries to the launcher. */
export const QUIT_POLICIES = ['always', 'on-success', 'never'] as const;
export type QuitPolicy = (typeof QUIT_POLICIES)[number];
