// The quit plan the wrapper hands over, whatever its size within the protocol: every target is kept (a long
// query string, a long path, seven of them), each POSTed as the wrapper parsed it, under the plan's own
// per-request timeout and with the wrapper's retry rules; and the last line names each sidecar and what it
// answered, without the query string.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { buildLauncher, launch } from './support.ts';

const launcher = buildLauncher();

let server: Server;
let base = '';
let requests: { path: string; host: string | undefined; at: number }[] = [];
/** How the stand-in answers each request: a status, after a delay. */
let answer: (request: IncomingMessage) => { status: number; delayMs?: number } = () => ({ status: 200 });
before(async () => {
  server = createServer((request, response) => {
    requests.push({ path: request.url ?? '', host: request.headers.host, at: Date.now() });
    const { status, delayMs = 0 } = answer(request);
    setTimeout(() => response.writeHead(status).end('bye'), delayMs);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

/** The fake with these plan entries dies once the command (exit 0) ended: the launcher quits by itself. */
async function lastResort(plans: readonly string[], extra: readonly string[] = []) {
  requests = [];
  const result = await launch(launcher, [...plans, ...extra, 'die-after'], ['/bin/sh', '-c', 'exit 0']).finished;
  assert.equal(result.code, 0, result.stderr);
  return { result, lines: result.stderr.split('\n').filter((line) => line.startsWith('istio-job-run:')) };
}

test('seven quit URLs with long query strings: each is POSTed, path and query as given', async () => {
  answer = () => ({ status: 200 });
  const paths = Array.from({ length: 7 }, (_, i) => `/quitquitquit?n=${i}&token=${'s'.repeat(900)}`);
  const { lines } = await lastResort(paths.map((path) => `plan=always:3000:${base}${path}`));
  assert.deepEqual(requests.map((r) => r.path).sort(), [...paths].sort());
  assert.equal(lines.length, 1, lines.join('\n'));
  assert.doesNotMatch(lines[0] ?? '', /token|sss/);
});

test('a quit path of 2000 bytes is POSTed, with the Host header the URL names', async () => {
  answer = () => ({ status: 200 });
  const path = `/${'p'.repeat(1999)}`;
  await lastResort([`plan=always:3000:${base}${path}`]);
  assert.deepEqual(
    requests.map((r) => [r.path, r.host]),
    [[path, base.slice('http://'.length)]],
  );
});

test('every attempt answered 503: the line says it gave up on that sidecar, with its last answer', async () => {
  answer = () => ({ status: 503 });
  const { lines } = await lastResort([`plan=always:300:${base}/quitquitquit?token=secret`]);
  assert.ok(requests.length >= 2, `retried: ${requests.length}`);
  assert.deepEqual(lines, [
    `istio-job-run: the wrapper died of signal 9 (Killed); the launcher sent the quits itself: gave up telling the proxy to quit (POST ${base}/quitquitquit?***: last 503, ${requests.length} attempts)`,
  ]);
});

test('acknowledged: the line names the sidecar and its answer', async () => {
  answer = () => ({ status: 200 });
  const { lines } = await lastResort([`plan=always:2000:${base}/quitquitquit`]);
  assert.deepEqual(lines, [
    `istio-job-run: the wrapper died of signal 9 (Killed); the launcher sent the quits itself: the proxy acknowledged the quit (POST ${base}/quitquitquit: 200, 1 attempt)`,
  ]);
});

test('the per-request timeout is the plan’s: a sidecar that answers after 1.3 s is acknowledged with 3 s', async () => {
  answer = () => ({ status: 200, delayMs: 1300 });
  const { lines } = await lastResort([`plan=always:5000:${base}/quitquitquit`], ['request=3000']);
  assert.equal(requests.length, 1, lines.join('\n'));
  assert.match(lines[0] ?? '', /the proxy acknowledged the quit/);
});

test('the per-request timeout is the plan’s: 100 ms gives a silent sidecar several attempts within 1.5 s', async () => {
  answer = () => ({ status: 200, delayMs: 60_000 });
  const { lines } = await lastResort([`plan=always:1500:${base}/quitquitquit`], ['request=100']);
  assert.ok(requests.length >= 4, `${requests.length} attempts: ${lines.join('\n')}`);
  assert.match(lines[0] ?? '', /gave up telling the proxy to quit \(POST [^ ]+: last no answer/);
});
