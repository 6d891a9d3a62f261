// Parsers of option values, for istio-job-run's own options (options.ts), scuttle's variables
// (scuttle.ts) and the pod's annotations (detect.ts). Each throws an Error whose message quotes the value and
// says what is allowed; the caller puts the flag, variable or annotation in front.

import { type DurationSyntax, formatDuration, parseDuration } from './duration.ts';
import { errorMessage } from '../errors.ts';
import { quote, redact } from '../quote.ts';
import { endpointUrl, ISTIO, kindNamed, OTHER_KIND_NAMES, type OtherKindName } from './kinds.ts';
import { fitsLine, MAX_LINE_BYTES, quitTargetLine } from '../launcher/protocol.ts';

const URL_EXAMPLE = endpointUrl(ISTIO, ISTIO.quit);

/** A list whose good entries are kept beside the complaint about the bad ones. */
export class PartialError<T> extends Error {
  readonly partial: readonly T[];
  constructor(message: string, partial: readonly T[]) {
    super(message);
    this.partial = partial;
  }
}

/** One of a choice set, in any case. */
export const oneOf =
  <T extends string>(allowed: readonly T[]) =>
  (raw: string): T => {
    const value = raw.trim().toLowerCase();
    const found = allowed.find((choice) => choice === value);
    if (found !== undefined) return found;
    throw new Error(`${quote(raw)} is not one of ${allowed.join(', ')}`);
  };

/** The project's booleans: true, 1, yes or false, 0, no, in any case. */
export function bool(raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw new Error(`${quote(raw)} is not a boolean (true, false, 1, 0, yes, no)`);
}

/** A TCP port, 1-65535, as decimal digits. */
export function port(raw: string): number {
  const value = raw.trim();
  const n = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= 65_535)) throw new Error(`${quote(raw)} is not a port (1-65535)`);
  return n;
}

/** A duration of at least `min` ms. */
export const durationAtLeast =
  (min: number, syntax: DurationSyntax = {}) =>
  (raw: string): number => {
    const ms = parseDuration(raw, syntax);
    if (ms < min) throw new Error(`${quote(raw)} is too short (at least ${formatDuration(min)})`);
    return ms;
  };

/** An http or https URL without credentials; `example` is shown with the error when given (false: never, the caller says). */
export function httpUrl(raw: string, example?: string | false): URL {
  const shown = quote(redact(raw));
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new Error(`${shown} is not a URL${example === false ? '' : ` (example: ${example ?? URL_EXAMPLE})`}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`${shown} is not an http or https URL${typeof example === 'string' ? ` (example: ${example})` : ''}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new Error(`${shown} has credentials in it; sidecar endpoints take none, and they would show in logs`);
  }
  if (url.port === '0') throw new Error(`${shown} has port 0; a sidecar listens on a port from 1 to 65535`);
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

/**
 * URLs separated by spaces, tabs or newlines (the shell's words of `for url in $VAR`), as an operator writes a
 * variable of quit URLs; none when there is only space. Each is a quit URL of LABEL's (httpUrl, and one the
 * launcher can hold); the good ones are kept beside the error about the bad ones, which says what is allowed.
 */
export const spacedUrls =
  (example: string, label: string) =>
  (raw: string): URL[] => {
    const urls: URL[] = [];
    const errors: string[] = [];
    for (const item of raw.split(/[ \t\n]+/).filter((word) => word !== '')) {
      try {
        urls.push(fitsLauncher(httpUrl(item, false), label));
      } catch (error) {
        errors.push(errorMessage(error));
      }
    }
    if (errors.length > 0) throw new PartialError(`${errors.join('; ')} (space-separated http or https URLs, e.g. ${example})`, urls);
    return urls;
  };

/** A sidecar named by --also: its kind, and the ports given after its name (in the kind's listener order). */
export interface AlsoEntry {
  readonly kind: OtherKindName;
  readonly ports: readonly number[];
}

/** One --also entry: NAME, or NAME:PORT with one port per listener of that kind (cloud-sql-proxy:9190:9191). */
function alsoEntry(raw: string): AlsoEntry {
  const [name = '', ...ports] = raw.trim().split(':');
  const kind = OTHER_KIND_NAMES.find((candidate) => candidate === name.toLowerCase());
  if (kind === undefined) {
    const istio = name.toLowerCase() === 'istio' ? '; Istio is governed by --sidecar' : '';
    throw new Error(`${quote(raw)} is not a sidecar name (${OTHER_KIND_NAMES.join(', ')})${istio}`);
  }
  const listeners = kindNamed(kind).listeners;
  if (ports.length > 0 && ports.length !== listeners.length) {
    const shape = listeners.map((listener) => `${listener.name.toUpperCase()}_PORT`).join(':');
    throw new Error(`${quote(raw)}: ${kind} takes ${listeners.length} port${listeners.length === 1 ? '' : 's'} (${kind}:${shape})`);
  }
  return { kind, ports: ports.map(port) };
}

/** Comma-separated --also entries: the good ones are kept beside the error about the bad ones. */
export function alsoList(raw: string): AlsoEntry[] {
  if (raw.trim() === '') throw new Error(`is empty (sidecar names: ${OTHER_KIND_NAMES.join(', ')}; or none)`);
  if (raw.trim().toLowerCase() === 'none') return [];
  const entries: AlsoEntry[] = [];
  const errors: string[] = [];
  for (const item of raw.split(',')) {
    if (item.trim() === '') continue;
    try {
      entries.push(alsoEntry(item));
    } catch (error) {
      errors.push(errorMessage(error));
    }
  }
  if (errors.length > 0) throw new PartialError(errors.join('; '), entries);
  return entries;
}

/**
 * A quit URL whose line to the launcher would not fit the protocol's longest line is refused here, when the
 * options are read: the launcher must be able to quit every sidecar the wrapper would.
 */
export function fitsLauncher(url: URL, label: string): URL {
  const line = quitTargetLine(label, url);
  if (line !== undefined && !fitsLine(line)) {
    throw new Error(
      `${quote(redact(url.href))} is too long: its path and query take ${Buffer.byteLength(`${url.pathname}${url.search}`)} bytes, ` +
        `and the line that hands it to the launcher may take at most ${MAX_LINE_BYTES}`,
    );
  }
  return url;
}
