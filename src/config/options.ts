// Every option, declared once: flag, environment variable, default, parser and help text, and the choice sets
// they allow. The parser (parse.ts), the help (help.ts), scuttle's variables and the sidecar
// detection read it; it reads the value parsers (values.ts), the sidecar kinds, the choice sets owned where
// they are used (the log's formats and levels, the launcher's quit policies), the wrapper's exit code and quote.

import { EXIT_WRAPPER_FAILED } from '../command/exit-code.ts';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../log.ts';
import { QUIT_POLICIES, type QuitPolicy } from '../launcher/protocol.ts';
import { quote } from '../quote.ts';
import { endpointUrl, ISTIO, OTHER_KIND_NAMES, type QuitTarget } from './kinds.ts';
import { type AlsoEntry, alsoList, bool, durationAtLeast, httpUrl, oneOf, urlList, fitsLauncher } from './values.ts';

const SIDECAR_SETTINGS = ['auto', 'classic', 'native', 'none'] as const;
/** The longest interval between readiness checks while the proxy is slow (src/sidecars/readiness.ts grows it). */
export const SLOW_INTERVAL_MS = 100;

export type SidecarSetting = (typeof SIDECAR_SETTINGS)[number];
export type SidecarMode = Exclude<SidecarSetting, 'auto'>;
export type { QuitPolicy };
export type { LogFormat, LogLevel };

/** The environment variable the pod fills from the annotation sidecar.istio.io/status (downward API). */
export const STATUS_VARIABLE = 'ISTIO_JOB_RUN_SIDECAR_STATUS';
/** scuttle's variable for Envoy's admin API: besides the readiness URL, its presence means a classic sidecar. */
export const ENVOY_ADMIN_VARIABLE = 'ENVOY_ADMIN_API';
/** Where the pod's annotations are read from when --pod-annotations is not given, if that file exists. */
export const DEFAULT_ANNOTATIONS_FILE = '/etc/podinfo/annotations';

export interface Options {
  readonly sidecar: SidecarSetting;
  readonly readyUrl: URL;
  readonly readyTimeout: number;
  readonly pollInterval: number;
  readonly requestTimeout: number;
  readonly startWithoutProxy: boolean;
  readonly wait: boolean;
  /** Istio's quit URLs, and the other sidecars' that scuttle's GENERIC_QUIT_ENDPOINTS adds. */
  readonly quitUrls: readonly QuitTarget[];
  readonly quit: QuitPolicy;
  readonly quitTimeout: number;
  readonly also: readonly AlsoEntry[];
  /** Read when it exists; a missing file is an error only when it is not the default. */
  readonly podAnnotations: string;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
}

export interface Spec<T> {
  /** Long flag without dashes; a switch is written --NAME or --no-NAME. */
  readonly flag: string;
  readonly env: string;
  readonly kind: 'value' | 'list' | 'switch';
  /** How the flag is shown in --help, e.g. "--ready-timeout DURATION". */
  readonly usage: string;
  readonly default: T;
  readonly defaultText: string;
  /** Parses one value; throws an Error whose message says what is wrong and what is allowed. */
  readonly parse: (raw: string) => T;
  readonly help: string;
}

