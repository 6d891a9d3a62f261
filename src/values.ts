// Parsers of option values, shared by istio-job-run's own options (options-table.ts) and scuttle's variables
// (scuttle.ts). Each throws an Error whose message quotes the value and says what is allowed; the caller
// puts the flag or variable name in front.

import { type DurationSyntax, formatDuration, parseDuration, quote } from './duration.ts';

const URL_EXAMPLE = 'http://127.0.0.1:15020/quitquitquit';

/** A list whose good entries are kept beside the complaint about the bad ones. */
export class PartialError extends Error {
  readonly partial: unknown;
  constructor(message: string, partial: unknown) {
    super(message);
    this.partial = partial;
  }
}

/** A duration of at least `min` ms. */
export const durationAtLeast =
  (min: number, syntax: DurationSyntax = {}) =>
  (raw: string): number => {
    const ms = parseDuration(raw, syntax);
    if (ms < min) throw new Error(`${quote(raw)} is too short (at least ${formatDuration(min)})`);
    return ms;
  };

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

/** An http or https URL without credentials; `example` is shown with the error when given. */
export function httpUrl(raw: string, example?: string): URL {
  const shown = quote(redact(raw));
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new Error(`${shown} is not a URL (example: ${example ?? URL_EXAMPLE})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`${shown} is not an http or https URL${example === undefined ? '' : ` (example: ${example})`}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new Error(`${shown} has credentials in it; sidecar endpoints take none, and they would show in logs`);
  }
  return url;
}

/** Comma-separated URLs, spaces around entries allowed, no empty entry. */
export const urlList =
  (example?: string) =>
  (raw: string): URL[] => {
    const items = raw.split(',').map((item) => item.trim());
    if (items.some((item) => item === '')) {
      throw new Error(`${quote(redact(raw))} has an empty entry (comma-separated URLs)`);
    }
    return items.map((item) => httpUrl(item, example));
  };
