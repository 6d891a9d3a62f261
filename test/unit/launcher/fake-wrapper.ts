// A stand-in for the wrapper, started by a test build of src/launcher/launcher.c in its place: it speaks the protocol
// through src/launcher/link.ts, as the wrapper does, and acts as its first argument says. The arguments after
// `--` are the command.
//   run                  run the command, forward each signal relayed to decide, say the exit code, exit
//   silent               never say hello: a wrapper stuck at start-up
//   version              write "fake 1.0" to stdout (as --version does), say exit code 0, exit
//   tool                 say `tool` (a manifest tool), then stay busy synchronously for good, as a long parse
//   die-while-running    run the command, then die of SIGKILL as soon as it runs
//   die-after            run the command, then die of SIGKILL once it has ended, before saying a code
//   hang-after           run the command, then never say a code: a wrapper that stopped answering
//   plan=POLICY:MS:URL   hand this quit plan to the launcher first (with any of the above); repeated, the URLs
//                        of all go in one plan, the policy and timeout of the first
//   request=MS           the plan's per-request timeout (1000 without it)
//   long-line            write one line of 4095 bytes and "exit 0" to the channel first, in one write
//   flood                write 4 MiB of log lines first (with any of the above)
//   json                 ask for the launcher's lines as JSON first (with any of the above)
//   hello-on-usr2        say hello, and then run the command, only once a SIGUSR2 is sent to this process
//   count=N              count the signals heard of (relayed or passed on) instead of saying or forwarding them;
//                        say "fake: counted N" at the Nth
//   quietly              say no signal (with run): a flood is not slowed down by stderr
//   stall=PATH           once the command runs, say "fake: stalling" and block synchronously (no line read or
//                        written) until PATH exists, as a wrapper busy or starved of CPU (with run)
// It writes "fake: pid P", "fake: signal N k|u" (relayed for it to decide), "fake: passed N" (passed on to the
// command by the launcher) and "fake: outcome ..." to stderr.

import { existsSync, writeSync } from 'node:fs';
import { createLogger, writeStderr } from '../../../src/log.ts';
import { connectLauncher } from '../../../src/launcher/link.ts';
import type { QuitPolicy } from '../../../src/config/options.ts';

const separator = process.argv.indexOf('--');
const modes = process.argv.slice(2, separator);
const command = process.argv.slice(separator + 1);
const say = (line: string): void => writeStderr(`fake: ${line}\n`);

if (modes.includes('long-line')) writeSync(Number(process.env['ISTIO_JOB_RUN_LAUNCHER']), `${'x'.repeat(4095)}exit 0\n`);
const link = connectLauncher(process.env, createLogger());
if (link === undefined) throw new Error('not started by the launcher');
say(`pid ${process.pid}`);
const plans = modes.flatMap((mode) => {
  const plan = /^plan=([a-z-]+):(\d+):(.+)$/.exec(mode);
  return plan === null ? [] : [{ policy: plan[1] as QuitPolicy, timeoutMs: Number(plan[2]), url: new URL(plan[3] ?? '') }];
});
const requestTimeoutMs = Number(/^request=(\d+)$/.exec(modes.find((mode) => mode.startsWith('request=')) ?? '')?.[1] ?? 1000);
if (plans[0] !== undefined) {
  const { policy, timeoutMs } = plans[0];
  const plan = {
    policy,
    timeoutMs,
    requestTimeoutMs,
    targets: plans.map(({ url }) => ({ url, label: 'proxy' })),
  };
  link.planQuit(plan);
}
if (modes.includes('json')) link.logFormat('json');
if (modes.includes('flood')) {
  const line = `fake: ${'x'.repeat(1023)}\n`;
  for (let i = 0; i < 4096; i++) writeStderr(line);
}
const nap = new Int32Array(new SharedArrayBuffer(4));
// Keeps the process alive whatever it waits for.
const alive = setInterval(() => undefined, 60_000);

if (modes.includes('version')) {
  writeSync(1, 'fake 1.0\n');
  link.declareExit(0);
  process.exit(0);
} else if (modes.includes('tool')) {
  link.tool();
  say('busy');
  Atomics.wait(nap, 0, 0);
} else if (modes.includes('silent')) {
  say('not saying hello');
} else {
  let child: ReturnType<typeof link.run> | undefined;
  const counting = Number(/^count=(\d+)$/.exec(modes.find((mode) => mode.startsWith('count=')) ?? '')?.[1] ?? 0);
  let counted = 0;
  const count = (): void => {
    if (++counted === counting) say(`counted ${counted}`);
  };
  const quietly = modes.includes('quietly');
  const started = Promise.withResolvers<void>();
  const listen = (): void => {
    link.listen({
      receive(signal, fromTerminal) {
        if (counting !== 0) return count();
        if (!quietly) say(`signal ${signal} ${fromTerminal ? 'k' : 'u'}`);
        child?.kill(signal);
      },
      passedOn(signal) {
        if (counting !== 0) return count();
        if (!quietly) say(`passed ${signal}`);
      },
    });
    child = link.run(command);
    started.resolve();
  };
  if (modes.includes('hello-on-usr2')) process.once('SIGUSR2', listen);
  else listen();
  await started.promise;
  if (child === undefined) throw new Error('the command was not started');
  const stall = modes.find((mode) => mode.startsWith('stall='))?.slice('stall='.length);
  if (stall !== undefined) {
    const check = setInterval(() => {
      if (child?.pid === undefined) return;
      clearInterval(check);
      say('stalling');
      const launcher = process.ppid;
      while (!existsSync(stall) && process.ppid === launcher) Atomics.wait(nap, 0, 0, 5);
    }, 1);
  }
  if (modes.includes('die-while-running')) {
    const check = setInterval(() => {
      if (child?.pid !== undefined) process.kill(process.pid, 'SIGKILL');
    }, 5);
    check.unref();
  }
  const outcome = await child.outcome;
  say(`outcome ${JSON.stringify(outcome)}`);
  if (modes.includes('die-after')) process.kill(process.pid, 'SIGKILL');
  if (modes.includes('hang-after')) await new Promise(() => undefined);
  const code = outcome.kind === 'exited' ? outcome.code : outcome.kind === 'signaled' ? 128 + outcome.signal : 127;
  clearInterval(alive);
  link.declareExit(code);
  process.exit(code);
}
