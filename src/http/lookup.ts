// Name lookups that cannot starve anything: literals and `localhost` are answered at once, without DNS; any
// other name has at most one lookup in flight (callers share it), and each caller waits at most its bound.
// A name whose DNS server never answers therefore holds one libuv threadpool thread, not all four, and never
// delays a quit to 127.0.0.1 or localhost.

import { isIP } from 'node:net';

export interface Address {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves every address of a name (dns.promises.lookup with all: true). */
export type Resolve = (hostname: string) => Promise<Address[]>;

type Callback = (error: NodeJS.ErrnoException | null, address: string | Address[], family?: number) => void;
export type LookupFunction = (hostname: string, options: { all?: boolean }, callback: Callback) => void;

/** What a name means without DNS: an address literal, or localhost (loopback). */
export function withoutDns(hostname: string): Address[] | undefined {
  const host = hostname.replace(/^\[|\]$/g, '');
  const family = isIP(host);
  if (family === 4 || family === 6) return [{ address: host, family }];
  if (host.toLowerCase() === 'localhost' || host.toLowerCase() === 'localhost.') {
    return [{ address: '127.0.0.1', family: 4 }];
  }
  return undefined;
}

export function boundedLookup(resolve: Resolve, boundMs: number): LookupFunction {
  const inFlight = new Map<string, Promise<Address[]>>();
  const shared = (hostname: string): Promise<Address[]> => {
    let pending = inFlight.get(hostname);
    if (pending === undefined) {
      pending = resolve(hostname).finally(() => inFlight.delete(hostname));
      inFlight.set(hostname, pending);
    }
    return pending;
  };

  return (hostname, options, callback) => {
    const answer = (addresses: Address[]): void => {
      const first = addresses[0];
      if (first === undefined) return callback(Object.assign(new Error(`${hostname}: no address`), { code: 'ENOTFOUND' }), '');
      if (options.all === true) callback(null, addresses);
      else callback(null, first.address, first.family);
    };
    const known = withoutDns(hostname);
    if (known !== undefined) return answer(known);

    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(Object.assign(new Error(`looking up ${hostname} took over ${boundMs}ms`), { code: 'EAI_AGAIN' }));
      }, boundMs);
      timer.unref();
    });
    Promise.race([shared(hostname), bound]).then(
      (addresses) => {
        clearTimeout(timer);
        answer(addresses);
      },
      (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        callback(error, '');
      },
    );
  };
}
