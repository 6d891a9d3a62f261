// scuttle's environment variables (redboxllc/scuttle, and QUIT_REQUEST_TIMEOUT from its kvij/scuttle fork), read
// below istio-job-run's own, so a team moving from scuttle changes the image and nothing else. Pure: the
// environment in; the option values they ask for, what each variable did, and what was wrong out.
// Precedence against flags and ISTIO_JOB_RUN_* is parse.ts's business; conflicts among scuttle's own
// variables are settled here, the way scuttle settled them. docs/MIGRATING.md tells the same story.

import { formatDuration } from './duration.ts';
import { errorMessage } from '../errors.ts';
import { ENVOY_ADMIN_VARIABLE, type Options } from './options.ts';
import { quote, redact, shownUrl } from '../quote.ts';
import { endpointUrl, GENERIC_KIND, ISTIO, istioPort, kindNamed, type QuitTarget } from './kinds.ts';
import { durationAtLeast, httpUrl, urlList } from './values.ts';

/** In the order of the migration table; the info line lists them in this order. */
export const SCUTTLE_VARIABLES = [
  'ENVOY_ADMIN_API',
  'ISTIO_QUIT_API',
  'NEVER_KILL_ISTIO',
  'NEVER_KILL_ISTIO_ON_FAILURE',
  'START_WITHOUT_ENVOY',
  'WAIT_FOR_ENVOY_TIMEOUT',
  'QUIT_WITHOUT_ENVOY_TIMEOUT',
  'GENERIC_QUIT_ENDPOINTS',
  'SCUTTLE_LOGGING',
  'QUIT_REQUEST_TIMEOUT',
] as const;

export type ScuttleVariable = (typeof SCUTTLE_VARIABLES)[number];

type Env = Readonly<Record<string, string | undefined>>;

/** scuttle read an empty variable as unset (manifest templates render `value: ""`); so does istio-job-run, for these. */
function scuttleValue(env: Env, name: ScuttleVariable): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** One option a variable sets, and how it reads as a flag: `--quit on-success`. */
interface Part {
  readonly option: keyof Options;
  readonly shown: string;
}

/** What one variable that is set did: set options, or nothing, and why (another scuttle variable won, ...). */
export type Effect =
  | { readonly variable: ScuttleVariable; readonly kind: 'sets'; readonly parts: readonly Part[] }
  | { readonly variable: ScuttleVariable; readonly kind: 'inert'; readonly why: string };

export interface ScuttleSettings {
  /** The option values the variables ask for; parse.ts puts them below flags and ISTIO_JOB_RUN_*. */
  readonly options: Partial<Options>;
  /** One per variable that was set and could be read, in SCUTTLE_VARIABLES order. false booleans are left out. */
  readonly effects: readonly Effect[];
  /** `NAME: "value" is not ... (allowed)`, like the option table's own. */
  readonly errors: readonly string[];
  /** ENVOY_ADMIN_API is set, even to a bad value: a classic sidecar to quit (mode.ts), read here only. */
  readonly envoyAdmin: boolean;
}

