// How the kubectl plugin reads the cluster: it runs the user's own `kubectl get RESOURCE -o json`, so kubectl
// does what it does for every other command (the kubeconfig, its contexts, credentials and exec plugins, TLS,
// proxies, paging through long lists), and the plugin only reads the JSON it prints. What kubectl cannot get
// becomes one line naming what could not be read and why: the RBAC permission a refusal (403) needs, a cluster
// that cannot be reached, a kubectl that is not there.

import type { KubeObject } from './facts.ts';

/** What running kubectl with ARGS gave: its exit, its output, or the error that kept it from running. */
interface KubectlRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** ENOENT when there is no kubectl; ETIMEDOUT past the time it is given. */
  readonly error?: NodeJS.ErrnoException;
}

export type Kubectl = (args: readonly string[]) => Promise<KubectlRun>;

/** A read of one resource: its plural name, its API group ('' the core group), and where. */
export interface Read {
  readonly resource: string;
  readonly group: string;
  /** Every namespace (`-A`), or the cluster-scoped resource itself. */
  readonly scope: 'cluster' | 'all-namespaces';
  readonly fieldSelector?: string;
  /** Why it is read, for the line that says it could not be. */
  readonly why: string;
}

/** How long kubectl waits for one answer of the API server (its --request-timeout), and the hard limit on a run. */
const REQUEST_TIMEOUT_S = 30;
export const RUN_TIMEOUT_MS = 2 * REQUEST_TIMEOUT_S * 1000;

/**
 * What a read gave: the objects; a refusal (403: the line names the permission); or a failure that ends every read
 * (no kubectl, no cluster, no credentials), said as one line.
 */
type Listed =
  | { readonly kind: 'objects'; readonly objects: readonly KubeObject[] }
  | { readonly kind: 'refused'; readonly line: string }
  | { readonly kind: 'failed'; readonly line: string };

/** The flags of the user's kubectl the plugin passes on: which kubeconfig and which context. */
export interface Target {
  readonly kubeconfig?: string;
  readonly context?: string;
}

/** kubectl's arguments for a read. */
function kubectlArgs(read: Read, target: Target): string[] {
  return [
    ...(target.kubeconfig === undefined ? [] : [`--kubeconfig=${target.kubeconfig}`]),
    ...(target.context === undefined ? [] : [`--context=${target.context}`]),
    'get',
    read.group === '' ? read.resource : `${read.resource}.${read.group}`,
    ...(read.scope === 'all-namespaces' ? ['--all-namespaces'] : []),
    ...(read.fieldSelector === undefined ? [] : [`--field-selector=${read.fieldSelector}`]),
    '--output=json',
    `--request-timeout=${REQUEST_TIMEOUT_S}s`,
  ];
}

/** The RBAC rule a read needs, as a ClusterRole writes it. */
const permission = (read: Read): string =>
  `list on ${read.group === '' ? read.resource : `${read.resource}.${read.group}`} ${
    read.scope === 'cluster' ? 'at the cluster scope' : 'in every namespace'
  } (a ClusterRole rule {apiGroups: ["${read.group}"], resources: ["${read.resource}"], verbs: ["list"]})`;

/** kubectl's own lines about a failure, its klog lines (`E1207 01:19:32.9 ...`) left out: the last of them says it. */
function kubectlSays(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^[EWI]\d{4} \d\d:\d\d:\d\d/.test(line));
  return lines.at(-1) ?? stderr.trim().split('\n').at(-1) ?? '';
}

async function list(kubectl: Kubectl, read: Read, target: Target): Promise<Listed> {
  const args = kubectlArgs(read, target);
  const run = await kubectl(args);
  const what = `kubectl get ${args[args.indexOf('get') + 1]}`;
  if (run.error?.code === 'ENOENT')
    return {
      kind: 'failed',
      line: 'kubectl is not on PATH: profile and doctor read the cluster through it (install kubectl: https://kubernetes.io/docs/tasks/tools/)',
    };
  if (run.error?.code === 'ETIMEDOUT')
    return { kind: 'failed', line: `${what}: no answer within ${RUN_TIMEOUT_MS / 1000} s (is the cluster reachable?)` };
  if (run.error !== undefined) return { kind: 'failed', line: `${what}: kubectl could not run (${run.error.code ?? run.error.message})` };
  if (run.status !== 0) {
    const says = kubectlSays(run.stderr);
    if (/^Error from server \(Forbidden\)/.test(says))
      return {
        kind: 'refused',
        line: `cannot read ${read.why}: ${says.replace(/^Error from server \(Forbidden\): /, '')}: needs ${permission(read)}`,
      };
    return { kind: 'failed', line: `${what} failed (exit ${run.status ?? 'by a signal'}): ${says || 'no message'}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(run.stdout);
  } catch {
    return { kind: 'failed', line: `${what}: kubectl printed no JSON (${run.stdout.slice(0, 80).trim() || 'nothing'})` };
  }
  const items = (parsed as { items?: unknown }).items;
  if (!Array.isArray(items)) return { kind: 'failed', line: `${what}: kubectl printed no list` };
  return { kind: 'objects', objects: items as KubeObject[] };
}

/** Every read, in order: the objects of each by its resource, or the lines of those refused, or the failure that stopped them. */
export async function listAll(
  kubectl: Kubectl,
  reads: readonly Read[],
  target: Target,
): Promise<{ readonly objects: ReadonlyMap<string, readonly KubeObject[]>; readonly problems: readonly string[] }> {
  const objects = new Map<string, readonly KubeObject[]>();
  const problems: string[] = [];
  for (const read of reads) {
    const listed = await list(kubectl, read, target);
    if (listed.kind === 'failed') return { objects, problems: [listed.line] };
    if (listed.kind === 'refused') problems.push(listed.line);
    else objects.set(read.group === '' ? read.resource : `${read.resource}.${read.group}`, listed.objects);
  }
  return { objects, problems };
}
