// The cluster profile as the cluster's own objects state it (`kubectl istio-job-run profile`): the oldest kubelet's
// minor version, and each install that injects sidecars with its release and install-wide setting, written as the
// config file (.istio-job-run.yaml) that --check, --inject and --admission-policy read. Each value carries a comment
// saying which object it was read from; what could not be read is said beside it, not guessed.

import { configText, type Mesh, type MeshSetting, type Profile, parseVersion, type Version } from '../../config/profile.ts';
import {
  type EnvSetting,
  type Istiod,
  ISTIO_NATIVE_VARIABLE,
  istiodsOf,
  type KubeObject,
  type Kubelet,
  kubeletsOf,
  linkerdOf,
  linkerdRelease,
  oldestKubelet,
  operatorsOf,
} from './facts.ts';
import type { Read } from './kubectl.ts';

/** What `profile` reads: the nodes, every Deployment (istiod, the operator), and any linkerd-config ConfigMap. */
export const PROFILE_READS: readonly Read[] = [
  { resource: 'nodes', group: '', scope: 'cluster', why: "the nodes (their kubelets' versions)" },
  { resource: 'deployments', group: 'apps', scope: 'all-namespaces', why: 'the Deployments (istiod, the cloud-sql-proxy-operator)' },
  {
    resource: 'configmaps',
    group: '',
    scope: 'all-namespaces',
    fieldSelector: 'metadata.name=linkerd-config',
    why: "Linkerd's linkerd-config ConfigMap",
  },
];

/** One value of the profile with where it was read. */
interface Sourced<T> {
  readonly value: T;
  readonly from: string;
}

/** The profile read from the cluster, each part with its source, and lines about what could not be read. */
export interface ClusterProfile {
  readonly kubernetes?: Sourced<Kubelet & { readonly minor: Version }>;
  readonly meshes: readonly Sourced<Mesh>[];
  /** What the profile leaves out or cannot say, each one line (stderr, and a comment in the file). */
  readonly notes: readonly string[];
}

/** Istio's ENABLE_NATIVE_SIDECARS as the setting of `--mesh istio=X.Y:SETTING`: "auto" and unset leave it to the release. */
function istioSetting(setting: EnvSetting): { setting?: MeshSetting; said: string; note?: string } {
  if (setting === undefined) return { said: `${ISTIO_NATIVE_VARIABLE} unset` };
  if ('from' in setting) return { said: `${ISTIO_NATIVE_VARIABLE} from valueFrom`, note: 'is set from valueFrom, which is not read' };
  if (setting.value === 'true') return { setting: 'native', said: `${ISTIO_NATIVE_VARIABLE}=true` };
  if (setting.value === 'false') return { setting: 'classic', said: `${ISTIO_NATIVE_VARIABLE}=false` };
  if (setting.value === 'auto') return { said: `${ISTIO_NATIVE_VARIABLE}=auto` };
  return {
    said: `${ISTIO_NATIVE_VARIABLE}=${JSON.stringify(setting.value)}`,
    note: `is ${JSON.stringify(setting.value)}, not true, false or auto`,
  };
}

/** An istiod as the profile's mesh, or the note why it cannot be one. */
export function istioMesh(istiod: Istiod): Sourced<Mesh> | string {
  const where = `istiod ${istiod.namespace}/${istiod.name}`;
  const version = istiod.version === undefined ? undefined : parseVersion(istiod.version);
  if (version === undefined) return `${where}: its image ${istiod.image} has no release tag: state it with --mesh istio=X.Y`;
  const { setting, said } = istioSetting(istiod.nativeSidecars);
  return {
    value: { name: 'istio', version, ...(setting === undefined ? {} : { setting }) },
    from: `${where} (revision ${istiod.revision}): ${istiod.image}, ${said}`,
  };
}