/** Reads scuttle's variables. `defaultQuitUrls` is what GENERIC_QUIT_ENDPOINTS adds to when ISTIO_QUIT_API is unset. */
export function readScuttle(env: Env, defaultQuitUrls: readonly QuitTarget[]): ScuttleSettings {
  const errors: string[] = [];
  const read = <T>(name: ScuttleVariable, parse: (raw: string) => T): T | undefined => {
    const raw = scuttleValue(env, name);
    if (raw === undefined) return undefined;
    try {
      return parse(raw);
    } catch (error) {
      errors.push(`${name}: ${errorMessage(error)}`);
      return undefined;
    }
  };

  const admin = read('ENVOY_ADMIN_API', baseUrl(`http://127.0.0.1:${istioPort('envoy-admin')}`));
  const quitApi = read('ISTIO_QUIT_API', baseUrl(`http://127.0.0.1:${istioPort('status')}`));
  const neverKill = read('NEVER_KILL_ISTIO', scuttleBool);
  const neverKillOnFailure = read('NEVER_KILL_ISTIO_ON_FAILURE', scuttleBool);
  const startWithoutEnvoy = read('START_WITHOUT_ENVOY', scuttleBool);
  const waitTimeout = read('WAIT_FOR_ENVOY_TIMEOUT', duration(0));
  const quitWithoutTimeout = read('QUIT_WITHOUT_ENVOY_TIMEOUT', duration(0));
  const generic = read('GENERIC_QUIT_ENDPOINTS', genericEndpoints);
  const logging = read('SCUTTLE_LOGGING', scuttleBool);
  const quitRequestTimeout = read('QUIT_REQUEST_TIMEOUT', duration(1));

  const options: { -readonly [K in keyof Options]?: Options[K] } = {};
  const effects: Effect[] = [];
  /** Sets one option, and says how that reads as a flag; `sets` records what the variable did. */
  const set = <K extends keyof Options>(option: K, value: Options[K], shown: string): Part => {
    options[option] = value;
    return { option, shown };
  };
  const sets = (variable: ScuttleVariable, ...parts: Part[]): void => void effects.push({ variable, kind: 'sets', parts });
  const inert = (variable: ScuttleVariable, why: string): void => void effects.push({ variable, kind: 'inert', why });

  if (admin !== undefined) {
    const readyUrl = append(admin, 'ready');
    sets('ENVOY_ADMIN_API', set('readyUrl', readyUrl, `--ready-url ${shownUrl(readyUrl)}`));
  }

  const istioQuit = quitApi === undefined ? undefined : { url: append(quitApi, 'quitquitquit'), kind: ISTIO };
  if (istioQuit !== undefined) sets('ISTIO_QUIT_API', set('quitUrls', [istioQuit], `--quit-url ${shownUrl(istioQuit.url)}`));

  // scuttle checked NEVER_KILL_ISTIO first: never quitting covers quitting only on success.
  if (neverKill === true) sets('NEVER_KILL_ISTIO', set('quit', 'never', '--quit never'));
  if (neverKillOnFailure === true) {
    if (neverKill === true) inert('NEVER_KILL_ISTIO_ON_FAILURE', 'overridden by NEVER_KILL_ISTIO');
    else sets('NEVER_KILL_ISTIO_ON_FAILURE', set('quit', 'on-success', '--quit on-success'));
  }

  // scuttle: START_WITHOUT_ENVOY skips the wait whatever the timeouts say; QUIT_WITHOUT_ENVOY_TIMEOUT beats
  // WAIT_FOR_ENVOY_TIMEOUT; a timeout of 0 is no timeout, the same as unset.
  if (startWithoutEnvoy === true) sets('START_WITHOUT_ENVOY', set('wait', false, '--no-wait'));
  const timeouts = [
    ['QUIT_WITHOUT_ENVOY_TIMEOUT', quitWithoutTimeout, false],
    ['WAIT_FOR_ENVOY_TIMEOUT', waitTimeout, true],
  ] as const;
  let winner: ScuttleVariable | undefined;
  for (const [variable, ms, runAnyway] of timeouts) {
    if (ms === undefined) continue;
    if (startWithoutEnvoy === true) inert(variable, 'overridden by START_WITHOUT_ENVOY');
    else if (ms === 0) inert(variable, '0: the same as unset, as in scuttle');
    else if (winner !== undefined) inert(variable, `overridden by ${winner}`);
    else {
      winner = variable;
      sets(
        variable,
        set('readyTimeout', ms, `--ready-timeout ${formatDuration(ms)}`),
        set('startWithoutProxy', runAnyway, runAnyway ? '--start-without-proxy' : '--no-start-without-proxy'),
      );
    }
  }

  if (generic !== undefined) {
    const besides = istioQuit === undefined ? ` (besides ${defaultQuitUrls.map(({ url }) => shownUrl(url)).join(', ')})` : '';
    const others = generic.map((url) => ({ url, kind: GENERIC_KIND }));
    sets(
      'GENERIC_QUIT_ENDPOINTS',
      set(
        'quitUrls',
        [...(istioQuit === undefined ? defaultQuitUrls : [istioQuit]), ...others],
        `${generic.map((url) => `--quit-url ${shownUrl(url)}`).join(' ')}${besides}`,
      ),
    );
  }
  if (logging === false) sets('SCUTTLE_LOGGING', set('logLevel', 'warn', '--log-level warn'));
  if (quitRequestTimeout !== undefined) {
    const shown = `--request-timeout ${formatDuration(quitRequestTimeout)}`;
    sets('QUIT_REQUEST_TIMEOUT', set('requestTimeout', quitRequestTimeout, shown));
  }

  const envoyAdmin = scuttleValue(env, ENVOY_ADMIN_VARIABLE) !== undefined;
  return { options, effects: sortEffects(effects), errors, envoyAdmin };
}

