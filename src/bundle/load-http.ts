// How the wrapper talks to its sidecars: plain http: URLs (every default one) over node:net (src/http/plain.ts),
// https: ones through undici (src/http/undici.ts), which is most of the code and is loaded only for such a URL. In
// the single executable undici is an asset, compiled only when asked for, with its own V8 code cache; run from
// source, a plain import.

import type { Attempt } from '../http/attempt.ts';
import type { createHttp, Http, HttpSettings, HttpsClient } from '../http/undici.ts';
import { plainClient, plainConnect } from '../http/plain.ts';
import { type Address, boundedLookup } from '../http/lookup.ts';

export async function loadHttp(settings: HttpSettings = {}): Promise<Http> {
  // node:dns is loaded only for a name that is neither an address nor localhost.
  const resolve = async (hostname: string): Promise<Address[]> =>
    (await process.getBuiltinModule('node:dns/promises').lookup(hostname, { all: true })).map(({ address, family }) => ({
      address,
      family: family === 6 ? 6 : 4,
    }));
  const lookup = boundedLookup(resolve, settings.lookupBoundMs ?? 1_000);
  const plain = plainClient(lookup);
  let tls: Promise<HttpsClient> | undefined;
  const undici = (): Promise<HttpsClient> => (tls ??= loadUndici(settings));
  return {
    attempt(method, url, timeoutMs, cancel) {
      if (url.protocol === 'http:') return plain.attempt(method, url, timeoutMs, cancel);
      return undici().then(
        (http) => http.attempt(method, url, timeoutMs, cancel),
        (error: unknown): Attempt => ({
          kind: 'failed',
          code: `no HTTPS client (${error instanceof Error ? error.message : String(error)})`,
        }),
      );
    },
    connect: (url, timeoutMs) => plainConnect(url, timeoutMs, lookup),
    close() {
      plain.close();
      tls?.then((http) => http.close()).catch(() => undefined);
    },
  };
}

async function loadUndici(settings: HttpSettings): Promise<HttpsClient> {
  if (!process.getBuiltinModule('node:sea').isSea()) return (await import('../http/undici.ts')).createHttp(settings);

  const { assetExport, HTTP_ASSET, HTTP_CACHE_ASSET } = await import('./assets.ts');
  return assetExport<typeof createHttp>(HTTP_ASSET, 'createHttp', HTTP_CACHE_ASSET)(settings);
}
