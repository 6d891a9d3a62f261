// How a message shows a value the user gave: quoted, cut short, and without credentials.

/** JSON quoting keeps empty strings, spaces and control characters visible in messages. */
export function quote(text: string): string {
  const shown = text.length > 80 ? `${text.slice(0, 77)}...` : text;
  return JSON.stringify(shown);
}

/**
 * A value with whatever could be credentials in a URL (`user:pass@`) replaced by `***`, entry by entry of a
 * comma-separated list: no message ever shows them.
 */
export function redact(raw: string): string {
  return raw
    .split(',')
    .map((entry) => {
      const at = entry.lastIndexOf('@');
      if (at < 0) return entry;
      const scheme = entry.indexOf('://');
      const start = scheme >= 0 && scheme < at ? scheme + 3 : 0;
      return `${entry.slice(0, start)}***${entry.slice(at)}`;
    })
    .join(',');
}
