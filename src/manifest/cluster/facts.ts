// What a cluster's own objects say about the sidecars its Jobs get, read from what `kubectl get -o json` prints,
// as plain data: each node's kubelet, each istiod (its revision, version and ENABLE_NATIVE_SIDECARS), each Linkerd
// install (the linkerd-config ConfigMap: its version and proxy.nativeSidecar), each cloud-sql-proxy-operator, and
// the namespaces' labels and annotations. Nothing here decides a sidecar's mode: the profile model does, from these.

import { parse } from 'yaml';
import type { Version } from '../../config/profile.ts';

/** An object of a list as kubectl prints it; only the fields read here are typed. */
export interface KubeObject {
  readonly kind?: string;
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly ownerReferences?: readonly { readonly kind?: string; readonly name?: string }[];
  };
  readonly [field: string]: unknown;
}

/** MAJOR.MINOR at the start of a kubelet's version (`v1.32.9-gke.1080000`, `1.33.1+k3s1`, `1.28`); undefined if none. */
export function minorOf(version: string): Version | undefined {
  const match = /^v?(\d+)\.(\d+)(?:[.+-]|$)/.exec(version.trim());
  return match === null ? undefined : [Number(match[1]), Number(match[2])];
}

const compare = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1];

const nameOf = (object: KubeObject): string => object.metadata?.name ?? '?';
const namespaceOf = (object: KubeObject): string => object.metadata?.namespace ?? 'default';
const record = (value: unknown): Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const array = (value: unknown): readonly unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** A node's kubelet: `status.nodeInfo.kubeletVersion` as written, and its minor version where it has one. */
export interface Kubelet {
  readonly node: string;
  readonly version: string;
  readonly minor?: Version;
}

export function kubeletsOf(nodes: readonly KubeObject[]): Kubelet[] {
  return nodes.map((node) => {
    const version = text(record(record(node.status).nodeInfo).kubeletVersion) ?? '';
    const minor = minorOf(version);
    return { node: nameOf(node), version, ...(minor === undefined ? {} : { minor }) };
  });
}

/** The node whose kubelet is the oldest minor (the first by name among equals); undefined with none readable. */
export function oldestKubelet(kubelets: readonly Kubelet[]): (Kubelet & { readonly minor: Version }) | undefined {
  const readable = kubelets.filter((kubelet): kubelet is Kubelet & { minor: Version } => kubelet.minor !== undefined);
  return readable.sort((a, b) => compare(a.minor, b.minor) || a.node.localeCompare(b.node))[0];
}

/** An image reference's tag, its digest left out: `docker.io/istio/pilot:1.28.1-distroless@sha256:...` -> `1.28.1-distroless`. */
export function imageTag(image: string): string | undefined {
  const withoutDigest = image.split('@', 1)[0] as string;
  const last = withoutDigest.slice(withoutDigest.lastIndexOf('/') + 1);
  const colon = last.indexOf(':');
  return colon < 0 ? undefined : last.slice(colon + 1);
}

/** An image's repository name, its last path part: `gcr.io/cloud-sql-connectors/cloud-sql-proxy-operator:1.7.0` -> `cloud-sql-proxy-operator`. */
const repositoryName = (image: string): string => {
  const withoutDigest = image.split('@', 1)[0] as string;
  const last = withoutDigest.slice(withoutDigest.lastIndexOf('/') + 1);
  return last.split(':', 1)[0] as string;
};

/** MAJOR.MINOR.PATCH of a release tag (`1.28.1`, `v1.7.0`, `1.28.1-distroless`); undefined for any other tag. */
export function releaseOf(tag: string | undefined): string | undefined {
  return tag === undefined ? undefined : /^v?(\d+\.\d+(?:\.\d+)?)(?:[-+].*)?$/.exec(tag)?.[1];
}

interface Container {
  readonly name: string;
  readonly image: string;
  readonly env: readonly { readonly name?: string; readonly value?: string; readonly valueFrom?: unknown }[];
}

function containersOf(deployment: KubeObject): Container[] {
  const spec = record(record(record(deployment.spec).template).spec);
  return array(spec.containers).map((raw) => {
    const container = record(raw);
    return {
      name: text(container.name) ?? '',
      image: text(container.image) ?? '',
      env: array(container.env).map((entry) => record(entry) as Container['env'][number]),
    };
  });
}

/** How an install's environment sets a variable: a value, one read from elsewhere (a ConfigMap, a Secret), or not at all. */
export type EnvSetting = { readonly value: string } | { readonly from: 'valueFrom' } | undefined;

function envSetting(container: Container, name: string): EnvSetting {
  const entry = [...container.env].reverse().find((candidate) => candidate.name === name);
  if (entry === undefined) return undefined;
  return entry.valueFrom !== undefined ? { from: 'valueFrom' } : { value: entry.value ?? '' };
}

