// npm run demo: the whole lifecycle on this machine, no cluster needed. A stand-in of istio-proxy turns
// ready after a moment; dist/istio-job-run waits for it, runs a sample job, and tells it to quit.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Sidecar, type SidecarOptions } from '../test/support/sidecar.ts';
import { root } from './pinned-node.ts';

const wrapper = join(root, 'dist', 'istio-job-run');
const bold = process.stdout.isTTY ? (text: string) => `\x1b[1m${text}\x1b[0m` : (text: string) => text;
const say = (text: string): void => void process.stdout.write(`\n${bold(`demo: ${text}`)}\n`);

async function ensureBuilt(): Promise<void> {
  if (existsSync(wrapper)) return;
  say('building dist/istio-job-run first (npm run build)');
  const build = spawn(process.execPath, [join(root, 'scripts', 'build.ts')], { stdio: 'inherit' });
  const [code] = (await once(build, 'exit')) as [number];
  if (code !== 0) throw new Error('the build failed');
}

async function scene(title: string, options: SidecarOptions & { readyInMs?: number }, args: string[]): Promise<void> {
  say(title);
  const sidecar = await Sidecar.start({ ...options, readyAfter: Number.POSITIVE_INFINITY });
  const readyTimer = setTimeout(() => sidecar.setReady(), options.readyInMs ?? 0);
  const command = ['--sidecar', 'classic', '--ready-url', sidecar.readyUrl, '--quit-url', sidecar.quitUrl, ...args];
  process.stdout.write(`$ istio-job-run ${command.map((a) => (/[\s;"'$]/.test(a) ? `'${a}'` : a)).join(' ')}\n`);
  const job = spawn(wrapper, command, { stdio: 'inherit' });
  const [code] = (await once(job, 'exit')) as [number];
  clearTimeout(readyTimer);
  const ready = sidecar.readyRequests;
  say(
    `exit code ${code}; the proxy saw ${ready.length} readiness checks (${ready.filter((r) => r.status !== 200).length} not ready), ` +
      `quits answered ${sidecar.quitRequests.map((r) => r.status).join(', ') || 'none'}; proxy ${sidecar.exited ? 'exited' : 'still running'}`,
  );
  await sidecar.close();
}

await ensureBuilt();
await scene('a job that succeeds: the proxy gets ready after 1.5s, the job runs, the proxy is told to quit', { readyInMs: 1_500 }, [
  'sh',
  '-c',
  'echo "job: talking to the mesh"; sleep 0.5; echo "job: done"',
]);
await scene('a job that fails with code 3, and a proxy that answers 503 twice before accepting the quit', { quitScript: [503, 503] }, [
  'sh',
  '-c',
  'echo "job: something went wrong" >&2; exit 3',
]);
await scene('a typo in the job command: exit 127, and the proxy is still told to quit', {}, ['pyhton3', 'job.py']);
await scene('an old Istio (1.4-1.25) drains for 5s after the quit: the wrapper does not wait for that', { exit: 'drain', drainMs: 5_000 }, [
  'sh',
  '-c',
  'echo "job: done"',
]);
say('done. The executable is dist/istio-job-run; see README.md for the Kubernetes manifests.');
