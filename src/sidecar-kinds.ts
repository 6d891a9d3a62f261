// The classic sidecars the wrapper knows, one row each, Istio first: where each answers readiness, where it is
// told to stop, how an answer says "stopping is not enabled", and how its own project wants it set up for a
// Job. Facts from each project's source (the README's Sidecars section names the projects); nothing else repeats them.

import type { Attempt } from './attempt.ts';

/** One listener of a sidecar: its default port, and what a port given in `--also NAME:PORT` stands for. */
export interface Listener {
  readonly name: string;
  readonly port: number;
}

export interface Endpoint {
  /** Index into the kind's listeners. */
  readonly listener: number;
  readonly path: string;
}

export interface SidecarKind {
  readonly name: string;
  /** How log lines name it. */
  readonly label: string;
  readonly listeners: readonly Listener[];
  /** GET until 2xx; undefined: nothing to wait for. */
  readonly ready?: Endpoint;
  /** POST to stop it. */
  readonly quit: Endpoint;
  /** Whether an answer to the quit says the endpoint exists but is switched off. */
  readonly notEnabled?: (attempt: Attempt) => boolean;
  /** The annotation or flag that switches the quit on. */
  readonly enableQuit: string;
  /** Said with a readiness timeout. */
  readonly readyHint?: string;
  /** Said when a quit is rejected with this status, or given up on. */
  readonly rejectHints?: Readonly<Record<number, string>>;
  readonly gaveUpHint?: string;
  /** How the sidecar's own project wants it configured for a Job (the README's table). */
  readonly forJobs: string;
  /** What an answer looks like when its quit is switched off: the README table's prose (scripts/docs.ts). */
  readonly docs: string;
}

const answered = (attempt: Attempt, status: number, says: RegExp): boolean =>
  attempt.kind === 'response' && attempt.status === status && says.test(attempt.body);

/** Google's Cloud SQL and AlloyDB Auth Proxies share their health and admin servers. */
const AUTH_PROXY = {
  listeners: [
    { name: 'http', port: 9090 },
    { name: 'admin', port: 9091 },
  ],
  ready: { listener: 0, path: '/startup' },
  quit: { listener: 1, path: '/quitquitquit' },
  enableQuit: 'the proxy flag --quitquitquit',
  docs: 'the admin port refuses (no `--quitquitquit`)',
} as const;

export const SIDECAR_KINDS = [
  {
    name: 'istio',
    label: 'proxy',
    listeners: [
      { name: 'health', port: 15021 },
      { name: 'status', port: 15020 },
    ],
    ready: { listener: 0, path: '/healthz/ready' },
    quit: { listener: 1, path: '/quitquitquit' },
    enableQuit: 'always on',
    rejectHints: {
      403: 'pilot-agent accepts a quit only from a loopback address',
      404: 'check the path: pilot-agent listens for /quitquitquit on 15020',
      405: 'the quit endpoint takes POST only',
    },
    docs: '(always on)',
    forJobs: 'native sidecar (`sidecar.istio.io/nativeSidecar: "true"`, Istio 1.24+ on Kubernetes 1.29+), else POST /quitquitquit on 15020',
  },
  {
    name: 'linkerd',
    label: 'linkerd-proxy',
    listeners: [{ name: 'admin', port: 4191 }],
    ready: { listener: 0, path: '/ready' },
    quit: { listener: 0, path: '/shutdown' },
    notEnabled: (attempt) => attempt.kind === 'response' && attempt.status >= 400 && /not enabled/i.test(attempt.body),
    enableQuit: 'pod annotation config.linkerd.io/proxy-admin-shutdown: enabled',
    rejectHints: {
      403: 'linkerd-proxy accepts a shutdown only from a loopback address',
      405: 'the shutdown endpoint takes POST only',
    },
    docs: 'an error saying the endpoint is not enabled',
    forJobs:
      'native sidecar (`config.linkerd.io/proxy-enable-native-sidecar: "true"`), else `config.linkerd.io/proxy-admin-shutdown: enabled` and POST /shutdown',
  },
  {
    name: 'cloud-sql-proxy',
    label: 'cloud-sql-proxy',
    ...AUTH_PROXY,
    readyHint: 'the Cloud SQL proxy answers /startup only with --health-check',
    gaveUpHint: 'the Cloud SQL proxy listens for /quitquitquit only with --quitquitquit',
    forJobs:
      'native sidecar (initContainers, `restartPolicy: Always`), else `--quitquitquit` (and `--health-check`) and POST /quitquitquit',
  },
  {
    name: 'alloydb-auth-proxy',
    label: 'alloydb-auth-proxy',
    ...AUTH_PROXY,
    readyHint: 'the AlloyDB proxy answers /startup only with --health-check',
    gaveUpHint: 'the AlloyDB proxy listens for /quitquitquit only with --quitquitquit',
    forJobs: 'native sidecar, else `--quitquitquit` (and `--health-check`) and POST /quitquitquit',
  },
  {
    name: 'vault-agent',
    label: 'vault-agent',
    listeners: [{ name: 'agent', port: 8200 }],
    quit: { listener: 0, path: '/agent/v1/quit' },
    notEnabled: (attempt) => answered(attempt, 404, /.*/s),
    enableQuit: 'pod annotation vault.hashicorp.com/agent-enable-quit: "true"',
    docs: '404',
    forJobs:
      '`vault.hashicorp.com/agent-pre-populate-only: "true"` (no sidecar), else `vault.hashicorp.com/agent-enable-quit: "true"` and POST /agent/v1/quit',
  },
  {
    name: 'dapr',
    label: 'daprd',
    listeners: [{ name: 'http', port: 3500 }],
    ready: { listener: 0, path: '/v1.0/healthz/outbound' },
    quit: { listener: 0, path: '/v1.0/shutdown' },
    enableQuit: 'always on',
    docs: '(always on)',
    forJobs: 'POST /v1.0/shutdown when the job is done (Dapr\'s "Kubernetes Jobs" docs)',
  },
  {
    name: 'consul-dataplane',
    label: 'consul-dataplane',
    listeners: [{ name: 'lifecycle', port: 20600 }],
    ready: { listener: 0, path: '/graceful_startup' },
    quit: { listener: 0, path: '/graceful_shutdown' },
    enableQuit: 'pod annotation consul.hashicorp.com/enable-sidecar-proxy-lifecycle: "true" (the default)',
    docs: '(lifecycle off: nothing listens)',
    forJobs: 'the proxy lifecycle (on by default) and POST /graceful_shutdown on port 20600',
  },
] as const satisfies readonly SidecarKind[];

export type KindName = (typeof SIDECAR_KINDS)[number]['name'];
/** The kinds `--also` names: every one but Istio, which `--sidecar` governs. */
export type OtherKindName = Exclude<KindName, 'istio'>;

export const KIND_NAMES: readonly KindName[] = SIDECAR_KINDS.map((kind) => kind.name);
export const OTHER_KIND_NAMES = KIND_NAMES.filter((name): name is OtherKindName => name !== 'istio');

export function kindNamed(name: KindName): SidecarKind {
  return SIDECAR_KINDS.find((kind) => kind.name === name) as SidecarKind;
}

/** A quit URL that is not one of a known kind's (scuttle's GENERIC_QUIT_ENDPOINTS, a second --quit-url). */
export const GENERIC_KIND: SidecarKind = {
  name: 'generic',
  label: 'proxy',
  listeners: [],
  quit: { listener: 0, path: '/' },
  enableQuit: 'its own configuration',
  forJobs: '',
  docs: '',
};
