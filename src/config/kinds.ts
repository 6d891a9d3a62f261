// The classic sidecars the wrapper knows, one row each, Istio first: where each answers readiness, where it is
// told to stop, how an answer says "stopping is not enabled", how its injector marks a pod's annotations, and
// the text of the README's table about it. Facts from each project's source (the README's Sidecars section
// names the projects); nothing else repeats them.

import type { Attempt } from '../http/attempt.ts';

/** One listener of a sidecar: its default port, and what a port given in `--also NAME:PORT` stands for. */
interface Listener {
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
  /** How its injector marks a pod: read from the pod's annotations, when it leaves any. */
  readonly fromAnnotations?: (pod: PodAnnotations) => Finding | undefined;
  /** How a pod template shows it, for --check and --inject (src/manifest/pod/sidecars.ts reads these). */
  readonly template: TemplateMarkers;
  /** The install that injects it, which a cluster profile names (`--mesh NAME=VERSION`): src/config/profile.ts reads it. */
  readonly install?: Install;
  /** The README's table, beside what the listeners and paths say. */
  readonly docs: {
    /** Said after the readiness URL, or instead of it when there is none. */
    readonly waits?: string;
    /** What an answer looks like when stopping is not enabled. */
    readonly notEnabled: string;
    /** How the sidecar's own project wants it set up for a Job. */
    readonly forJobs: string;
  };
}

/**
 * How an install of a kind (its injector, named by `--mesh NAME=VERSION[:native|classic]`) chooses the form of the
 * sidecar it adds when the pod does not say: native by default from release `from` (X.Y), where every kubelet is at
 * `nodes` or newer (a lower bound of the API server's version too); never without `from`, which also means no
 * install-wide setting makes it native. `source` names the file and function the rule follows.
 */
interface Install {
  readonly name: string;
  readonly from?: string;
  readonly nodes?: string;
  /** The source the rule follows: a file and function, or the open request for a native mode. */
  readonly source: string;
}

/** Kubernetes' native sidecars (KEP-753), on by default from 1.29 (beta): the oldest kubelet that runs them. */
export const NATIVE_SIDECARS_FROM = '1.29';

/** What an injector makes of one setting's value: on, off, its default (unset or ignored), or a pod it refuses. */
export type Setting = 'on' | 'off' | 'unset' | 'refused';

/**
 * How an injector reads one setting: the values it takes as on, as off and as unset (exactly, or lower-cased first
 * when it folds, and trimmed first when it trims), and what it makes of any other value.
 */
export interface Reading {
  readonly on: readonly string[];
  readonly off: readonly string[];
  readonly unset?: readonly string[];
  readonly folds?: boolean;
  readonly trims?: boolean;
  readonly otherwise: Setting;
}

/**
 * Unicode's white space at either end, which Go's strings.TrimSpace takes off (and CEL's trim): not JavaScript's
 * trim(), which leaves U+0085 and takes off U+FEFF.
 */
const GO_SPACE_CLASS = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const GO_SPACE = new RegExp(`^${GO_SPACE_CLASS}+|${GO_SPACE_CLASS}+$`, 'g');

/** What an injector reading this way makes of VALUE; undefined (the key is absent) is unset. */
export function readSetting(reading: Reading, value: string | undefined): Setting {
  if (value === undefined) return 'unset';
  const trimmed = reading.trims === true ? value.replace(GO_SPACE, '') : value;
  const key = reading.folds === true ? trimmed.toLowerCase() : trimmed;
  if (reading.on.includes(key)) return 'on';
  if (reading.off.includes(key)) return 'off';
  if (reading.unset?.includes(key) === true) return 'unset';
  return reading.otherwise;
}

/** Whether a setting is on, its default standing for unset (and for a value the injector refuses the pod for). */
export const settingOn = (reading: Reading, value: string | undefined, byDefault = false): boolean => {
  const setting = readSetting(reading, value);
  return setting === 'unset' || setting === 'refused' ? byDefault : setting === 'on';
};

