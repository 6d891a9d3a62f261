// `kubectl istio-job-run doctor`: per namespace, which injectors add a sidecar to its pods (the namespace labels
// and annotations of the kinds table: istio-injection, istio.io/rev, linkerd.io/inject, ...), whether that sidecar
// is native or classic under the cluster's profile and why (the node whose kubelet keeps Istio classic), then
// --check over every Job and CronJob of the cluster under the same profile, each in its namespace. The form comes
// from the profile model (src/config/profile.ts, installForm); nothing here decides one.

import { installForm, type Mesh, type Profile, versionText } from '../../config/profile.ts';
import { type KindName, SIDECAR_KINDS, type SidecarKind } from '../../config/kinds.ts';
import { said } from '../check/finding.ts';
import { advised } from '../inject/inject.ts';
import { formOf } from '../pod/sidecars.ts';
import { parseSource } from '../yaml/source.ts';
import { istiodsOf, type KubeObject, namespacesOf, type NamespaceFacts } from './facts.ts';
import type { Read } from './kubectl.ts';
import { type ClusterProfile, istioMesh, profileOf } from './profile.ts';

/** What doctor reads besides the profile's objects: the namespaces, and the Jobs and CronJobs to check. */
export const DOCTOR_READS: readonly Read[] = [
  { resource: 'namespaces', group: '', scope: 'cluster', why: 'the namespaces (their injection labels and annotations)' },
  { resource: 'jobs', group: 'batch', scope: 'all-namespaces', why: 'the Jobs' },
  { resource: 'cronjobs', group: 'batch', scope: 'all-namespaces', why: 'the CronJobs' },
];

const EXIT_FOUND = 1;

/** What on NAMESPACE makes KIND's injector add its sidecar there (`label istio-injection=enabled`); undefined: nothing. */
export function injectedBy(kind: SidecarKind, namespace: NamespaceFacts): string | undefined {
  for (const rule of kind.template.namespace ?? []) {
    if (rule.unless !== undefined && Object.hasOwn(namespace.labels, rule.unless)) continue;
    const [what, key, values] =
      rule.label !== undefined ? ['label', rule.label, namespace.labels] : ['annotation', rule.annotation ?? '', namespace.annotations];
    const value = values[key];
    if (value === undefined || (rule.values !== undefined && !rule.values.includes(value))) continue;
    return `${what} ${key}=${value}`;
  }
  return undefined;
}

/** The label that puts the namespace in a sidecarless mode of KIND (Istio's ambient), if any. */
function sidecarless(kind: SidecarKind, namespace: NamespaceFacts): string | undefined {
  const marker = kind.template.sidecarless;
  if (marker === undefined) return undefined;
  const value = namespace.labels[marker.label];
  return value === marker.value ? `label ${marker.label}=${value}` : undefined;
}

/**
 * The native keys of KIND that NAMESPACE carries and KIND's injector copies onto the pods there that lack them
 * (Linkerd's), as a pod's annotations.
 */
function inherited(kind: SidecarKind, namespace: NamespaceFacts): Map<string, { value: string }> {
  const native = kind.template.native;
  if (native?.fromNamespace !== true) return new Map();
  return new Map(
    native.keys.flatMap((key) => (namespace.annotations[key] === undefined ? [] : [[key, { value: namespace.annotations[key] }]])),
  );
}

/** How one namespace stands: for each kind its injector adds there, the marker, the form and why. */
interface Standing {
  readonly namespace: NamespaceFacts;
  readonly profile: Profile;
  readonly lines: readonly string[];
  readonly injecting: readonly KindName[];
}

/**
 * The profile of NAMESPACE: the cluster's, with Istio the istiod of the revision its istio.io/rev label names where
 * that is another (each revision injects with its own release and setting).
 */
function namespaceProfile(cluster: ClusterProfile, istiods: ReturnType<typeof istiodsOf>, revision: string | undefined): Profile {
  const profile = profileOf(cluster);
  const istiod = istiods.find((candidate) => candidate.revision === revision);
  if (revision === undefined || istiod === undefined) return profile;
  const mesh = istioMesh(istiod);
  if (typeof mesh === 'string') return { ...profile, meshes: profile.meshes.filter((item) => item.name !== 'istio') };
  return { ...profile, meshes: [...profile.meshes.filter((item) => item.name !== 'istio'), mesh.value] };
}

/** Why a node keeps the form: the oldest kubelet's node, where the profile model says the node floor decides. */
const floorNode = (cluster: ClusterProfile): string =>
  cluster.kubernetes === undefined ? '' : `: node ${cluster.kubernetes.value.node} runs kubelet ${cluster.kubernetes.value.version}`;

function standing(cluster: ClusterProfile, istiods: ReturnType<typeof istiodsOf>, namespace: NamespaceFacts): Standing {
  const revisionLabel = SIDECAR_KINDS[0].template.revisionLabel;
  const revision = namespace.labels[revisionLabel];
  const profile = namespaceProfile(cluster, istiods, revision);
  const lines: string[] = [];
  const injecting: KindName[] = [];
  for (const kind of SIDECAR_KINDS as readonly SidecarKind[]) {
    const by = injectedBy(kind, namespace);
    if (by === undefined) {
      const none = sidecarless(kind, namespace);
      if (none !== undefined) lines.push(`${kind.name}: no sidecar (${none}: the mesh reaches the pods without one)`);
      continue;
    }
    injecting.push(kind.name as KindName);
    const annotations = inherited(kind, namespace);
    const { form, formBy } = formOf(kind, annotations, profile);
    const [key, setting] = [...annotations][0] ?? [];
    const why =
      formBy ??
      (key === undefined
        ? `no ${kind.name} install was found, so its form is not known: taken as classic`
        : `the namespace's ${key}: "${setting?.value}", which the injector copies to the pods there`);
    const floor = formBy !== undefined && installForm(kind, profile)?.floor === true ? floorNode(cluster) : '';
    lines.push(`${kind.name} injects (${by}): ${form}: ${why}${floor}`);
  }
  return { namespace, profile, lines, injecting };
}

