// One HTTP attempt, classified. Loaded only in classic mode: undici is the largest part of the bundle, and
// only its Agent and request() are loaded (src/undici-parts.d.ts says why).

import Agent from 'undici/lib/dispatcher/agent.js';
import request from 'undici/lib/api/api-request.js';
import { classify, type Attempt } from './attempt.ts';

export interface Http {
  /** Never throws: every way an attempt can end is an Attempt. */
  attempt(method: 'GET' | 'POST', url: URL, timeoutMs: number, cancel?: AbortSignal): Promise<Attempt>;
  close(): void;
}

const BODY_LIMIT = 512;

export function createHttp(): Http {
  // Short keep-alive: readiness polls reuse one connection; nothing lingers once the wrapper is done.
  const agent = new Agent({ keepAliveTimeout: 2_000, keepAliveMaxTimeout: 2_000, pipelining: 1, connections: 4 });

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

async function readSome(body: AsyncIterable<Buffer | string>): Promise<string> {
  let text = '';
  for await (const chunk of body) {
    if (text.length < BODY_LIMIT) text += String(chunk);
  }
  return text.slice(0, BODY_LIMIT);
}