/**
 * Go's strconv.ParseBool, case as written; the injector refuses the pod for any other value, "" too: consul-k8s
 * control-plane/connect-inject/webhook/mesh_webhook.go, (*MeshWebhook).shouldInject, reads
 * consul.hashicorp.com/connect-inject so.
 */
const PARSE_BOOL: Reading = {
  on: ['true', '1', 't', 'T', 'TRUE', 'True'],
  off: ['false', '0', 'f', 'F', 'FALSE', 'False'],
  otherwise: 'refused',
};
/**
 * consul-k8s control-plane/connect-inject/lifecycle/lifecycle_configuration.go, (Config).EnableProxyLifecycle: an
 * empty value keeps the injector's default; any other is strconv.ParseBool's, and one it cannot parse fails the pod.
 */
const CONSUL_LIFECYCLE_READING: Reading = { ...PARSE_BOOL, unset: [''] };
/**
 * vault-k8s agent-inject/agent/agent.go, ShouldInject (and annotations.go, getEnableQuit and prePopulateOnly): go-secure-
 * stdlib's parseutil.ParseBool, strconv.ParseBool with "" false; a value it cannot parse fails the pod.
 */
const VAULT_BOOL: Reading = { ...PARSE_BOOL, off: [...PARSE_BOOL.off, ''] };
/**
 * dapr pkg/injector/patcher/sidecar.go, setValueFromString: a bool annotation (dapr.io/enabled) is dapr/kit
 * utils/strings.go, IsTruthy: trimmed, any case, "y", "yes", "true", "t", "on", "1"; every other value is false.
 */
const DAPR_TRUTHY: Reading = { on: ['true', 'y', 'yes', 't', 'on', '1'], off: [], trims: true, folds: true, otherwise: 'off' };
/**
 * istio pkg/kube/inject/inject.go, injectRequired: the label sidecar.istio.io/inject beats the annotation (the
 * first found decides, empty or not); its value lower-cased, not trimmed: "y", "yes", "true", "on" inject; ""
 * leaves it to the namespace's policy; any other value ("false", "no", "enabled") means no injection.
 */
const ISTIO_INJECT: Reading = { on: ['y', 'yes', 'true', 'on'], off: [], unset: [''], folds: true, otherwise: 'off' };
/**
 * istio manifests/charts/istio-control/istio-discovery/files/injection-template.yaml, `$nativeSidecar`: the
 * annotation, "" standing for the mesh's setting, is native unless it is "false" exactly.
 */
const ISTIO_NATIVE: Reading = { on: ['true'], off: ['false'], unset: [''], otherwise: 'on' };
/**
 * linkerd2 pkg/inject/report.go, (*Report).disabledByAnnotation: the pod annotation linkerd.io/inject (never a
 * label) as written: "enabled" and "ingress" inject, "" leaves it to the namespace's, and "disabled" or an invalid
 * value means no injection.
 */
const LINKERD_INJECT: Reading = { on: ['enabled', 'ingress'], off: ['disabled'], unset: [''], otherwise: 'off' };
/**
 * linkerd2 pkg/inject/inject.go, ApplyAnnotationOverrides (config.linkerd.io/proxy-admin-shutdown): "enabled" or
 * "disabled" as written; another value is warned about and ignored.
 */
const LINKERD_ENABLED: Reading = { on: ['enabled'], off: ['disabled'], otherwise: 'unset' };
/**
 * linkerd2 pkg/inject/inject.go, ApplyAnnotationOverrides (the proxy-enable-native-sidecar keys, the first found):
 * strconv.ParseBool, a value it cannot parse ignored.
 */
const LINKERD_BOOL: Reading = { ...PARSE_BOOL, otherwise: 'unset' };

