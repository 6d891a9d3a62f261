// The only file that touches the process: the signal handlers first (a TERM during start-up must not be
// lost), then the launcher's relay, then main, then the exit with main's code. The manifest tools (--check,
// --inject, the kubectl plugin) take no handler: their work is synchronous, so TERM, INT and HUP keep their
// default action and end them at once; the launcher is told so (`tool`) and does the same.

import { writeSync } from 'node:fs';
import type { Child } from './command/child.ts';
import { connectLauncher, startedByLauncher } from './launcher/link.ts';
import { systemClock } from './clock.ts';
import { EXIT_WRAPPER_FAILED } from './command/exit-code.ts';
import { createLogger } from './log.ts';
import { main } from './main.ts';
import { ENDS_TOOL, invokedAs, isManifestInvocation } from './manifest/cli/select.ts';
import { locateSelf } from './bundle/self.ts';
import { createSignalRouter, FORWARDED, IGNORED_BY_NODE, unusedSignals } from './command/signals.ts';

declare const ISTIO_JOB_RUN_VERSION: string | undefined;

const log = createLogger();
// Under the launcher the signals before and after the command come relayed, a terminal's keys marked as such (the
// launcher passes a running command its own). One sent to this process itself (a `kill -1` of the job's, a key
// typed before the command took the terminal) is only noted: the launcher got it too, or the kernel spared its
// sender.
const launched = startedByLauncher(process.env);
// The name users ran: `kubectl-istio_job_run` (a link) is the kubectl plugin.
const name = invokedAs(launched, process.argv0);
const tool = isManifestInvocation(process.argv.slice(2), name);
// Any other signal that would end this process for nothing (one sent to a process group it shares) gets a handler:
// the launcher has the real-time ones, which Node cannot name, ignored for it from the start.
for (const signal of unusedSignals([...(tool ? ENDS_TOOL : FORWARDED), ...IGNORED_BY_NODE])) {
  process.on(signal, () => log.debug(`${signal} sent to the wrapper itself: ignored`));
}
const direct = tool
  ? { on: () => undefined }
  : launched
    ? { on: (signal: NodeJS.Signals) => process.on(signal, () => log.debug(`${signal} sent to the wrapper itself: not forwarded`)) }
    : process;
const signals = createSignalRouter(direct, log, () => !launched && process.getBuiltinModule('node:tty').isatty(0));
const launcher = connectLauncher(process.env, log);
if (tool) launcher?.tool();
else launcher?.listen(signals);
const version = typeof ISTIO_JOB_RUN_VERSION === 'string' ? ISTIO_JOB_RUN_VERSION : 'dev';

// Through the bundle's launcher, execPath names the bundled loader: point it at what users run instead.
const self = locateSelf(process.execPath, process.argv0);
process.execPath = self.executable;

// A stray error in a callback must not kill the wrapper while the command runs: its exit would leave the
// sidecar running.
process.on('uncaughtException', (error) => log.error(`internal error (continuing): ${error.stack ?? error.message}`));
process.on('unhandledRejection', (error) => log.error(`internal error (continuing): ${String(error)}`));

/**
 * The plain executable runs the command itself, with execa, loaded only then: execa opens streams on the
 * standard descriptors when it loads (which makes a pipe non-blocking for the job too).
 */
function startPlainChild(command: readonly string[]): Child {
  let child: Child | undefined;
  const started = import('./command/child.ts').then((module) => (child = module.startChild(command)));
  return {
    get pid() {
      return child?.pid;
    },
    outcome: started.then((running) => running.outcome),
    kill: (signal) => child?.kill(signal) ?? false,
  };
}

function exit(code: number): never {
  launcher?.declareExit(code);
  process.exit(code);
}

main({
  argv: process.argv.slice(2),
  env: process.env,
  version,
  // The launcher's own lines follow the same format.
  log: {
    ...log,
    configure(level, format) {
      log.configure(level, format);
      launcher?.logFormat(format);
    },
  },
  signals,
  clock: systemClock,
  writeStdout: (text) => {
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length; ) at += writeSync(1, bytes, at);
  },
  // Classic mode and --install only: their modules' top levels run when first needed.
  loadHttp: async (settings) => (await import('./bundle/load-http.ts')).loadHttp(settings),
  planQuit: (plan) => launcher?.planQuit(plan),
  startChild: (command) => (launcher === undefined ? startPlainChild(command) : launcher.run(command)),
  install: async (dir) => (await import('./bundle/install.ts')).install(dir, self, version, log),
  manifest: {
    invokedAs: name,
    run: async (argv) => (await import('./manifest/cli/load.ts')).runManifest(argv, name, version),
  },
}).then(exit, (error: unknown) => {
  log.error(`internal error: ${String(error)}`);
  exit(EXIT_WRAPPER_FAILED);
});