/**
 * The object as the text --check reads, without what it never reads (status, managedFields), and with the keys its
 * namespace's injectors copy onto its pods (inherited) in its pod template where it lacks them.
 */
function manifestText(object: KubeObject, namespace: NamespaceFacts | undefined): string {
  const { status: _status, ...rest } = object;
  const { managedFields: _fields, ...metadata } = (object.metadata ?? {}) as Record<string, unknown>;
  const copy = JSON.parse(JSON.stringify({ ...rest, metadata })) as Record<string, Record<string, unknown>>;
  const spec =
    object.kind === 'CronJob' ? (copy.spec?.jobTemplate as Record<string, Record<string, unknown>> | undefined)?.spec : copy.spec;
  const template = spec?.template as { metadata?: { annotations?: Record<string, string> } } | undefined;
  if (namespace !== undefined && template !== undefined)
    for (const kind of SIDECAR_KINDS as readonly SidecarKind[])
      for (const [key, { value }] of inherited(kind, namespace)) {
        template.metadata ??= {};
        template.metadata.annotations ??= {};
        template.metadata.annotations[key] ??= value;
      }
  return `${JSON.stringify(copy, null, 2)}\n`;
}

/** A Job made by a CronJob: the CronJob is checked instead. */
const madeByCronJob = (object: KubeObject): boolean => (object.metadata?.ownerReferences ?? []).some((owner) => owner.kind === 'CronJob');

export interface DoctorIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (line: string) => void;
}

/** Prints each namespace's standing and the findings of every Job and CronJob; returns the exit code. */
export function doctor(cluster: ClusterProfile, objects: ReadonlyMap<string, readonly KubeObject[]>, io: DoctorIo): number {
  const istiods = istiodsOf(objects.get('deployments.apps') ?? []);
  const workloads = [...(objects.get('jobs.batch') ?? []).filter((job) => !madeByCronJob(job)), ...(objects.get('cronjobs.batch') ?? [])];
  const withWorkloads = new Set(workloads.map((object) => object.metadata?.namespace ?? 'default'));
  const standings = namespacesOf(objects.get('namespaces') ?? []).map((namespace) => standing(cluster, istiods, namespace));
  const out: string[] = [];
  const profile = profileOf(cluster);
  out.push(
    `cluster: ${profile.kubernetes === undefined ? 'no kubelet version read' : `oldest kubelet ${versionText(profile.kubernetes)} (${cluster.kubernetes?.from})`}`,
  );
  for (const mesh of cluster.meshes) out.push(`cluster: ${describe(mesh.value)} (${mesh.from})`);
  for (const note of cluster.notes) out.push(`cluster: ${note}`);
  // Who injects where: every namespace the Jobs of the check are in, and every one an injector adds a sidecar in.
  const quiet: string[] = [];
  for (const { namespace, lines } of standings) {
    if (lines.length === 0 && !withWorkloads.has(namespace.name)) {
      quiet.push(namespace.name);
      continue;
    }
    if (lines.length === 0) out.push(`namespace ${namespace.name}: no mesh injects a sidecar`);
    for (const line of lines) out.push(`namespace ${namespace.name}: ${line}`);
  }
  if (quiet.length > 0)
    out.push(`${quiet.length} other namespace${quiet.length === 1 ? '' : 's'}, without Jobs: no mesh injects (${quiet.join(', ')})`);

  // The check, each object under its namespace's profile, with the namespaces each kind injects in.
  const namespaces = new Map<KindName, Set<string>>();
  for (const { namespace, injecting } of standings)
    for (const kind of injecting) namespaces.set(kind, (namespaces.get(kind) ?? new Set()).add(namespace.name));
  let errors = 0;
  let found = 0;
  for (const object of workloads) {
    const ns = object.metadata?.namespace ?? 'default';
    const name = `${ns}/${(object.kind ?? 'object').toLowerCase()}/${object.metadata?.name ?? '?'}`;
    const stood = standings.find((item) => item.namespace.name === ns);
    const source = parseSource(name, manifestText(object, stood?.namespace));
    const nsProfile = stood?.profile ?? profile;
    if ('error' in source) {
      out.push(`${name}: not read: ${source.error}`);
      continue;
    }
    for (const finding of advised(source, { namespaces, namespace: ns, profile: nsProfile })) {
      found++;
      if (finding.level === 'error') errors++;
      out.push(`${name}: ${finding.level}: ${finding.rule}: ${said(finding)}`);
    }
  }
  const jobs = workloads.filter((object) => object.kind === 'Job').length;
  out.push(
    `checked ${jobs} Job${jobs === 1 ? '' : 's'} and ${workloads.length - jobs} CronJob${workloads.length - jobs === 1 ? '' : 's'}: ` +
      `${found === 0 ? 'nothing found' : `${found} finding${found === 1 ? '' : 's'}, ${errors} error${errors === 1 ? '' : 's'}`}`,
  );
  io.stdout(`${out.join('\n')}\n`);
  return errors > 0 ? EXIT_FOUND : 0;
}

/** A mesh as doctor says it: its name, release and setting. */
const describe = (mesh: Mesh): string =>
  `${mesh.name} ${versionText(mesh.version)}${mesh.setting === undefined ? '' : ` (set to ${mesh.setting})`}`;