/**
 * A boolean flag of a Go program (flag, pflag) among WORDS: the last `--flag` or `--flag=VALUE` decides, VALUE read
 * by strconv.ParseBool (any other stops the program); unset when the flag is not there. The Cloud SQL and AlloyDB
 * Auth Proxies declare --quitquitquit and --health-check so (cloud-sql-proxy cmd/root.go, pflag BoolVar).
 */
export function readBoolFlag(words: readonly string[], flag: string): Setting {
  let setting: Setting = 'unset';
  for (const word of words) {
    if (word === flag) setting = 'on';
    else if (word.startsWith(`${flag}=`)) setting = readSetting(PARSE_BOOL, word.slice(flag.length + 1));
  }
  return setting;
}

/** The words that leave a boolean flag on where they are its last (readBoolFlag): the flag alone, or with a true value. */
export const flagOnWords = (flag: string): string[] => [flag, ...PARSE_BOOL.on.map((value) => `${flag}=${value}`)];

/** The flags of a declared container that --inject switches on where they are unset: its quit's and its readiness's. */
export const switchFlags = (kind: SidecarKind): string[] => {
  const { quitSwitch, readySwitch } = kind.template;
  return [
    ...(typeof quitSwitch === 'object' && 'flag' in quitSwitch ? [quitSwitch.flag] : []),
    ...(readySwitch === undefined ? [] : [readySwitch.flag]),
  ];
};

/** The setting of the first of KEYS present, as READING reads it; unset when none is. */
export function readFirst(keys: readonly string[], reading: Reading, get: (key: string) => string | undefined): Setting {
  const key = keys.find((candidate) => get(candidate) !== undefined);
  return key === undefined ? 'unset' : readSetting(reading, get(key));
}

/**
 * How a pod template shows a sidecar of this kind before any injector ran: the labels and annotations its
 * injector reads, the annotations that make it native, what switches its quit on, or a declared container.
 */
interface TemplateMarkers {
  /** Pod-template labels, then annotations, that ask for injection; the first one present decides. */
  readonly inject?: { readonly labels: readonly string[]; readonly annotations: readonly string[]; readonly reading: Reading };
  /** A label whose presence asks for injection by a revision (Istio's istio.io/rev). */
  readonly revisionLabel?: string;
  /** An annotation written by the injector itself: the pod is already injected. */
  readonly injectedAnnotation?: string;
  /**
   * Annotations that make the injected sidecar native when on: the first one present decides. SINCE: the first
   * release whose injector reads the first key (what --inject writes). FROM_NAMESPACE: the injector copies those of
   * the pod's namespace that the pod does not have onto it first, so a namespace's key counts as the pod's.
   */
  readonly native?: {
    readonly keys: readonly string[];
    readonly reading: Reading;
    readonly since: string;
    readonly fromNamespace?: boolean;
  };
  /** An annotation that, on, means the injector adds only an init container, no sidecar. */
  readonly initOnly?: { readonly annotation: string; readonly reading: Reading };
  /**
   * The annotation domains of the sidecar's own settings (`proxy.istio.io/config`, `traffic.sidecar.istio.io/...`):
   * a template that sets one expects the sidecar, which its namespace injects, unless it says no.
   */
  readonly settings?: readonly string[];
  /**
   * What on a namespace makes its injector add the sidecar to the pods there (a label, or an annotation, with one
   * of VALUES or any value; not where UNLESS is a label of the namespace): the admission policy reads these, where
   * --check and --inject are told by --injected-namespaces.
   */
  readonly namespace?: readonly {
    readonly label?: string;
    readonly annotation?: string;
    readonly values?: readonly string[];
    readonly unless?: string;
  }[];
  /**
   * A label of the template whose value, exactly as written, says the mesh reaches the pod without a sidecar (Istio's
   * ambient mode: istio.io/dataplane-mode compared as it is, never trimmed or folded; as an annotation it says nothing).
   */
  readonly sidecarless?: { readonly label: string; readonly value: string };
  /** The flag of the declared container that makes its readiness endpoint answer (the auth proxies' --health-check). */
  readonly readySwitch?: { readonly flag: string };
  /** What switches the quit endpoint on: always, an annotation (on, or unset when on by default), or a flag of the declared container. */
  readonly quitSwitch:
    | 'always'
    | { readonly annotation: string; readonly reading: Reading; readonly byDefault: boolean }
    | { readonly flag: string };
  /** The methods its quit endpoint acts on (others answer 405 or 400 and stop nothing); undefined: any. */
  readonly quitMethods?: readonly string[];
  /** Where the pod moves the quit listener's port: an annotation, or a flag of the declared container. */
  readonly quitPort?: { readonly annotation: string } | { readonly flag: string };
  /** A container the user declares: its image's repository name or its program name. */
  readonly container?: { readonly images: readonly string[]; readonly programs: readonly string[] };
  /** Its processes' names, as `pkill` finds them in a pod that shares its process namespace. */
  readonly processes: readonly string[];
  /** Programs of an older release that has no quit endpoint at all (the Cloud SQL proxy's v1). */
  readonly noQuitPrograms?: readonly string[];
  /** A variable of the pod's environment holding the quit URLs, which scripts loop over and send to (an operator's). */
  readonly quitUrlsVariable?: string;
  /**
   * Image repositories of that release, for a container whose command does not name the program (`args:` only, or
   * flags only): gcr.io/cloudsql-docker/gce-proxy is the Cloud SQL proxy's v1 image.
   */
  readonly noQuitImages?: readonly string[];
}

