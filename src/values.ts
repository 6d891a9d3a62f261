// Parsers of option values, shared by istio-job-run's own options (options.ts) and scuttle's variables
// (scuttle.ts). Each throws an Error whose message quotes the value and says what is allowed; the caller
// puts the flag or variable name in front.

import { formatDuration, parseDuration, quote, type DurationSyntax } from './duration.ts';

const URL_EXAMPLE = 'http://127.0.0.1:15020/quitquitquit';

/** A duration of at least `min` ms. */
export const durationAtLeast = (min: number, syntax: DurationSyntax = {}) => (raw: string): number => {
  const ms = parseDuration(raw, syntax);
  if (ms < min) throw new Error(`${quote(raw)} is too short (at least ${formatDuration(min)})`);
  return ms;
};

/** An http or https URL; `example` is shown with the error when given. */
export function httpUrl(raw: string, example?: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new Error(`${quote(raw)} is not a URL (example: ${example ?? URL_EXAMPLE})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`${quote(raw)} is not an http or https URL${example === undefined ? '' : ` (example: ${example})`}`);
  }
  return url;
}

/** Comma-separated URLs, spaces around entries allowed, no empty entry. */
export const urlList = (example?: string) => (raw: string): URL[] => {
  const items = raw.split(',').map((item) => item.trim());
  if (items.some((item) => item === '')) throw new Error(`${quote(raw)} has an empty entry (comma-separated URLs)`);
  return items.map((item) => httpUrl(item, example));
};
