// The wrapper dying ends nothing while the command runs; once the command is reaped its status is the exit
// code; and the sidecars of the wrapper's quit plan are told to quit by the launcher itself, as the policy says.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { buildLauncher, fakePid, launch, WHILE_LAUNCHER_LIVES } from './support.ts';

const launcher = buildLauncher();

let server: Server;
let quits: string[] = [];
let status = 200;
let url = '';
before(async () => {
  server = createServer((request, response) => {
    quits.push(`${request.method} ${request.url}`);
    response.writeHead(status).end('bye');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/quitquitquit`;
});
after(() => server.close());

/** The fake in `modes` with a quit plan to the stand-in, the command exiting `code`; the sidecar answers `answer`. */
async function withPlan(policy: string, timeoutMs: number, modes: readonly string[], code: number, answer = 200) {
  quits = [];
  status = answer;
  const result = await launch(launcher, [`plan=${policy}:${timeoutMs}:${url}`, ...modes], ['/bin/sh', '-c', `exit ${code}`]).finished;
  assert.equal(result.code, code, result.stderr);
  return result;
}

describe('the wrapper dies', () => {
  test('while the command runs: the launcher waits for it, passes a TERM on, exits with its code, in one line', async () => {
    const script = `trap 'echo got TERM; exit 7' TERM; echo ready; ${WHILE_LAUNCHER_LIVES}`;
    const running = launch(launcher, ['die-while-running'], ['/bin/sh', '-c', script]);
    await running.line(/^ready$/, 'stdout');
    await running.line(/the wrapper ended while the command runs/, 'stderr');
    process.kill(running.pid, 'SIGTERM');
    const result = await running.finished;
    assert.equal(result.code, 7, result.stderr);
    assert.equal(result.stdout, 'ready\ngot TERM\n');
    assert.match(
      result.stderr,
      /istio-job-run: the wrapper died of signal 9 \(Killed\) before it knew the sidecars; none was told to quit\n/,
    );
  });

  test('after the command ended, before saying its code: the command status is the exit code', async () => {
    const result = await launch(launcher, ['plan=always:2000:http://127.0.0.1:9/none', 'die-after'], ['/bin/sh', '-c', 'exit 4']).finished;
    assert.equal(result.code, 4, result.stderr);
  });

  test('with a quit plan: the launcher POSTs the quit itself, once, and says so in one line', async () => {
    const result = await withPlan('always', 2000, ['die-after'], 0);
    assert.deepEqual(quits, ['POST /quitquitquit']);
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('istio-job-run:'));
    assert.deepEqual(lines, [
      `istio-job-run: the wrapper died of signal 9 (Killed); the launcher sent the quits itself: the proxy acknowledged the quit (POST ${url}: 200, 1 attempt)`,
    ]);
  });

  test('a quit answered 503 is retried until acknowledged, within the plan’s timeout', async () => {
    server.once('request', () => {
      status = 200;
    });
    const result = await withPlan('always', 3000, ['die-after'], 0, 503);
    assert.deepEqual(quits, ['POST /quitquitquit', 'POST /quitquitquit']);
    assert.match(result.stderr, /acknowledged the quit \(POST [^ ]+: 200, 2 attempts\)\n/);
  });

  test('policy on-success and a failed command: no quit, and the line says why', async () => {
    const result = await withPlan('on-success', 2000, ['die-after'], 3);
    assert.deepEqual(quits, []);
    assert.match(result.stderr, /the sidecar is left running \(quit on-success, exit 3\)/);
  });

  test('a sidecar that never answers: the launcher gives up at the plan’s timeout', async () => {
    const silent = createServer(() => undefined);
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const port = (silent.address() as AddressInfo).port;
    const started = Date.now();
    const result = await launch(
      launcher,
      [`plan=always:600:http://127.0.0.1:${port}/quitquitquit`, 'die-after'],
      ['/bin/sh', '-c', 'exit 0'],
    ).finished;
    silent.closeAllConnections();
    silent.close();
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /gave up telling the proxy to quit \(POST [^ ]+quitquitquit: last no answer/);
    assert.ok(Date.now() - started < 5_000, 'bounded by the plan');
  });

  test('a wrapper that stops answering after the command ended: stopped, and the launcher quits the sidecar', async () => {
    const result = await withPlan('always', 200, ['hang-after'], 5);
    assert.deepEqual(quits, ['POST /quitquitquit']);
    assert.match(result.stderr, /the wrapper did not finish after the command ended: stopping it\n/);
    assert.match(result.stderr, /the launcher sent the quits itself: the proxy acknowledged the quit/);
  });

  test('a wrapper killed from outside, the command running on: the pid in the line is the command', async () => {
    const running = launch(launcher, ['run'], ['/bin/sh', '-c', 'echo ready; read line; exit 6']);
    const pid = await fakePid(running);
    await running.line(/^ready$/, 'stdout');
    process.kill(pid, 'SIGKILL');
    await running.line(/waiting for the command \(pid \d+\) alone/, 'stderr');
    running.process.stdin?.end('\n');
    assert.equal((await running.finished).code, 6);
  });
});