/**
 * The words that make a loopback path a quit of some sidecar where no kind's quit path matches it (a port no
 * sidecar of the pod has): --check and --inject read a request so, and --admission-policy a container's words.
 */
export const QUIT_WORDS = ['quit', 'kill', 'shutdown', 'exit', 'stop', 'terminate'] as const;

/** The pod's annotations as a kind's rule reads them. */
export interface PodAnnotations {
  get(key: string): string | undefined;
  /** Whether the value, trimmed and lower-cased, is `value`. */
  is(key: string, value: string): boolean;
}

/**
 * What a kind's rule found: a sidecar to wait for and stop (on the port an annotation names, if one does, and
 * with paths the annotations give), or only a line to say.
 */
export type Finding =
  | {
      readonly kind: 'sidecar';
      /** The annotation holding the port of the kind's first listener. */
      readonly portAnnotation?: string;
      readonly paths?: { readonly ready?: string; readonly quit?: string };
    }
  | { readonly kind: 'note'; readonly level: 'debug' | 'info' | 'warn'; readonly message: string };

const note = (level: 'debug' | 'info' | 'warn', message: string): Finding => ({ kind: 'note', level, message });

const answered = (attempt: Attempt, status: number, says: RegExp): boolean =>
  attempt.kind === 'response' && attempt.status === status && says.test(attempt.body);

/** The first one present decides (Linkerd's GA key over beta over alpha). */
const LINKERD_NATIVE = ['config.linkerd.io', 'config.beta.linkerd.io', 'config.alpha.linkerd.io'].map(
  (prefix) => `${prefix}/proxy-enable-native-sidecar`,
);
const LINKERD_SHUTDOWN = 'config.linkerd.io/proxy-admin-shutdown';
const VAULT_STATUS = 'vault.hashicorp.com/agent-inject-status';
const VAULT_PRE_POPULATE_ONLY = 'vault.hashicorp.com/agent-pre-populate-only';
const VAULT_ENABLE_QUIT = 'vault.hashicorp.com/agent-enable-quit';
const VAULT_PORT = 'vault.hashicorp.com/agent-cache-listener-port';
const DAPR_ENABLED = 'dapr.io/enabled';
const DAPR_PORT = 'dapr.io/http-port';
const CONSUL_STATUS = 'consul.hashicorp.com/connect-inject-status';
const CONSUL_LIFECYCLE = 'consul.hashicorp.com/enable-sidecar-proxy-lifecycle';
const CONSUL_GRACEFUL = 'consul.hashicorp.com/sidecar-proxy-lifecycle-graceful';