/** Reads the profile from the objects of PROFILE_READS, by resource (nodes, deployments.apps, configmaps). */
export function readProfile(objects: ReadonlyMap<string, readonly KubeObject[]>): ClusterProfile {
  const notes: string[] = [];
  const meshes: Sourced<Mesh>[] = [];
  const nodes = objects.get('nodes') ?? [];
  const kubelets = kubeletsOf(nodes);
  const oldest = oldestKubelet(kubelets);
  for (const kubelet of kubelets.filter((candidate) => candidate.minor === undefined))
    notes.push(`node ${kubelet.node}: its kubeletVersion ${JSON.stringify(kubelet.version)} is not a version: left out`);
  if (oldest === undefined) notes.push('no node reports its kubelet: state the oldest with --kubernetes X.Y');
  const deployments = objects.get('deployments.apps') ?? [];

  // Istio: the default revision's istiod (the one istio-injection=enabled uses), else the first; the others noted.
  const istiods = istiodsOf(deployments).sort(
    (a, b) => Number(b.revision === 'default') - Number(a.revision === 'default') || a.name.localeCompare(b.name),
  );
  const [chosen, ...others] = istiods;
  if (chosen !== undefined) {
    const mesh = istioMesh(chosen);
    if (typeof mesh === 'string') notes.push(mesh);
    else {
      meshes.push(mesh);
      const { note } = istioSetting(chosen.nativeSidecars);
      if (note !== undefined)
        notes.push(
          `istiod ${chosen.namespace}/${chosen.name}: ${ISTIO_NATIVE_VARIABLE} ${note}: the release's default is written; ` +
            'state the setting with --mesh istio=X.Y:native or :classic',
        );
    }
    for (const other of others)
      notes.push(
        `istiod ${other.namespace}/${other.name} (revision ${other.revision}, ${other.image}) is left out: the profile holds one ` +
          `Istio; doctor tells each namespace by its own revision`,
      );
  }

  // Linkerd: linkerd-config's linkerdVersion and proxy.nativeSidecar.
  for (const install of linkerdOf(objects.get('configmaps') ?? [])) {
    const where = `linkerd-config in ${install.namespace}`;
    if (install.problem !== undefined) {
      notes.push(`${where}: ${install.problem}: state Linkerd with --mesh linkerd=X.Y`);
      continue;
    }
    const release = linkerdRelease(install.version);
    const setting: MeshSetting | undefined = install.nativeSidecar === undefined ? undefined : install.nativeSidecar ? 'native' : 'classic';
    const said = `linkerdVersion ${install.version ?? 'unset'}, proxy.nativeSidecar ${install.nativeSidecar ?? 'unset'}`;
    const version = release === undefined ? undefined : parseVersion(release);
    if (version === undefined) {
      notes.push(
        `${where} (${said}): not a 2.x release (an edge release?): state it with --mesh linkerd=2.X${setting === undefined ? '' : `:${setting}`}`,
      );
      continue;
    }
    if (meshes.some((mesh) => mesh.value.name === 'linkerd')) {
      notes.push(`${where} (${said}) is left out: the profile holds one Linkerd`);
      continue;
    }
    meshes.push({ value: { name: 'linkerd', version, ...(setting === undefined ? {} : { setting }) }, from: `${where}: ${said}` });
  }

  // The cloud-sql-proxy-operator: the release of its manager's image.
  const [operator, ...moreOperators] = operatorsOf(deployments);
  if (operator !== undefined) {
    const where = `Deployment ${operator.namespace}/${operator.name}`;
    const version = operator.version === undefined ? undefined : parseVersion(operator.version);
    if (version === undefined)
      notes.push(`${where}: its image ${operator.image} has no release tag: state it with --mesh cloud-sql-proxy-operator=X.Y`);
    else meshes.push({ value: { name: 'cloud-sql-proxy-operator', version }, from: `${where}: ${operator.image}` });
    for (const other of moreOperators)
      notes.push(`Deployment ${other.namespace}/${other.name} (${other.image}) is left out: the profile holds one operator`);
  }
  return {
    ...(oldest === undefined ? {} : { kubernetes: { value: oldest, from: `the oldest kubelet: node ${oldest.node}, ${oldest.version}` } }),
    meshes,
    notes,
  };
}

/** The profile as the model holds it. */
export const profileOf = (cluster: ClusterProfile): Profile => ({
  ...(cluster.kubernetes === undefined ? {} : { kubernetes: cluster.kubernetes.value.minor }),
  meshes: cluster.meshes.map((mesh) => mesh.value),
});

/** The config file's text: what each value was read from, and what could not be read, as comments above it. */
export function profileFile(cluster: ClusterProfile, context: string | undefined): string {
  const lines = [
    `# The cluster profile of ${context === undefined ? "kubectl's current context" : `the context ${context}`}, read by kubectl istio-job-run profile.`,
    '# --check, --inject and --admission-policy read it as .istio-job-run.yaml (here, or at the top of the git work tree).',
  ];
  if (cluster.kubernetes !== undefined) lines.push(`# kubernetes: ${cluster.kubernetes.from}`);
  for (const mesh of cluster.meshes) lines.push(`# ${mesh.value.name}: ${mesh.from}`);
  if (cluster.meshes.length === 0) lines.push('# no mesh, and no operator that injects sidecars, found');
  for (const note of cluster.notes) lines.push(`# ${note}`);
  return `${lines.join('\n')}\n${configText(profileOf(cluster))}`;
}
