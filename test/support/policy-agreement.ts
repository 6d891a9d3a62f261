// What --admission-policy's policy does to each Job, CronJob and bare Pod of a file, next to what --inject writes
// for it: each object given alone (as JSON, as the API server would hold it) to --inject and to the policy
// (test/support/admission.ts), on CREATE; then the policy again on what it wrote (it must change nothing), and on
// an UPDATE that sends the object as written before (a `kubectl apply` of the same file again) over the stored
// one, which it must rewrite to the stored object.

import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { check } from '../../src/manifest/check/rules.ts';
import { inject } from '../../src/manifest/inject/inject.ts';
import { admissionPolicy, type PolicySettings, SKIPPED } from '../../src/manifest/inject/policy.ts';
import type { KindName } from '../../src/config/kinds.ts';
import { admit, type Admitted, type Json, type Request } from './admission.ts';

type Policy = Parameters<typeof admit>[0];
import { source } from './manifest.ts';

export interface Verdict {
  readonly name: string;
  /** What --inject did with the object alone. */
  readonly inject: 'rewritten' | 'left' | 'refused';
  /** Why --inject refused it. */
  readonly refusals?: readonly string[];
  readonly policy: Admitted['kind'];
  /** The condition that made the policy skip it, or its error. */
  readonly why?: string;
  /** The policy's object differs from --inject's (a path where they differ). */
  readonly differs?: string;
  /** A second pass of the policy over its own output changed it. */
  readonly notIdempotent?: boolean;
  /** An UPDATE with the object as first written did not come back as the stored object. */
  readonly updateDiffers?: boolean;
  /** --check's error rules on the policy's output. */
  readonly errors?: readonly string[];
}

/** The Jobs, CronJobs and bare Pods of TEXT as plain JSON, in the order written (a List's items too). */
export function objectsOf(text: string): Json[] {
  const found: Json[] = [];
  const collect = (node: unknown): void => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const object = node as { kind?: unknown; items?: unknown };
    if (typeof object.kind === 'string' && object.kind.endsWith('List') && Array.isArray(object.items)) {
      for (const item of object.items) collect(item);
    } else if (object.kind === 'Job' || object.kind === 'CronJob' || object.kind === 'Pod') found.push(node as Json);
  };
  for (const document of parseAllDocuments(text, { merge: true, uniqueKeys: false })) {
    if (document.errors.length === 0) collect(document.toJS({ maxAliasCount: -1 }));
  }
  return found;
}

/** The first path where A and B differ, or undefined. */
export function difference(a: unknown, b: unknown, path = ''): string | undefined {
  if (a === b) return undefined;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b))
    return `${path}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const found = difference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}/${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** What a namespace carries besides its name: labels, annotations. */
export interface NamespaceMarks {
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

const namespaceOf = (object: Json, marks: NamespaceMarks): Request['namespace'] => {
  const name = ((object as { metadata?: { namespace?: string } }).metadata?.namespace ?? 'default') as string;
  return {
    metadata: {
      name,
      labels: { 'kubernetes.io/metadata.name': name, ...marks.labels },
      ...(marks.annotations === undefined ? {} : { annotations: marks.annotations }),
    },
  };
};

/**
 * Each object of TEXT under SETTINGS; MARKS are on every object's namespace, and INJECTED_KINDS the kinds they
 * inject, which --inject is told with --injected-namespaces.
 */
/** The printed policy, read back, by its settings: printed once for each. */
const policies = new Map<string, Policy>();
function policyOf(settings: Omit<PolicySettings, 'namespaces'>): Policy {
  const key = JSON.stringify(settings);
  const known = policies.get(key);
  if (known !== undefined) return known;
  const [policy] = parseAllDocuments(admissionPolicy({ ...settings, namespaces: new Map() })).map((document) => document.toJS() as Policy);
  policies.set(key, policy as Policy);
  return policy as Policy;
}

export function agreement(
  file: string,
  text: string,
  settings: Omit<PolicySettings, 'namespaces'>,
  marks: NamespaceMarks = {},
  injectedKinds: readonly KindName[] = [],
): Verdict[] {
  const policy = policyOf(settings);
  return objectsOf(text).map((object, index) => {
    const name = `${file}#${index} ${(object as { kind: string }).kind} ${(object as { metadata?: { name?: string } }).metadata?.name ?? ''}`;
    const namespace = namespaceOf(object, marks);
    const namespaces = new Map(injectedKinds.map((kind) => [kind, new Set([namespace.metadata.name])]));
    const json = JSON.stringify(object, null, 1);
    const result = inject(source(json, 'object.json'), {
      image: settings.image,
      native: settings.native,
      imageVolume: settings.imageVolume,
      namespaces,
    });
    const verdict = result.kind === 'refused' ? 'refused' : result.rewritten.length > 0 ? 'rewritten' : 'left';
    const admitted = admit(policy, { operation: 'CREATE', object, namespace });
    // No patch: the check that failed, by the variable that names it.
    if (admitted.kind === 'patched' && admitted.patch.length === 0)
      return { name, inject: verdict, policy: 'skipped', why: String(admitted.variables.get(SKIPPED)) } as const;
    const base = {
      name,
      inject: verdict,
      policy: admitted.kind,
      ...(result.kind === 'refused' ? { refusals: result.problems } : {}),
    } as const;
    if (admitted.kind === 'skipped') return { ...base, why: admitted.condition };
    if (admitted.kind === 'error') return { ...base, why: admitted.message };
    if (admitted.kind !== 'patched') return base;
    const expected = result.kind === 'done' ? (parseYaml(result.text) as Json) : object;
    const differs = difference(admitted.object, expected);
    const again = admit(policy, { operation: 'CREATE', object: admitted.object, namespace });
    const notIdempotent = again.kind === 'patched' && difference(again.object, admitted.object) !== undefined;
    const update = admit(policy, { operation: 'UPDATE', object, oldObject: admitted.object, namespace });
    const updateDiffers = update.kind !== 'patched' || difference(update.object, admitted.object) !== undefined;
    const errors = check(source(JSON.stringify(admitted.object, null, 1), 'patched.json'), { namespaces })
      .filter((finding) => finding.level === 'error')
      .map((finding) => finding.rule);
    return {
      ...base,
      ...(differs === undefined ? {} : { differs }),
      ...(notIdempotent ? { notIdempotent } : {}),
      ...(updateDiffers ? { updateDiffers } : {}),
      errors,
    };
  });
}

