// A plain-HTTP request over node:net for the wrapper's few, tiny exchanges with a sidecar on loopback: a GET
// or an empty POST, the status read from the first line and at most BODY_LIMIT characters of the body. A GET
// keeps its connection for the next one; a POST has one of its own (`Connection: close`). It spares http: URLs
// the HTTP client (undici: its load, its WebAssembly parser and that parser's recompilation on V8's worker thread
// cost a job more CPU than Node's own start-up; docs/PERFORMANCE.md); https: URLs still go to undici
// (src/bundle/load-http.ts).

import { type Socket, connect as tcpConnect } from 'node:net';
import type { Attempt } from './attempt.ts';
import { monotonicMs } from '../clock.ts';
import type { LookupFunction } from './lookup.ts';

/** How much of a body an attempt keeps (the log shows 80 characters of it). */
export const BODY_LIMIT = 512;
/** A response head larger than this is not a sidecar's answer. */
const HEAD_LIMIT = 16 * 1024;

export interface PlainClient {
  /** One request; never throws: every way it can end is an Attempt. */
  attempt(method: 'GET' | 'POST', url: URL, timeoutMs: number, cancel?: AbortSignal): Promise<Attempt>;
  /** Closes the connection kept for the next GET. */
  close(): void;
}

/**
 * GETs keep their connection for the next one (a readiness poll is then a write and a read, not a connect and
 * a close); a POST (a quit: the sidecar is about to go) gets a connection of its own and closes it.
 */
export function plainClient(lookup: LookupFunction): PlainClient {
  let idle: { readonly host: string; readonly socket: Socket } | undefined;
  const take = (host: string): Socket | undefined => {
    const kept = idle;
    idle = undefined;
    if (kept !== undefined && kept.host === host && !kept.socket.destroyed) return kept.socket.ref();
    kept?.socket.destroy();
    return undefined;
  };
  const keep = (host: string, socket: Socket): void => {
    idle?.socket.destroy();
    idle = { host, socket };
    const drop = (): void => {
      socket.destroy();
      if (idle?.socket === socket) idle = undefined;
    };
    // Closed while idle, or an answer nobody asked for: the connection is not fit for the next request.
    route(socket, { data: drop, end: drop, error: drop });
    socket.unref();
  };

  return {
    async attempt(method, url, timeoutMs, cancel) {
      const deadline = monotonicMs() + timeoutMs;
      const reused = method === 'GET' ? take(url.host) : undefined;
      if (reused !== undefined) {
        const first = await exchange({ method, url, deadline, cancel, socket: reused, keep });
        // The sidecar closed the kept connection before it read this request: ask again on a new one.
        if (!first.stale) return first.attempt;
      }
      const socket = tcpConnect({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 80), lookup: lookup as never });
      return (await exchange({ method, url, deadline, cancel, socket, keep })).attempt;
    },
    close() {
      idle?.socket.destroy();
      idle = undefined;
    },
  };
}

/** Where a socket's events go: the exchange in progress, or, while it is kept, what drops it. */
interface Events {
  data(chunk: Buffer): void;
  end(): void;
  error(error: NodeJS.ErrnoException): void;
}
const routes = new WeakMap<Socket, { current: Events }>();
/** Sends the socket's events to `events` from now on; its listeners are added once, not per request. */
function route(socket: Socket, events: Events): void {
  const known = routes.get(socket);
  if (known !== undefined) {
    known.current = events;
    return;
  }
  const box = { current: events };
  routes.set(socket, box);
  socket
    .on('data', (chunk: Buffer) => box.current.data(chunk))
    .on('end', () => box.current.end())
    .on('close', () => box.current.end())
    .on('error', (error: NodeJS.ErrnoException) => box.current.error(error));
}

/** The request's text, made once per method and URL. */
const requests = new Map<string, string>();
function requestText(method: 'GET' | 'POST', url: URL): string {
  const key = `${method} ${url.href}`;
  let text = requests.get(key);
  if (text === undefined) {
    const connection = method === 'GET' ? 'keep-alive' : 'close';
    const length = method === 'POST' ? 'content-length: 0\r\n' : '';
    text = `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\nuser-agent: istio-job-run\r\n${length}connection: ${connection}\r\n\r\n`;
    requests.set(key, text);
  }
  return text;
}