/** The whole interface. The order here is the order of --help. */
export const OPTIONS: { readonly [K in keyof Options]: Spec<Options[K]> } = {
  sidecar: {
    flag: 'sidecar',
    env: 'ISTIO_JOB_RUN_SIDECAR',
    kind: 'value',
    usage: `--sidecar ${SIDECAR_SETTINGS.join('|')}`,
    default: 'auto',
    defaultText: 'auto',
    parse: oneOf(SIDECAR_SETTINGS),
    help:
      `What the pod has. auto: from ${STATUS_VARIABLE} if set, else from the annotations file, else classic if ` +
      "scuttle's ENVOY_ADMIN_API is set, else none outside Kubernetes, else classic. " +
      'classic: wait, run, quit. native: run only (Kubernetes manages the proxy). none: run only, no HTTP.',
  },
  readyUrl: {
    flag: 'ready-url',
    env: 'ISTIO_JOB_RUN_READY_URL',
    kind: 'value',
    usage: '--ready-url URL',
    default: new URL(endpointUrl(ISTIO, ISTIO.ready ?? ISTIO.quit)),
    defaultText: endpointUrl(ISTIO, ISTIO.ready ?? ISTIO.quit),
    parse: (raw) => httpUrl(raw),
    help: 'Polled with GET until it answers 2xx.',
  },
  readyTimeout: {
    flag: 'ready-timeout',
    env: 'ISTIO_JOB_RUN_READY_TIMEOUT',
    kind: 'value',
    usage: '--ready-timeout DURATION',
    default: 60_000,
    defaultText: '60s',
    parse: durationAtLeast(1),
    help: `How long to wait for every sidecar's readiness; then exit ${EXIT_WRAPPER_FAILED} without running the command.`,
  },
  pollInterval: {
    flag: 'poll-interval',
    env: 'ISTIO_JOB_RUN_POLL_INTERVAL',
    kind: 'value',
    usage: '--poll-interval DURATION',
    default: 25,
    defaultText: '25ms',
    parse: durationAtLeast(5),
    help: `Time between readiness checks at first (at least 5ms); while the proxy is slow it grows to a fifth of the time waited, at most ${SLOW_INTERVAL_MS}ms.`,
  },
  requestTimeout: {
    flag: 'request-timeout',
    env: 'ISTIO_JOB_RUN_REQUEST_TIMEOUT',
    kind: 'value',
    usage: '--request-timeout DURATION',
    default: 1_000,
    defaultText: '1s',
    parse: durationAtLeast(1),
    help: 'Timeout of one HTTP attempt.',
  },
  startWithoutProxy: {
    flag: 'start-without-proxy',
    env: 'ISTIO_JOB_RUN_START_WITHOUT_PROXY',
    kind: 'switch',
    usage: '--start-without-proxy',
    default: false,
    defaultText: 'off',
    parse: bool,
    help: 'Run the command anyway (with a warning) if the proxy never got ready.',
  },
  wait: {
    flag: 'wait',
    env: 'ISTIO_JOB_RUN_WAIT',
    kind: 'switch',
    usage: '--no-wait',
    default: true,
    defaultText: 'wait',
    parse: bool,
    help: 'Start the command at once, without waiting for readiness (ISTIO_JOB_RUN_WAIT=false).',
  },
  quitUrls: {
    flag: 'quit-url',
    env: 'ISTIO_JOB_RUN_QUIT_URL',
    kind: 'list',
    usage: '--quit-url URL',
    default: [{ url: new URL(endpointUrl(ISTIO, ISTIO.quit)), kind: ISTIO }],
    defaultText: endpointUrl(ISTIO, ISTIO.quit),
    parse: (raw) => urlList()(raw).map((url) => ({ url: fitsLauncher(url, ISTIO.label), kind: ISTIO })),
    help: 'POSTed to stop the proxy. Repeatable; the variable takes a comma-separated list.',
  },
  quit: {
    flag: 'quit',
    env: 'ISTIO_JOB_RUN_QUIT',
    kind: 'value',
    usage: `--quit ${QUIT_POLICIES.join('|')}`,
    default: 'always',
    defaultText: 'always',
    parse: oneOf(QUIT_POLICIES),
    help: 'When to tell a classic sidecar to quit. Use on-success with restartPolicy OnFailure.',
  },
  quitTimeout: {
    flag: 'quit-timeout',
    env: 'ISTIO_JOB_RUN_QUIT_TIMEOUT',
    kind: 'value',
    usage: '--quit-timeout DURATION',
    default: 10_000,
    defaultText: '10s',
    parse: durationAtLeast(1),
    help: 'How long to keep retrying the quits, all attempts to all sidecars together.',
  },
  also: {
    flag: 'also',
    env: 'ISTIO_JOB_RUN_ALSO',
    kind: 'list',
    usage: '--also NAME[:PORT...]',
    default: [],
    defaultText: 'none',
    parse: alsoList,
    help:
      `Another classic sidecar in the pod, waited for and stopped by its own rules: ${OTHER_KIND_NAMES.join(', ')}. ` +
      'Ports after the name replace the defaults, one per listener (cloud-sql-proxy:9190:9191). ' +
      'Repeatable; the variable takes a comma-separated list.',
  },
  podAnnotations: {
    flag: 'pod-annotations',
    env: 'ISTIO_JOB_RUN_POD_ANNOTATIONS',
    kind: 'value',
    usage: '--pod-annotations FILE',
    default: DEFAULT_ANNOTATIONS_FILE,
    defaultText: DEFAULT_ANNOTATIONS_FILE,
    parse: (raw) => {
      if (!raw.startsWith('/') || raw.length > 4_096) {
        throw new Error(
          `${quote(raw.slice(0, 100))} is not an absolute path (a file of a downwardAPI volume, e.g. ${DEFAULT_ANNOTATIONS_FILE})`,
        );
      }
      return raw;
    },
    help:
      "The pod's annotations (a downwardAPI volume with fieldPath metadata.annotations), where the sidecars are " +
      'found; the default file is read when it exists.',
  },
  logLevel: {
    flag: 'log-level',
    env: 'ISTIO_JOB_RUN_LOG_LEVEL',
    kind: 'value',
    usage: `--log-level ${LOG_LEVELS.join('|')}`,
    default: 'info',
    defaultText: 'info',
    parse: oneOf(LOG_LEVELS),
    help: 'How much the wrapper says on stderr.',
  },
  logFormat: {
    flag: 'log-format',
    env: 'ISTIO_JOB_RUN_LOG_FORMAT',
    kind: 'value',
    usage: `--log-format ${LOG_FORMATS.join('|')}`,
    default: 'text',
    defaultText: 'text',
    parse: oneOf(LOG_FORMATS),
    help: 'Lines prefixed "istio-job-run:", or one JSON object a line.',
  },
};

export const DEFAULTS: Options = Object.fromEntries(
  Object.entries(OPTIONS).map(([key, spec]) => [key, spec.default]),
) as unknown as Options;

export const SPECS = Object.entries(OPTIONS) as [keyof Options, Spec<unknown>][];
