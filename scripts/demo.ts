// npm run demo: the whole lifecycle on this machine, no cluster needed. A stand-in of istio-proxy turns
// ready after a moment; dist/istio-job-run waits for it, runs a sample job, and tells it to quit.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { Sidecar, type SidecarOptions } from '../test/support/sidecar.ts';
import { root } from './root.ts';

const wrapper = join(root, 'dist', 'istio-job-run');
const bold = process.stdout.isTTY ? (text: string) => `\x1b[1m${text}\x1b[0m` : (text: string) => text;
const say = (text: string): void => void process.stdout.write(`\n${bold(`demo: ${text}`)}\n`);

/** The build first, so the demo shows this checkout: npm run build's steps, in a child of the pinned Node. */
async function build(): Promise<boolean> {
  say('building dist/istio-job-run (npm run build)');
  const child = spawn(process.execPath, [join(root, 'scripts', 'build.ts')], { stdio: 'inherit' });
  const [code] = (await once(child, 'exit')) as [number | null];
  return code === 0;
}

interface Expected {
  readonly exitCode: number;
  readonly notReadyChecks: 'some' | 'none';
  readonly quits: readonly number[];
  readonly proxy: 'exited' | 'still running';
}

/** One scene: a stand-in proxy, the wrapper in front of a job; whether the outcome is the one the title says. */
async function scene(
  title: string,
  options: SidecarOptions & { readyInMs?: number },
  args: string[],
  expected: Expected,
): Promise<boolean> {
  say(title);
  const sidecar = await Sidecar.start({ ...options, readyAfter: Number.POSITIVE_INFINITY });
  const readyTimer = setTimeout(() => sidecar.setReady(), options.readyInMs ?? 0);
  const command = ['--sidecar', 'classic', '--ready-url', sidecar.readyUrl, '--quit-url', sidecar.quitUrl, ...args];
  process.stdout.write(`$ istio-job-run ${command.map((a) => (/[\s;"'$]/.test(a) ? `'${a}'` : a)).join(' ')}\n`);
  const job = spawn(wrapper, command, { stdio: 'inherit' });
  const [code] = (await once(job, 'exit')) as [number];
  clearTimeout(readyTimer);
  const ready = sidecar.readyRequests;
  const notReady = ready.filter((r) => r.status !== 200).length;
  const quits = sidecar.quitRequests.map((r) => r.status);
  const proxy = sidecar.exited ? 'exited' : 'still running';
  await sidecar.close();
  const as =
    code === expected.exitCode &&
    (expected.notReadyChecks === 'some') === notReady > 0 &&
    quits.join() === expected.quits.join() &&
    proxy === expected.proxy;
  say(
    `exit code ${code}; the proxy saw ${ready.length} readiness checks (${notReady} not ready), ` +
      `quits answered ${quits.join(', ') || 'none'}; proxy ${proxy}${as ? '' : ' (NOT as expected)'}`,
  );
  return as;
}

if (!(await build())) {
  process.stderr.write('demo: the build failed (its last line above says why)\n');
  process.exit(1);
}
const results = [
  await scene(
    'a job that succeeds: the proxy gets ready after 1.5s, the job runs, the proxy is told to quit',
    { readyInMs: 1_500 },
    ['sh', '-c', 'echo "job: talking to the mesh"; sleep 0.5; echo "job: done"'],
    { exitCode: 0, notReadyChecks: 'some', quits: [200], proxy: 'exited' },
  ),
  await scene(
    'a job that fails with code 3, and a proxy that answers 503 twice before accepting the quit',
    { quitScript: [503, 503] },
    ['sh', '-c', 'echo "job: something went wrong" >&2; exit 3'],
    { exitCode: 3, notReadyChecks: 'none', quits: [503, 503, 200], proxy: 'exited' },
  ),
  await scene('a typo in the job command: exit 127, and the proxy is still told to quit', {}, ['pyhton3', 'job.py'], {
    exitCode: 127,
    notReadyChecks: 'none',
    quits: [200],
    proxy: 'exited',
  }),
  await scene(
    'an old Istio (1.4-1.25) drains for 5s after the quit: the wrapper does not wait for that',
    { exit: 'drain', drainMs: 5_000 },
    ['sh', '-c', 'echo "job: done"'],
    { exitCode: 0, notReadyChecks: 'none', quits: [200], proxy: 'still running' },
  ),
];
const shown = [
  'the job started only once the proxy was ready, and the proxy was told to quit after it',
  "the job's exit code (3) came out, and the quit was retried through two 503s",
  'a command that is not there exits 127, and the proxy is still told to quit',
  'the wrapper exits as soon as the quit is acknowledged, not after the proxy has drained',
];
say(`what it showed (${results.filter(Boolean).length} of ${results.length} as expected):`);
for (const [i, line] of shown.entries()) process.stdout.write(`  ${results[i] ? 'ok  ' : 'FAIL'} ${line}\n`);
process.stdout.write('The executable is dist/istio-job-run (the portable bundle, dist/bundle/); README.md shows the Job manifests.\n');
if (!results.every(Boolean)) process.exitCode = 1;