interface Exchange {
  readonly method: 'GET' | 'POST';
  readonly url: URL;
  readonly deadline: number;
  readonly cancel: AbortSignal | undefined;
  /** Connecting (a new one) or connected (kept from the last GET). */
  readonly socket: Socket;
  readonly keep: (host: string, socket: Socket) => void;
}

/** One request and its answer on a socket; stale: a kept connection ended before any byte of an answer. */
function exchange({ method, url, deadline, cancel, socket, keep }: Exchange): Promise<{ attempt: Attempt; stale: boolean }> {
  const reused = !socket.connecting;
  return new Promise((resolve) => {
    if (cancel?.aborted === true) {
      socket.destroy();
      return resolve({ attempt: { kind: 'aborted' }, stale: false });
    }
    const reader = responseReader();
    let answered = false;
    let settled = false;
    const finish = (attempt: Attempt): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      cancel?.removeEventListener('abort', onCancel);
      socket.off('connect', send);
      const stale = reused && !answered && (attempt.kind === 'reset' || attempt.kind === 'failed');
      if (method === 'GET' && reader.reusable()) keep(url.host, socket);
      else socket.destroy();
      resolve({ attempt, stale });
    };
    const onCancel = (): void => finish({ kind: 'aborted' });
    const timer = setTimeout(() => finish(reader.partial() ?? { kind: 'timeout' }), Math.max(1, Math.ceil(deadline - monotonicMs())));
    cancel?.addEventListener('abort', onCancel, { once: true });

    const send = (): void => void socket.write(requestText(method, url));
    route(socket, {
      data(chunk) {
        answered = true;
        const attempt = reader.push(chunk);
        if (attempt !== undefined) finish(attempt);
      },
      end: () => finish(reader.end()),
      error: (error) => finish(errorAttempt(error.code)),
    });
    if (reused) send();
    else socket.once('connect', send);
  });
}

/** Whether the URL's host and port accept a TCP connection within timeoutMs (closed at once); never throws. */
export function plainConnect(url: URL, timeoutMs: number, lookup: LookupFunction): Promise<boolean> {
  return new Promise((resolve) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const socket = tcpConnect({ host, port, lookup: lookup as never, timeout: Math.max(1, timeoutMs) });
    const end = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => end(true));
    socket.once('timeout', () => end(false));
    socket.once('error', () => end(false));
  });
}

function errorAttempt(code: string | undefined): Attempt {
  if (code === 'ECONNREFUSED') return { kind: 'refused' };
  if (code === 'ECONNRESET' || code === 'EPIPE') return { kind: 'reset' };
  if (code === 'ETIMEDOUT') return { kind: 'timeout' };
  return { kind: 'failed', code: code ?? 'EUNKNOWN' };
}

/** What a connection that ends before a whole answer (its head, and its body as framed) means: a reset. */
const RESET: Attempt = { kind: 'reset' };

interface Reader {
  /** The attempt once the answer is known (its head and enough of its body), else undefined. */
  push(chunk: Buffer): Attempt | undefined;
  /** The connection ended: the answer if it is complete, else a reset. */
  end(): Attempt;
  /** The answer was read to its last byte, nothing after it, and the sidecar did not say it closes. */
  reusable(): boolean;
  /** Once the head is read, the answer with what came of its body: a body still coming at the deadline keeps its status. */
  partial(): Attempt | undefined;
}

type Framing = { readonly kind: 'length'; left: number; extra: boolean } | { readonly kind: 'chunked' } | { readonly kind: 'close' };

