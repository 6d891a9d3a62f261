// One HTTP attempt through undici, classified: for https: URLs (src/bundle/load-http.ts sends plain http: ones over
// node:net). undici is the largest part of the bundle, and only its Agent and request() are loaded
// (src/http/undici-parts.d.ts says why).

import { lookup as dnsLookup } from 'node:dns/promises';
import request from 'undici/lib/api/api-request.js';
import Agent from 'undici/lib/dispatcher/agent.js';
import { type Attempt, classify } from './attempt.ts';
import { BODY_LIMIT } from './plain.ts';
import { boundedLookup } from './lookup.ts';

export interface Http {
  /** Never throws: every way an attempt can end is an Attempt. */
  attempt(method: 'GET' | 'POST', url: URL, timeoutMs: number, cancel?: AbortSignal): Promise<Attempt>;
  /** Whether the URL's host and port accept a TCP connection within timeoutMs (closed at once); never throws. */
  connect(url: URL, timeoutMs: number): Promise<boolean>;
  close(): void;
}

export interface HttpSettings {
  /** How long one name lookup may take a caller (the request timeout). */
  readonly lookupBoundMs?: number;
}

/** The part of Http undici does: requests (a connection probe needs no HTTP client). */
export type HttpsClient = Pick<Http, 'attempt' | 'close'>;

export function createHttp(settings: HttpSettings = {}): HttpsClient {
  const lookup = boundedLookup(
    async (hostname) =>
      (await dnsLookup(hostname, { all: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 })),
    settings.lookupBoundMs ?? 1_000,
  );
  // Short keep-alive: readiness polls reuse one connection; nothing lingers once the wrapper is done.
  const agent = new Agent({
    keepAliveTimeout: 2_000,
    keepAliveMaxTimeout: 2_000,
    pipelining: 1,
    connections: 4,
    connect: { lookup } as object,
  });

  return {
    async attempt(method, url, timeoutMs, cancel) {
      const ms = Math.max(1, Math.ceil(timeoutMs));
      const timeout = AbortSignal.timeout(ms);
      const signal = cancel === undefined ? timeout : AbortSignal.any([timeout, cancel]);
      try {
        const response = await request.call(agent, {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method,
          signal,
          headersTimeout: ms,
          bodyTimeout: ms,
          headers: { 'user-agent': 'istio-job-run' },
        });
        const body = await readSome(response.body);
        if (cancel?.aborted === true) return { kind: 'aborted' };
        return { kind: 'response', status: response.statusCode, body };
      } catch (error) {
        if (cancel?.aborted === true) return { kind: 'aborted' };
        if (timeout.aborted) return { kind: 'timeout' };
        return classify(error);
      }
    },
    close() {
      agent.destroy().catch(() => undefined);
    },
  };
}

/**
 * The body's first bytes, as many as came in time: the status line is the answer, so a body cut short by the
 * deadline or the connection keeps it (a 200 whose body never ends is still a 200).
 */
async function readSome(body: AsyncIterable<Buffer | string>): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      if (text.length < BODY_LIMIT) text += String(chunk);
    }
  } catch {
    // Cut short: what came is the body.
  }
  return text.slice(0, BODY_LIMIT);
}
