// The only file that touches the process: install the signal handlers first (a TERM during start-up
// must not be lost), run main, exit with its code.

import { writeSync } from 'node:fs';
import { startChild } from './child.ts';
import { install } from './install.ts';
import { loadHttp } from './load-http.ts';
import { systemClock } from './clock.ts';
import { createLogger } from './log.ts';
import { main } from './main.ts';
import { locateSelf } from './self.ts';
import { createSignalRouter } from './signals.ts';

declare const ISTIO_JOB_RUN_VERSION: string | undefined;

const log = createLogger();
const signals = createSignalRouter(process, log, () => process.getBuiltinModule('node:tty').isatty(0));
const version = typeof ISTIO_JOB_RUN_VERSION === 'string' ? ISTIO_JOB_RUN_VERSION : 'dev';

// Through the bundle's launcher, execPath names the bundled loader: point it at what users run instead.
const self = locateSelf(process.execPath, process.argv0);
process.execPath = self.executable;

// A stray error in a callback must not kill the wrapper while the command runs: as PID 1 its exit
// would take the command down with it, and the sidecar would never be told to quit.
process.on('uncaughtException', (error) => log.error(`internal error (continuing): ${error.stack ?? error.message}`));
process.on('unhandledRejection', (error) => log.error(`internal error (continuing): ${String(error)}`));

main({
  argv: process.argv.slice(2),
  env: process.env,
  version,
  log,
  signals,
  clock: systemClock,
  writeStdout: (text) => {
    try {
      writeSync(1, text);
    } catch {
      // stdout closed (`--help | head -1`): nothing to do.
    }
  },
  loadHttp,
  startChild,
  install: (dir) => install(dir, self, version, log),
}).then(
  (code) => process.exit(code),
  (error: unknown) => {
    log.error(`internal error: ${String(error)}`);
    process.exit(125);
  },
);
