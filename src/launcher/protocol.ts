// The protocol between the portable bundle's launcher (src/launcher/launcher.c) and the wrapper (src/launcher/link.ts):
// text lines, a verb and its numbers, over the channel the launcher names in CHANNEL_ENV. This module is its one
// definition; scripts/launcher-header.ts writes it, with the other names the launcher shares with the
// wrapper, as the C header launcher.c is compiled with.

/** Set by the launcher for the wrapper only: "<fd>", a socket for both directions. The command never sees it. */
export const CHANNEL_ENV = 'ISTIO_JOB_RUN_LAUNCHER';

/** Lines the launcher writes to the wrapper. */
export const TO_WRAPPER = {
  /** `sig N k|u`: signal N reached the launcher, sent by the kernel (k: a terminal's key, say) or by a process (u). */
  signal: 'sig',
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
  /** `kill N`: send signal N to the command. */
  kill: 'kill',
  /** `log FORMAT`: the format of the launcher's own lines from now on (LOG_FORMATS). */
  log: 'log',
  /**
   * `quit POLICY TIMEOUT_MS URL...`: the sidecars to tell to quit, should the wrapper end before it has, and
   * when (QUIT_POLICIES; never comes with no URL).
   */
  quit: 'quit',
  /** `exit CODE`: the wrapper is done; the launcher stops it and exits with the command's code (CODE if none ran). */
  exit: 'exit',
} as const;

/** The sender of a relayed signal, the third word of a `sig` line. */
export const SENT_BY_KERNEL = 'k';
export const SENT_BY_PROCESS = 'u';