/** A path from an annotation, with the leading slash it may lack; blank: none. */
const absolutePath = (raw: string | undefined): string | undefined =>
  raw === undefined || raw.trim() === '' ? undefined : raw.startsWith('/') ? raw : `/${raw}`;

/** Google's Cloud SQL and AlloyDB Auth Proxies share their health and admin servers. */
const AUTH_PROXY = {
  listeners: [
    { name: 'http', port: 9090 },
    { name: 'admin', port: 9091 },
  ],
  ready: { listener: 0, path: '/startup' },
  quit: { listener: 1, path: '/quitquitquit' },
  enableQuit: 'the proxy flag --quitquitquit',
} as const;

export const SIDECAR_KINDS = [
  {
    name: 'istio',
    template: {
      inject: { labels: ['sidecar.istio.io/inject'], annotations: ['sidecar.istio.io/inject'], reading: ISTIO_INJECT },
      revisionLabel: 'istio.io/rev',
      injectedAnnotation: 'sidecar.istio.io/status',
      native: { keys: ['sidecar.istio.io/nativeSidecar'], reading: ISTIO_NATIVE, since: '1.24' },
      settings: ['sidecar.istio.io', 'proxy.istio.io'],
      // Istio's injection webhooks (manifests/charts/istio-control/istio-discovery/templates/mutatingwebhook.yaml).
      namespace: [
        { label: 'istio-injection', values: ['enabled'] },
        { label: 'istio.io/rev', unless: 'istio-injection' },
      ],
      sidecarless: { label: 'istio.io/dataplane-mode', value: 'ambient' },
      quitSwitch: 'always',
      quitMethods: ['POST'],
      quitPort: { annotation: 'status.sidecar.istio.io/port' },
      processes: ['pilot-agent', 'envoy'],
    },
    install: {
      name: 'istio',
      from: '1.27',
      nodes: '1.33',
      source:
        'istio pkg/kube/inject/webhook.go, detectNativeSidecar: ENABLE_NATIVE_SIDECARS "auto" (the default from 1.27, ' +
        'pilot/pkg/features/pilot.go) is native only when every node\'s kubelet is 1.33+; "true" or "false" decides alone',
    },
    label: 'proxy',
    listeners: [
      { name: 'health', port: 15021 },
      { name: 'status', port: 15020 },
      // Envoy's own admin port: a quit there stops Envoy, not pilot-agent (--check warns of it).
      { name: 'envoy-admin', port: 15000 },
    ],
    ready: { listener: 0, path: '/healthz/ready' },
    quit: { listener: 1, path: '/quitquitquit' },
    enableQuit: 'always on',
    rejectHints: {
      403: 'pilot-agent accepts a quit only from a loopback address',
      404: 'check the path: pilot-agent listens for /quitquitquit on 15020',
      405: 'the quit endpoint takes POST only',
    },
    docs: {
      notEnabled: '(always on)',
      forJobs: 'native sidecar (`sidecar.istio.io/nativeSidecar: "true"`, Istio 1.24+ on Kubernetes 1.29+), else the quit',
    },
  },
  {
    name: 'linkerd',
    template: {
      inject: { labels: [], annotations: ['linkerd.io/inject'], reading: LINKERD_INJECT },
      injectedAnnotation: 'linkerd.io/proxy-version',
      // linkerd2 pkg/inject/inject.go, AppendNamespaceAnnotations: the namespace's config keys a pod lacks are added to it.
      native: { keys: LINKERD_NATIVE, reading: LINKERD_BOOL, since: '2.20', fromNamespace: true },
      settings: ['config.linkerd.io', 'config.alpha.linkerd.io', 'config.beta.linkerd.io'],
      // The proxy injector reads linkerd.io/inject on the pod, else on its namespace.
      namespace: [{ annotation: 'linkerd.io/inject', values: LINKERD_INJECT.on }],
      quitSwitch: { annotation: LINKERD_SHUTDOWN, reading: LINKERD_ENABLED, byDefault: false },
      quitMethods: ['POST'],
      processes: ['linkerd2-proxy'],
    },
    install: {
      name: 'linkerd',
      from: '2.20',
      source:
        'linkerd2 charts/linkerd-control-plane/values.yaml, proxy.nativeSidecar (true from 2.20, with no node check), ' +
        'which pkg/inject/inject.go, ApplyAnnotationOverrides, lets the first native key present override',
    },
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
    fromAnnotations: (pod) => {
      if (pod.get('linkerd.io/proxy-version') === undefined) return undefined;
      if (readFirst(LINKERD_NATIVE, LINKERD_BOOL, (key) => pod.get(key)) === 'on') {
        const native = LINKERD_NATIVE.find((key) => pod.get(key) !== undefined);
        return note('info', `linkerd-proxy is a native sidecar (${native}: "${pod.get(native ?? '')}"): leaving it to Kubernetes`);
      }
      if (settingOn(LINKERD_ENABLED, pod.get(LINKERD_SHUTDOWN))) return { kind: 'sidecar' };
      return note(
        'warn',
        'the pod has a linkerd-proxy whose shutdown endpoint is not enabled: the pod will not complete after the job. ' +
          'Set the pod annotation config.linkerd.io/proxy-admin-shutdown: enabled (or make it a native sidecar ' +
          'with config.linkerd.io/proxy-enable-native-sidecar: "true")',
      );
    },
    docs: {
      notEnabled: 'an error saying the endpoint is not enabled',
      forJobs:
        'native sidecar (`config.linkerd.io/proxy-enable-native-sidecar: "true"`), else `config.linkerd.io/proxy-admin-shutdown: enabled`',
    },
  },
  {
    name: 'cloud-sql-proxy',
    template: {
      quitSwitch: { flag: '--quitquitquit' },
      readySwitch: { flag: '--health-check' },
      quitMethods: ['GET', 'POST'],
      quitPort: { flag: '--admin-port' },
      container: { images: ['cloud-sql-proxy', 'gce-proxy', 'cloudsql-proxy'], programs: ['cloud-sql-proxy', 'cloud_sql_proxy'] },
      noQuitPrograms: ['cloud_sql_proxy'],
      noQuitImages: ['gce-proxy'],
      processes: ['cloud-sql-proxy', 'cloud_sql_proxy'],
      quitUrlsVariable: 'CSQL_PROXY_QUIT_URLS',
    },
    install: {
      name: 'cloud-sql-proxy-operator',
      from: '1.6',
      nodes: NATIVE_SIDECARS_FROM,
      source:
        'cloud-sql-proxy-operator internal/controller/setup.go, UseSidecar (release 1.6): the proxy goes in initContainers ' +
        'with restartPolicy: Always whenever the API server is 1.29+',
    },
    label: 'cloud-sql-proxy',
    ...AUTH_PROXY,
    readyHint: 'the Cloud SQL proxy answers /startup only with --health-check',
    gaveUpHint: 'the Cloud SQL proxy listens for /quitquitquit only with --quitquitquit',
    docs: {
      waits: '(needs `--health-check`)',
      notEnabled: 'the admin port refuses (no `--quitquitquit`)',
      forJobs: 'native sidecar (initContainers, `restartPolicy: Always`), else `--quitquitquit`',
    },
  },
  {
    name: 'alloydb-auth-proxy',
    template: {
      quitSwitch: { flag: '--quitquitquit' },
      readySwitch: { flag: '--health-check' },
      quitMethods: ['GET', 'POST'],
      quitPort: { flag: '--admin-port' },
      container: { images: ['alloydb-auth-proxy'], programs: ['alloydb-auth-proxy'] },
      processes: ['alloydb-auth-proxy'],
    },
    label: 'alloydb-auth-proxy',
    ...AUTH_PROXY,
    readyHint: 'the AlloyDB proxy answers /startup only with --health-check',
    gaveUpHint: 'the AlloyDB proxy listens for /quitquitquit only with --quitquitquit',
    docs: {
      waits: '(needs `--health-check`)',
      notEnabled: 'the admin port refuses',
      forJobs: 'native sidecar, else `--quitquitquit`',
    },
  },
  {
    name: 'vault-agent',
    template: {
      inject: { labels: [], annotations: ['vault.hashicorp.com/agent-inject'], reading: VAULT_BOOL },
      injectedAnnotation: VAULT_STATUS,
      initOnly: { annotation: VAULT_PRE_POPULATE_ONLY, reading: VAULT_BOOL },
      quitSwitch: { annotation: VAULT_ENABLE_QUIT, reading: VAULT_BOOL, byDefault: false },
      quitMethods: ['POST'],
      quitPort: { annotation: VAULT_PORT },
      processes: ['vault'],
    },
    install: { name: 'vault-agent', source: 'no native mode: vault-k8s adds a regular container (hashicorp/vault-k8s issue 620, open)' },
    label: 'vault-agent',
    listeners: [{ name: 'agent', port: 8200 }],
    quit: { listener: 0, path: '/agent/v1/quit' },
    notEnabled: (attempt) => answered(attempt, 404, /.*/s),
    enableQuit: 'pod annotation vault.hashicorp.com/agent-enable-quit: "true"',
    fromAnnotations: (pod) => {
      if (!pod.is(VAULT_STATUS, 'injected')) return undefined;
      if (settingOn(VAULT_BOOL, pod.get(VAULT_PRE_POPULATE_ONLY))) {
        return note('debug', 'vault-agent is pre-populate only: no sidecar to stop');
      }
      if (settingOn(VAULT_BOOL, pod.get(VAULT_ENABLE_QUIT))) {
        return { kind: 'sidecar', portAnnotation: VAULT_PORT };
      }
      return note(
        'warn',
        'the pod has a vault-agent sidecar without its quit endpoint: the pod will not complete after the job. ' +
          'Set the pod annotation vault.hashicorp.com/agent-enable-quit: "true" (or ' +
          'vault.hashicorp.com/agent-pre-populate-only: "true" when the job needs no renewal)',
      );
    },
    docs: {
      waits: 'nothing (its init container fetched the secrets)',
      notEnabled: '404',
      forJobs: '`vault.hashicorp.com/agent-pre-populate-only: "true"` (no sidecar), else `vault.hashicorp.com/agent-enable-quit: "true"`',
    },
  },
  {
    name: 'dapr',
    template: {
      inject: { labels: [], annotations: [DAPR_ENABLED], reading: DAPR_TRUTHY },
      quitSwitch: 'always',
      quitMethods: ['POST'],
      quitPort: { annotation: DAPR_PORT },
      processes: ['daprd'],
    },
    install: { name: 'dapr', source: 'no native mode: the injector adds daprd as a regular container (dapr/dapr issue 9422, open)' },
    label: 'daprd',
    listeners: [{ name: 'http', port: 3500 }],
    ready: { listener: 0, path: '/v1.0/healthz/outbound' },
    quit: { listener: 0, path: '/v1.0/shutdown' },
    enableQuit: 'always on',
    fromAnnotations: (pod) => (settingOn(DAPR_TRUTHY, pod.get(DAPR_ENABLED)) ? { kind: 'sidecar', portAnnotation: DAPR_PORT } : undefined),
    docs: { notEnabled: '(always on)', forJobs: 'POST `/v1.0/shutdown` when the job is done' },
  },
  {
    name: 'consul-dataplane',
    template: {
      inject: { labels: [], annotations: ['consul.hashicorp.com/connect-inject'], reading: PARSE_BOOL },
      injectedAnnotation: CONSUL_STATUS,
      settings: ['consul.hashicorp.com'],
      quitSwitch: { annotation: CONSUL_LIFECYCLE, reading: CONSUL_LIFECYCLE_READING, byDefault: true },
      quitPort: { annotation: `${CONSUL_GRACEFUL}-port` },
      processes: ['consul-dataplane'],
    },
    install: {
      name: 'consul-dataplane',
      source: 'no native mode: consul-k8s adds consul-dataplane as a regular container (hashicorp/consul-k8s issue 3919, open)',
    },
    label: 'consul-dataplane',
    listeners: [{ name: 'lifecycle', port: 20600 }],
    ready: { listener: 0, path: '/graceful_startup' },
    quit: { listener: 0, path: '/graceful_shutdown' },
    enableQuit: 'pod annotation consul.hashicorp.com/enable-sidecar-proxy-lifecycle: "true" (the default)',
    fromAnnotations: (pod) => {
      if (!pod.is(CONSUL_STATUS, 'injected')) return undefined;
      const lifecycle = CONSUL_LIFECYCLE;
      if (!settingOn(CONSUL_LIFECYCLE_READING, pod.get(lifecycle), true))
        return note('info', `consul-dataplane has ${lifecycle}: "${pod.get(lifecycle)}": leaving it alone`);
      const prefix = CONSUL_GRACEFUL;
      const ready = absolutePath(pod.get(`${prefix}-startup-path`));
      const quit = absolutePath(pod.get(`${prefix}-shutdown-path`));
      return {
        kind: 'sidecar',
        portAnnotation: `${prefix}-port`,
        paths: { ...(ready === undefined ? {} : { ready }), ...(quit === undefined ? {} : { quit }) },
      };
    },
    docs: {
      notEnabled: '(lifecycle off: nothing listens)',
      forJobs: 'the proxy lifecycle (on by default), POST `/graceful_shutdown`',
    },
  },
] as const satisfies readonly SidecarKind[];

