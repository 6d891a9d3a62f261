// The run the app's code cache is made after (scripts/code-cache.ts keeps what one run compiled): a classic job
// as the bundle runs it, `-- true` behind a stand-in of the launcher on the channel the real one gives
// (src/launcher/protocol.ts), against a stand-in proxy that is not ready at the first poll, then is, and is
// told to quit. Every function of that path, from the first option parsed to the exit line, is then compiled
// from the cache at start-up instead of from source; what `--sidecar none` runs is a part of it.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { CHANNEL_ENV, FROM_WRAPPER, TO_WRAPPER } from '../src/launcher/protocol.ts';
import { StepError } from './tools.ts';

/** A run this long is a hang: the build fails instead of waiting. */
const TIMEOUT_MS = 60_000;
/** The channel's descriptor in the run: the first after stdio. */
const CHANNEL_FD = 3;

/** Runs `NODE ...nodeArgs <classic job>` in DIR; fails unless it polled twice, quit once and exited 0. */
export async function runForCache(node: string, nodeArgs: readonly string[], dir: string): Promise<void> {
  let polls = 0;
  let quits = 0;
  const proxy = createServer((request, response) => {
    if (request.method === 'POST' && request.url === '/quitquitquit') quits++;
    else if (request.url === '/healthz/ready') polls++;
    response.writeHead(request.url === '/healthz/ready' && polls === 1 ? 503 : 200).end();
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  const base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  try {
    const job = ['--sidecar', 'classic', '--ready-url', `${base}/healthz/ready`, '--quit-url', `${base}/quitquitquit`, '--', 'true'];
    const run = spawn(node, [...nodeArgs, ...job], {
      cwd: dir,
      env: { [CHANNEL_ENV]: String(CHANNEL_FD) },
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      timeout: TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    let stderr = '';
    run.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    standInLauncher(run.stdio[CHANNEL_FD] as Socket);
    const [code, signal] = (await once(run, 'exit')) as [number | null, NodeJS.Signals | null];
    if (code !== 0 || polls !== 2 || quits !== 1)
      throw new StepError(`the run for the app's code cache: exit ${code ?? signal}, ${polls} polls, ${quits} quits: ${stderr.trim()}`);
  } finally {
    proxy.close();
  }
}

/** What the launcher answers, for a command that starts and exits 0 at once. */
function standInLauncher(channel: Socket): void {
  let buffered = '';
  channel.setEncoding('latin1');
  channel.on('error', () => undefined);
  channel.on('data', (chunk: string) => {
    const lines = (buffered + chunk).split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines)
      if (line.split(' ')[0] === FROM_WRAPPER.run) channel.write(`${TO_WRAPPER.started} ${process.pid}\n${TO_WRAPPER.exited} 0\n`);
  });
}