/**
 * The one info line: each variable with the flags it stands for, or why it does nothing. `overrides` names,
 * for each option a flag or ISTIO_JOB_RUN_* variable set instead, that flag or variable.
 */
export function describeScuttle(effects: readonly Effect[], overrides: ReadonlyMap<keyof Options, string>): string | undefined {
  const overriddenBy = (option: keyof Options): string | undefined => overrides.get(option);
  if (effects.length === 0) return undefined;
  const items = effects.map((effect) => {
    if (effect.kind === 'inert') return `${effect.variable} (${effect.why})`;
    const held = effect.parts.filter((part) => overriddenBy(part.option) === undefined).map((part) => part.shown);
    const lost = effect.parts.flatMap((part) => {
      const by = overriddenBy(part.option);
      return by === undefined ? [] : [{ shown: part.shown, by }];
    });
    if (held.length === 0) {
      const by = [...new Set(lost.map((part) => part.by))].join(' and ');
      return `${effect.variable} (overridden by ${by})`;
    }
    const notes = lost.map((part) => ` (${part.shown} overridden by ${part.by})`).join('');
    return `${effect.variable} -> ${held.join(' ')}${notes}`;
  });
  return `scuttle settings: ${items.join(', ')}`;
}

function sortEffects(effects: Effect[]): Effect[] {
  return effects.sort((a, b) => SCUTTLE_VARIABLES.indexOf(a.variable) - SCUTTLE_VARIABLES.indexOf(b.variable));
}

/**
 * scuttle's booleans, not the project's (values.ts): scuttle compared with "true" and "false" exactly and
 * ignored anything else; here anything else is an error.
 */
function scuttleBool(raw: string): boolean {
  const value = raw.trim();
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new Error(`${quote(raw)} is not a boolean (true or false; scuttle ignored any other value)`);
}

/** Go durations (30s, 1m30s, 1.5h, 300ms, 500us) and the project's own (a bare number is seconds). */
const duration = (min: number) => durationAtLeast(min, { go: true });

/** A URL that a path is appended to, as scuttle did (`<value>/ready`): no query or fragment to append after. */
const baseUrl =
  (example: string) =>
  (raw: string): URL => {
    const url = httpUrl(raw, example);
    if (url.search !== '' || url.hash !== '') {
      throw new Error(`${quote(redact(raw))} has a query or fragment; a path is appended to it (example: ${example})`);
    }
    return url;
  };

/** `http://127.0.0.1:15000` or `http://127.0.0.1:15000/` + `ready` -> `http://127.0.0.1:15000/ready`. */
function append(base: URL, path: string): URL {
  const url = new URL(base.href);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path}`;
  return url;
}

/** Comma-separated; scuttle would POST an empty entry and fail, here it is an error. */
const genericEndpoints = urlList(endpointUrl(kindNamed('cloud-sql-proxy'), kindNamed('cloud-sql-proxy').quit));