/**
 * One table of job containers by what they say to their sidecar, for the policy and --inject alike: a quit (in the
 * command, or its URL in the container's env), a call to the sidecar's own API, a wait for its readiness. What both
 * must do: a container that only calls the API or waits is wrapped by both (nothing stops the sidecar); one that
 * quits is left alone by the policy and left to --inject, which judges its script (here the quit works, and --inject
 * replaces it with the wrapper).
 */
export interface SpeakingCase {
  readonly name: string;
  readonly marks: { readonly labels?: Record<string, string>; readonly annotations?: Record<string, string> };
  readonly command: readonly string[];
  readonly env?: readonly { readonly name: string; readonly value: string }[];
  readonly says: 'quit' | 'api' | 'wait';
  /** A sidecar container the pod declares beside the job's. */
  readonly sidecar?: Json;
}

const ISTIO_ASKED = { labels: { 'sidecar.istio.io/inject': 'true' } };
const DAPR_ASKED = { annotations: { 'dapr.io/enabled': 'true' } };
const CLOUD_SQL_PROXY = { name: 'proxy', image: 'registry.example/cloud-sql-proxy:2', args: ['--quitquitquit', 'project:region:db'] };

/** Each row: what it says, its name, the pod's marks, its `sh -c` script, a variable of its env, a sidecar it declares. */
const ROWS: readonly [SpeakingCase['says'], string, SpeakingCase['marks'], string, ([string, string] | undefined)?, Json?][] = [
  [
    'api',
    "Dapr's publish API only",
    DAPR_ASKED,
    './task.sh && curl -fsS -X POST http://localhost:3500/v1.0/publish/pubsub/orders -d @o.json',
  ],
  ['api', "Dapr's state API only, by 127.0.0.1", DAPR_ASKED, 'curl -fsS http://127.0.0.1:3500/v1.0/state/store/last-run && ./task.sh'],
  [
    'wait',
    "a wait for Istio's readiness only",
    ISTIO_ASKED,
    'until curl -fsI http://127.0.0.1:15021/healthz/ready; do sleep 1; done; ./task.sh',
  ],
  [
    'wait',
    "a wait for Dapr's readiness only",
    DAPR_ASKED,
    'until curl -fs http://localhost:3500/v1.0/healthz/outbound; do sleep 1; done; ./task.sh',
  ],
  [
    'quit',
    "Istio's quit URL in the container's env",
    ISTIO_ASKED,
    './task.sh; rc=$?; curl -fsS -X POST "$QUIT_URL"; exit $rc',
    ['QUIT_URL', 'http://127.0.0.1:15020/quitquitquit'],
  ],
  [
    'quit',
    "Dapr's shutdown URL in the container's env",
    DAPR_ASKED,
    './task.sh; rc=$?; curl -fsS -X POST "$DAPR_SHUTDOWN"; exit $rc',
    ['DAPR_SHUTDOWN', 'http://localhost:3500/v1.0/shutdown'],
  ],
  ['quit', "Istio's quit in the command", ISTIO_ASKED, './task.sh; rc=$?; curl -fsS -X POST http://127.0.0.1:15020/quitquitquit; exit $rc'],
  // The sidecars' own programs (src/manifest/script/programs.ts): a subcommand that waits, and one that quits.
  ['wait', "pilot-agent's wait for Istio's readiness", ISTIO_ASKED, 'pilot-agent wait && ./task.sh'],
  [
    'quit',
    "the Cloud SQL proxy's shutdown command",
    {},
    './task.sh; rc=$?; cloud-sql-proxy shutdown; exit $rc',
    undefined,
    CLOUD_SQL_PROXY,
  ],
];

export const SPEAKING: readonly SpeakingCase[] = ROWS.map(([says, name, marks, script, variable, sidecar]) => ({
  name,
  marks,
  command: ['sh', '-c', script],
  ...(variable === undefined ? {} : { env: [{ name: variable[0], value: variable[1] }] }),
  says,
  ...(sidecar === undefined ? {} : { sidecar }),
}));

/** A case's Job as YAML. */
export function speakingJob(row: SpeakingCase): string {
  const container = {
    name: 'task',
    image: 'registry.example/task:1',
    command: row.command,
    ...(row.env === undefined ? {} : { env: row.env }),
  };
  return JSON.stringify({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'case', namespace: 'team' },
    spec: {
      template: {
        metadata: row.marks,
        spec: { restartPolicy: 'Never', containers: [container, ...(row.sidecar === undefined ? [] : [row.sidecar])] },
      },
    },
  });
}
