// A sidecar's listener as a URL names it: whether it is on loopback, and its identity (host and port) for
// the rule behind "already gone".

const portOf = (url: URL): string => url.port || (url.protocol === 'https:' ? '443' : '80');

/** Most sidecars (pilot-agent, linkerd-proxy) accept a quit only from a loopback address. */
export function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A listener's identity for the "already gone" rule: loopback addresses are one host. */
export function listenerKey(url: URL): string {
  return `${isLoopback(url) ? 'loopback' : url.hostname}:${portOf(url)}`;
}