export type KindName = (typeof SIDECAR_KINDS)[number]['name'];
/** The kinds `--also` names: every one but Istio, which `--sidecar` governs. */
export type OtherKindName = Exclude<KindName, 'istio'>;

export const OTHER_KIND_NAMES: readonly OtherKindName[] = SIDECAR_KINDS.flatMap((kind) => (kind.name === 'istio' ? [] : [kind.name]));

export const ISTIO: SidecarKind = SIDECAR_KINDS[0];

/** Where an endpoint of a kind answers in the pod: loopback, on the listener's default port. */
export const endpointUrl = (kind: SidecarKind, endpoint: Endpoint): string =>
  `http://127.0.0.1:${kind.listeners[endpoint.listener]?.port ?? 0}${endpoint.path}`;

/** Istio's listeners by name: the status port (pilot-agent), the health port, Envoy's admin port. */
export const istioPort = (name: 'health' | 'status' | 'envoy-admin'): number =>
  ISTIO.listeners.find((listener) => listener.name === name)?.port ?? 0;

export function kindNamed(name: KindName): SidecarKind {
  return SIDECAR_KINDS.find((kind) => kind.name === name) ?? ISTIO;
}

/** The rules for a quit URL of no known kind: scuttle's GENERIC_QUIT_ENDPOINTS, POSTed as scuttle did. */
export const GENERIC_KIND: SidecarKind = {
  name: 'generic',
  label: 'proxy',
  listeners: [],
  quit: { listener: 0, path: '/' },
  enableQuit: 'its own configuration',
  template: { quitSwitch: 'always', processes: [] },
  docs: { notEnabled: '', forJobs: '' },
};

/** A URL to POST to stop a sidecar, with the kind whose rules read its answers: known where it is configured. */
export interface QuitTarget {
  readonly url: URL;
  readonly kind: SidecarKind;
}
