import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { plainClient, plainConnect } from '../../../src/http/plain.ts';
import { boundedLookup } from '../../../src/http/lookup.ts';

const lookup = boundedLookup(async () => [], 1_000);

/** A raw TCP listener on loopback that hands every connection to `handle`; its URL and its sockets. */
async function raw(handle: (socket: Socket) => void): Promise<{ url: string; server: Server; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.on('error', () => undefined);
    // Read what comes, so a client's close ends the connection here too.
    socket.resume();
    handle(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, connections: () => connections };
}

/** Answers each request (its head read) with `answer(n)`, n counting from 1 over all connections. */
async function answering(answer: (n: number, head: string) => string) {
  let n = 0;
  return raw((socket) => {
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      while (head.includes('\r\n\r\n')) {
        const end = head.indexOf('\r\n\r\n') + 4;
        n += 1;
        socket.write(answer(n, head.slice(0, end)));
        head = head.slice(end);
      }
    });
  });
}

describe('plain HTTP client', () => {
  test('GETs share one kept connection and read status and body', async () => {
    const heads: string[] = [];
    const server = createHttpServer((request, response) => {
      heads.push(`${request.method} ${request.url} ${request.headers.connection}`);
      response.statusCode = heads.length < 3 ? 503 : 200;
      response.end(heads.length < 3 ? 'not yet' : 'LIVE');
    });
    let connections = 0;
    server.on('connection', () => (connections += 1));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = plainClient(lookup);
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz/ready?x=1`);
    try {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await client.attempt('GET', url, 1_000));
      assert.deepEqual(answers, [
        { kind: 'response', status: 503, body: 'not yet' },
        { kind: 'response', status: 503, body: 'not yet' },
        { kind: 'response', status: 200, body: 'LIVE' },
      ]);
      assert.equal(connections, 1);
      assert.deepEqual(heads, Array(3).fill('GET /healthz/ready?x=1 keep-alive'));
    } finally {
      client.close();
      server.close();
    }
  });

  test('a kept connection the sidecar drops as the next request comes is replaced, not reported as a reset', async () => {
    let connection = 0;
    const sidecar = await raw((socket) => {
      connection += 1;
      const mine = connection;
      let requests = 0;
      socket.on('data', () => {
        requests += 1;
        // The first connection answers once, then closes as the second request arrives (an idle timeout).
        if (mine === 1 && requests === 2) socket.destroy();
        else socket.write(`HTTP/1.1 503 x\r\ncontent-length: 1\r\n\r\n${mine}`);
      });
    });
    const client = plainClient(lookup);
    try {
      const url = new URL(`${sidecar.url}/ready`);
      assert.deepEqual(await client.attempt('GET', url, 1_000), { kind: 'response', status: 503, body: '1' });
      assert.deepEqual(await client.attempt('GET', url, 1_000), { kind: 'response', status: 503, body: '2' });
      assert.equal(sidecar.connections(), 2);
    } finally {
      client.close();
      sidecar.server.close();
    }
  });

  test('POST: content-length 0, connection close, a connection of its own', async () => {
    let seen = '';
    const sidecar = await answering((_n, head) => {
      seen = head;
      return 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nOK';
    });
    const client = plainClient(lookup);
    try {
      const url = new URL(`${sidecar.url}/quitquitquit`);
      assert.deepEqual(await client.attempt('POST', url, 1_000), { kind: 'response', status: 200, body: 'OK' });
      assert.deepEqual(await client.attempt('POST', url, 1_000), { kind: 'response', status: 200, body: 'OK' });
      assert.match(seen, /^POST \/quitquitquit HTTP\/1\.1\r\n/);
      assert.match(seen, /\r\ncontent-length: 0\r\n/);
      assert.match(seen, /\r\nconnection: close\r\n/);
      assert.equal(sidecar.connections(), 2);
    } finally {
      client.close();
      sidecar.server.close();
    }
  });

  const answers: [name: string, wire: string, expected: unknown][] = [
    [
      'chunked body',
      'HTTP/1.1 503 x\r\ntransfer-encoding: chunked\r\n\r\n4\r\nnot \r\n3\r\nyet\r\n0\r\n\r\n',
      { status: 503, body: 'not yet' },
    ],
    ['informational head first', 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n', { status: 204, body: '' }],
    ['body until close', 'HTTP/1.0 200 OK\r\n\r\nLIVE', { status: 200, body: 'LIVE' }],
    ['UTF-8 body', 'HTTP/1.1 503 x\r\ncontent-length: 6\r\n\r\nnö ö', { status: 503, body: 'nö ö' }],
  ];
  for (const [name, wire, expected] of answers) {
    test(`reads an answer: ${name}`, async () => {
      const sidecar = await answering(() => wire);
      // Each connection gets the answer and is closed: "until close" needs it, the rest ignore it.
      sidecar.server.on('connection', (socket: Socket) => socket.on('data', () => setImmediate(() => socket.end())));
      const client = plainClient(lookup);
      try {
        const got = await client.attempt('GET', new URL(`${sidecar.url}/r`), 1_000);
        assert.deepEqual(got, { kind: 'response', ...(expected as object) });
      } finally {
        client.close();
        sidecar.server.close();
      }
    });
  }

  test('a long body is cut at 512 characters without waiting for its end', async () => {
    const sidecar = await answering(() => `HTTP/1.1 503 x\r\ncontent-length: 100000\r\n\r\n${'a'.repeat(600)}`);
    const client = plainClient(lookup);
    try {
      const got = await client.attempt('GET', new URL(`${sidecar.url}/r`), 1_000);
      assert.deepEqual(got, { kind: 'response', status: 503, body: 'a'.repeat(512) });
    } finally {
      client.close();
      sidecar.server.close();
    }
  });

  const failures: [name: string, behave: (socket: Socket) => void, expected: unknown][] = [
    ['not HTTP', (socket) => socket.end('SSH-2.0-OpenSSH\r\n\r\n'), { kind: 'failed', code: 'EBADRESPONSE' }],
    ['closed before answering', (socket) => socket.on('data', () => socket.end()), { kind: 'reset' }],
    ['reset before answering', (socket) => socket.on('data', () => socket.resetAndDestroy()), { kind: 'reset' }],
    [
      'closed inside a body of known length',
      (socket) => socket.on('data', () => socket.end('HTTP/1.1 503 x\r\ncontent-length: 10\r\n\r\nabc')),
      { kind: 'reset' },
    ],
    [
      'two lengths',
      (socket) => socket.end('HTTP/1.1 200 x\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\nab'),
      { kind: 'failed', code: 'EBADRESPONSE' },
    ],
    [
      'a head that never ends',
      (socket) => socket.write(`HTTP/1.1 200 x\r\nx: ${'y'.repeat(20_000)}`),
      { kind: 'failed', code: 'EHEADTOOLARGE' },
    ],
    ['silence', () => undefined, { kind: 'timeout' }],
  ];
  for (const [name, behave, expected] of failures) {
    test(`classifies a failure: ${name}`, async () => {
      const sidecar = await raw(behave);
      const client = plainClient(lookup);
      try {
        assert.deepEqual(await client.attempt('GET', new URL(`${sidecar.url}/r`), 300), expected);
      } finally {
        client.close();
        sidecar.server.close();
      }
    });
  }

  test('a head read and a body still coming at the deadline: the status stands, with the body so far', async () => {
    const sidecar = await raw((socket) => socket.on('data', () => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc')));
    const client = plainClient(lookup);
    try {
      assert.deepEqual(await client.attempt('POST', new URL(`${sidecar.url}/quitquitquit`), 300), {
        kind: 'response',
        status: 200,
        body: 'abc',
      });
    } finally {
      client.close();
      sidecar.server.close();
    }
  });

  test('refused, and cancelled while waiting', async () => {
    const sidecar = await raw(() => undefined);
    const url = new URL(`${sidecar.url}/r`);
    const client = plainClient(lookup);
    try {
      const cancel = new AbortController();
      const pending = client.attempt('GET', url, 5_000, cancel.signal);
      setTimeout(() => cancel.abort(), 20);
      assert.deepEqual(await pending, { kind: 'aborted' });
      assert.deepEqual(await client.attempt('GET', url, 1_000, AbortSignal.abort()), { kind: 'aborted' });
      assert.equal(await plainConnect(url, 1_000, lookup), true);
      sidecar.server.close();
      await once(sidecar.server, 'close');
      assert.deepEqual(await client.attempt('GET', url, 1_000), { kind: 'refused' });
      assert.equal(await plainConnect(url, 1_000, lookup), false);
    } finally {
      client.close();
    }
  });
});