/** Reads one HTTP/1.x response: informational (1xx) heads skipped, the body framed by length, chunks or close. */
function responseReader(): Reader {
  let head = '';
  let status: number | undefined;
  let framing: Framing | undefined;
  let body = '';
  let chunked = '';
  let persistent = false;

  // Read as latin1 (a byte a character) to frame it; the body as UTF-8 as it was sent.
  const done = (): Attempt => ({
    kind: 'response',
    status: status ?? 0,
    body: Buffer.from(body.slice(0, BODY_LIMIT), 'latin1').toString('utf8'),
  });

  /** More body bytes; the attempt once the body is complete or long enough. */
  const addBody = (text: string): Attempt | undefined => {
    if (framing === undefined) return undefined;
    if (framing.kind === 'chunked') {
      chunked += text;
      return readChunks();
    }
    if (framing.kind === 'length') {
      const part = text.slice(0, framing.left);
      if (part.length < text.length) framing.extra = true;
      framing.left -= part.length;
      body += part;
      if (framing.left <= 0) return done();
    } else {
      body += text;
    }
    return body.length >= BODY_LIMIT ? done() : undefined;
  };

  const readChunks = (): Attempt | undefined => {
    for (;;) {
      const eol = chunked.indexOf('\r\n');
      if (eol < 0) return chunked.length > HEAD_LIMIT ? { kind: 'failed', code: 'EBADCHUNK' } : undefined;
      const size = Number.parseInt(chunked.slice(0, eol).split(';')[0] ?? '', 16);
      if (!Number.isFinite(size) || size < 0) return { kind: 'failed', code: 'EBADCHUNK' };
      if (size === 0) return done();
      if (chunked.length < eol + 2 + size + 2) {
        // A long chunk: what has come of it is enough once it fills the limit.
        if (body.length + chunked.length - eol - 2 >= BODY_LIMIT) {
          body += chunked.slice(eol + 2);
          return done();
        }
        return undefined;
      }
      body += chunked.slice(eol + 2, eol + 2 + size);
      chunked = chunked.slice(eol + 2 + size + 2);
      if (body.length >= BODY_LIMIT) return done();
    }
  };

  const readHead = (): Attempt | undefined => {
    for (;;) {
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return head.length > HEAD_LIMIT ? { kind: 'failed', code: 'EHEADTOOLARGE' } : undefined;
      const lines = head.slice(0, end).split('\r\n');
      const rest = head.slice(end + 4);
      const statusLine = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0] ?? '');
      if (statusLine === null) return { kind: 'failed', code: 'EBADRESPONSE' };
      const code = Number(statusLine[1]);
      if (code >= 100 && code < 200) {
        head = rest;
        continue;
      }
      status = code;
      persistent = lines[0]?.startsWith('HTTP/1.1') === true;
      framing = framingOf(code, lines.slice(1), () => (persistent = false));
      if (framing === undefined) return { kind: 'failed', code: 'EBADRESPONSE' };
      if (framing.kind === 'length' && framing.left === 0) {
        if (rest !== '') framing.extra = true;
        return done();
      }
      return addBody(rest);
    }
  };

  return {
    push(chunk) {
      const text = chunk.toString('latin1');
      if (status === undefined) {
        head += text;
        return readHead();
      }
      return addBody(text);
    },
    end() {
      if (status === undefined || framing === undefined) return RESET;
      return framing.kind === 'close' ? done() : RESET;
    },
    partial: () => (status === undefined || framing === undefined ? undefined : done()),
    reusable: () => framing?.kind === 'length' && framing.left === 0 && !framing.extra && persistent,
  };
}

/** How the body of an answer with this status and these header lines ends; undefined when they contradict. */
function framingOf(status: number, headerLines: readonly string[], closes: () => void): Framing | undefined {
  let length: number | undefined;
  let chunked = false;
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-length') {
      if (!/^\d+$/.test(value) || (length !== undefined && length !== Number(value))) return undefined;
      length = Number(value);
    } else if (name === 'connection') {
      if (
        value
          .toLowerCase()
          .split(',')
          .some((token) => token.trim() === 'close')
      )
        closes();
    } else if (name === 'transfer-encoding') {
      chunked = value.toLowerCase().split(',').at(-1)?.trim() === 'chunked';
    }
  }
  if (status === 204 || status === 304) return { kind: 'length', left: 0, extra: false };
  if (chunked) return { kind: 'chunked' };
  return length === undefined ? { kind: 'close' } : { kind: 'length', left: length, extra: false };
}