/** An istiod: the revision it injects for (`istio.io/rev`, `default` unless told), its release, its ENABLE_NATIVE_SIDECARS. */
export interface Istiod {
  readonly namespace: string;
  readonly name: string;
  readonly revision: string;
  readonly image: string;
  readonly version?: string;
  readonly nativeSidecars: EnvSetting;
}

/** The variable of istiod that says whether it injects native sidecars (istio pilot/pkg/features/pilot.go). */
export const ISTIO_NATIVE_VARIABLE = 'ENABLE_NATIVE_SIDECARS';

/**
 * The istiod Deployments among DEPLOYMENTS: labelled `app: istiod`, as Istio's istio-discovery chart labels them;
 * the container `discovery` (the pilot image) holds the version in its tag and the variable in its environment.
 */
export function istiodsOf(deployments: readonly KubeObject[]): Istiod[] {
  return deployments
    .filter((deployment) => deployment.metadata?.labels?.app === 'istiod')
    .map((deployment) => {
      const containers = containersOf(deployment);
      const discovery = containers.find((container) => container.name === 'discovery') ?? containers[0];
      const version = releaseOf(imageTag(discovery?.image ?? ''));
      return {
        namespace: namespaceOf(deployment),
        name: nameOf(deployment),
        revision: deployment.metadata?.labels?.['istio.io/rev'] ?? 'default',
        image: discovery?.image ?? '',
        ...(version === undefined ? {} : { version }),
        nativeSidecars: discovery === undefined ? undefined : envSetting(discovery, ISTIO_NATIVE_VARIABLE),
      };
    });
}

/** A Linkerd install, from its linkerd-config ConfigMap: `data.values` holds the Helm values it was installed with. */
export interface LinkerdInstall {
  readonly namespace: string;
  /** `linkerdVersion` as written: `enterprise-2.20.0`, `stable-2.14.10`, `edge-26.5.2`. */
  readonly version?: string;
  /** `proxy.nativeSidecar`; undefined where the values do not hold it (a release before the key). */
  readonly nativeSidecar?: boolean;
  /** Why the values could not be read, where they could not. */
  readonly problem?: string;
}

export function linkerdOf(configMaps: readonly KubeObject[]): LinkerdInstall[] {
  return configMaps
    .filter((configMap) => nameOf(configMap) === 'linkerd-config')
    .map((configMap) => {
      const namespace = namespaceOf(configMap);
      const raw = text(record(configMap.data).values);
      if (raw === undefined) return { namespace, problem: 'its data has no `values`' };
      let values: Readonly<Record<string, unknown>>;
      try {
        values = record(parse(raw));
      } catch (error) {
        return { namespace, problem: `its \`values\` are not YAML (${(error as Error).message.split('\n', 1)[0]})` };
      }
      const version = text(values.linkerdVersion);
      const native = record(values.proxy).nativeSidecar;
      return {
        namespace,
        ...(version === undefined || version === '' ? {} : { version }),
        ...(typeof native === 'boolean' ? { nativeSidecar: native } : {}),
      };
    });
}

/** The 2.x release of a Linkerd version (`enterprise-2.20.0`, `stable-2.14.10`, `2.20.1` -> `2.20`); undefined for an edge release. */
export function linkerdRelease(version: string | undefined): string | undefined {
  return version === undefined ? undefined : /^(?:(?:stable|enterprise)-)?v?(2\.\d+)(?:\.\d+)?$/.exec(version)?.[1];
}

/** A cloud-sql-proxy-operator: its Deployment and the release of its image. */
export interface OperatorInstall {
  readonly namespace: string;
  readonly name: string;
  readonly image: string;
  readonly version?: string;
}

/** The operator's image, whatever the registry (gcr.io/cloud-sql-connectors/cloud-sql-proxy-operator). */
const OPERATOR_IMAGE = 'cloud-sql-proxy-operator';

export function operatorsOf(deployments: readonly KubeObject[]): OperatorInstall[] {
  return deployments.flatMap((deployment) => {
    const manager = containersOf(deployment).find((container) => repositoryName(container.image) === OPERATOR_IMAGE);
    if (manager === undefined) return [];
    const version = releaseOf(imageTag(manager.image));
    return [
      { namespace: namespaceOf(deployment), name: nameOf(deployment), image: manager.image, ...(version === undefined ? {} : { version }) },
    ];
  });
}

/** A namespace's name, labels and annotations: what the injectors read of it. */
export interface NamespaceFacts {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

export function namespacesOf(namespaces: readonly KubeObject[]): NamespaceFacts[] {
  return namespaces.map((namespace) => ({
    name: nameOf(namespace),
    labels: namespace.metadata?.labels ?? {},
    annotations: namespace.metadata?.annotations ?? {},
  }));
}
