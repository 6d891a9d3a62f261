// How a message shows a value the user gave: quoted, cut short, and without credentials or query strings.

/** JSON quoting keeps empty strings, spaces and control characters visible in messages. */
export function quote(text: string): string {
  const shown = text.length > 80 ? `${text.slice(0, 77)}...` : text;
  return JSON.stringify(shown);
}

/**
 * A value with whatever could be credentials in a URL (`user:pass@`, a query string such as `?token=...`, a
 * fragment) replaced by `***`, entry by entry of a comma-separated list: no message ever shows them.
 */
export function redact(raw: string): string {
  return raw
    .split(',')
    .map((entry) => {
      const query = entry.search(/[?#]/);
      const kept = query < 0 ? entry : `${entry.slice(0, query + 1)}***`;
      const at = kept.lastIndexOf('@');
      if (at < 0) return kept;
      const scheme = kept.indexOf('://');
      const start = scheme >= 0 && scheme < at ? scheme + 3 : 0;
      return `${kept.slice(0, start)}***${kept.slice(at)}`;
    })
    .join(',');
}

/**
 * A URL as every log line shows it, text or JSON: its query string and fragment, where a sidecar's token may
 * be, replaced by `***` (`http://127.0.0.1:15020/quitquitquit?***`). The launcher's last-resort line shows
 * its targets the same way.
 */
export function shownUrl(url: URL): string {
  const query = url.search === '' ? '' : '?***';
  const fragment = url.hash === '' ? '' : '#***';
  return `${url.protocol}//${url.host}${url.pathname}${query}${fragment}`;
}
