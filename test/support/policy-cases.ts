// The generated cases of the policy's agreement with --inject: pods made from every row of the sidecar kinds table
// (each marker with each kind of value, each shape --inject handles), shared by the fast unit loop
// (test/unit/manifest/inject/policy.test.ts, @bufbuild/cel) and the judge run by Kubernetes' own admission code
// (test/engines/policy.test.ts).

import { stringify } from 'yaml';
import { type KindName, type Reading, SIDECAR_KINDS, type SidecarKind } from '../../src/config/kinds.ts';
import type { Json } from './admission.ts';
import type { NamespaceMarks } from './policy-agreement.ts';

/** A Job with one job container running a script, MARKS on its pod template, CONTAINERS beside it. */
export function job(
  marks: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
  extra: { containers?: Json[]; restartPolicy?: string; kind?: string; spec?: Record<string, Json>; job?: Record<string, Json> } = {},
): string {
  const pod = {
    ...(marks.labels === undefined && marks.annotations === undefined ? {} : { metadata: marks }),
    spec: {
      restartPolicy: extra.restartPolicy ?? 'Never',
      containers: [
        { name: 'task', image: 'registry.example/task:1', command: ['sh', '-c', './task.sh'], ...extra.job },
        ...(extra.containers ?? []),
      ],
      ...extra.spec,
    },
  };
  const kind = extra.kind ?? 'Job';
  const spec =
    kind === 'CronJob' ? { schedule: '@daily', jobTemplate: { spec: { template: pod } } } : kind === 'Pod' ? pod.spec : { template: pod };
  return stringify({
    apiVersion: kind === 'Pod' ? 'v1' : 'batch/v1',
    kind,
    metadata: {
      name: 'case',
      namespace: 'team',
      ...(kind === 'Pod' ? (marks.labels === undefined && marks.annotations === undefined ? {} : marks) : {}),
    },
    spec,
  });
}

/** A value the reading makes other than on and off, for the case of a value the injector refuses or ignores. */
const odd = (reading: Reading): string => (reading.on.includes('maybe') ? 'perhaps' : 'maybe');

export interface Case {
  readonly name: string;
  readonly yaml: string;
  /** Why the policy leaves to --inject a pod --inject rewrites, where it does. */
  readonly leftToInject?: string;
  readonly namespace?: NamespaceMarks;
  readonly injected?: readonly KindName[];
}

/** Pods made from every row of the kinds table: each marker with each kind of value, and each shape --inject handles. */
export function cases(): Case[] {
  const list: Case[] = [];
  for (const kind of SIDECAR_KINDS as readonly SidecarKind[]) {
    const m = kind.template;
    const inject = m.inject;
    const on: Record<string, string> = {};
    if (inject !== undefined) {
      for (const [where, keys] of [
        ['labels', inject.labels],
        ['annotations', inject.annotations],
      ] as const) {
        for (const key of keys) {
          for (const value of [inject.reading.on[0], inject.reading.off[0], odd(inject.reading), '', ' ']) {
            if (value === undefined) continue;
            list.push({ name: `${kind.name}: ${where} ${key}: ${JSON.stringify(value)}`, yaml: job({ [where]: { [key]: value } }) });
          }
        }
      }
      const first = inject.labels[0] ?? inject.annotations[0] ?? '';
      const where = inject.labels.length > 0 ? 'labels' : 'annotations';
      Object.assign(on, { [first]: inject.reading.on[0] ?? 'true' });
      const asked = (annotations: Record<string, string>): { labels?: Record<string, string>; annotations: Record<string, string> } =>
        where === 'labels' ? { labels: on, annotations } : { annotations: { ...on, ...annotations } };
      const quitSwitch = m.quitSwitch;
      if (typeof quitSwitch === 'object' && 'annotation' in quitSwitch) {
        for (const value of [quitSwitch.reading.on[0], quitSwitch.reading.off[0], odd(quitSwitch.reading), '']) {
          if (value !== undefined)
            list.push({
              name: `${kind.name}: its quit switch ${JSON.stringify(value)}`,
              yaml: job(asked({ [quitSwitch.annotation]: value })),
            });
        }
      }
      for (const key of m.native?.keys ?? []) {
        for (const value of ['true', 'false', odd(m.native?.reading as Reading)])
          list.push({ name: `${kind.name}: native ${key}: ${value}`, yaml: job(asked({ [key]: value })) });
      }
      if (m.initOnly !== undefined) {
        list.push({ name: `${kind.name}: init container only`, yaml: job(asked({ [m.initOnly.annotation]: 'true' })) });
        list.push({ name: `${kind.name}: init container only, off`, yaml: job(asked({ [m.initOnly.annotation]: 'false' })) });
      }
      if (m.sidecarless !== undefined) {
        list.push({ name: `${kind.name}: sidecarless`, yaml: job({ labels: { [m.sidecarless.label]: m.sidecarless.value } }) });
        list.push({
          name: `${kind.name}: sidecarless, but asked for`,
          yaml: job({ labels: { ...on, [m.sidecarless.label]: m.sidecarless.value } }),
        });
        // The mode's label is compared as written, and only as a label: in a namespace that injects, any other
        // spelling, or the key as an annotation, gets the sidecar.
        const rule = m.namespace?.[0];
        const namespace =
          rule === undefined
            ? undefined
            : {
                [rule.label !== undefined ? 'labels' : 'annotations']: {
                  [rule.label ?? rule.annotation ?? '']: rule.values?.[0] ?? 'canary',
                },
              };
        for (const [where, value] of [
          ['labels', m.sidecarless.value],
          ['labels', m.sidecarless.value.toUpperCase()],
          ['annotations', m.sidecarless.value],
        ] as const)
          list.push({
            name: `${kind.name}: ${where} ${m.sidecarless.label}: ${JSON.stringify(value)}, its namespace injects`,
            yaml: job({ [where]: { [m.sidecarless.label]: value } }),
            ...(namespace === undefined ? {} : { namespace, injected: [kind.name as KindName] }),
          });
      }
      if (m.revisionLabel !== undefined)
        list.push({ name: `${kind.name}: revision label`, yaml: job({ labels: { [m.revisionLabel]: 'canary' } }) });
      if (m.injectedAnnotation !== undefined) {
        for (const value of ['injected', '{"containers":["istio-proxy"]}', '{"initContainers":["istio-proxy"]}', ''])
          list.push({
            name: `${kind.name}: already injected ${JSON.stringify(value)}`,
            yaml: job({ annotations: { [m.injectedAnnotation]: value } }),
          });
      }
      for (const domain of m.settings ?? []) {
        list.push({ name: `${kind.name}: its own setting ${domain}`, yaml: job({ annotations: { [`${domain}/x`]: '1' } }) });
        list.push({ name: `${kind.name}: its own setting under ${domain}`, yaml: job({ annotations: { [`sub.${domain}/x`]: '1' } }) });
      }
      for (const rule of m.namespace ?? []) {
        const key = rule.label ?? rule.annotation ?? '';
        const marks = { [key]: rule.values?.[0] ?? 'canary' };
        const namespace = rule.label !== undefined ? { labels: marks } : { annotations: marks };
        list.push({ name: `${kind.name}: its namespace's ${key}`, yaml: job(), namespace, injected: [kind.name as KindName] });
        list.push({
          name: `${kind.name}: its namespace's ${key}, declined by the pod`,
          yaml: job(inject.reading.off[0] === undefined ? {} : { [where]: { [first]: inject.reading.off[0] } }),
          namespace,
          injected: [kind.name as KindName],
        });
      }
    }
    const container = m.container;
    if (container !== undefined) {
      const image = `registry.example/${container.images[0]}:2`;
      for (const args of [
        [],
        ['--quitquitquit'],
        ['--quitquitquit=false'],
        ['--health-check=true'],
        ['--admin-port=9191'],
        ['--admin-port=9091'],
        ['--admin-port', '9191'],
      ]) {
        list.push({
          name: `${kind.name}: its container, args ${JSON.stringify(args)}`,
          yaml: job({}, { containers: [{ name: 'proxy', image, args }] }),
        });
      }
      list.push({ name: `${kind.name}: its container without args`, yaml: job({}, { containers: [{ name: 'proxy', image }] }) });
      for (const program of [...container.programs, ...(m.noQuitPrograms ?? [])])
        list.push({
          name: `${kind.name}: program ${program}`,
          yaml: job({}, { containers: [{ name: 'proxy', image: 'registry.example/other:1', command: [`/bin/${program}`], args: [] }] }),
        });
      list.push({
        name: `${kind.name}: native container`,
        yaml: job({}, { spec: { initContainers: [{ name: 'proxy', image, restartPolicy: 'Always' }] } }),
      });
      list.push({
        name: `${kind.name}: two containers`,
        yaml: job(
          {},
          {
            containers: [
              { name: 'proxy', image, args: [] },
              { name: 'proxy2', image, args: [] },
            ],
          },
        ),
        leftToInject: 'two proxies of one kind: --also twice, which needs a list flattened, which Kubernetes CEL lacks',
      });
    }
  }
  const istio = { labels: { 'sidecar.istio.io/inject': 'true' } };
  const shapes: [string, string][] = [
    ['OnFailure', job(istio, { restartPolicy: 'OnFailure' })],
    ['a CronJob', job(istio, { kind: 'CronJob' })],
    ['a bare Pod', job(istio, { kind: 'Pod' })],
    ['a bare Pod that restarts always', job(istio, { kind: 'Pod', restartPolicy: 'Always' })],
    ['two job containers', job(istio, { containers: [{ name: 'other', image: 'x', command: ['true'] }] })],
    ['no command', job(istio, { job: { command: undefined as unknown as Json, args: ['x'] } })],
    [
      'lists already there',
      job(istio, {
        job: { env: [{ name: 'A', value: '1' }], volumeMounts: [{ name: 'v', mountPath: '/v' }] },
        spec: { volumes: [{ name: 'v', emptyDir: {} }], initContainers: [{ name: 'i', image: 'x' }] },
      }),
    ],
    ['a volume of its name', job(istio, { spec: { volumes: [{ name: 'istio-job-run', emptyDir: {} }] } })],
    ['an init container of its name', job(istio, { spec: { initContainers: [{ name: 'install-istio-job-run', image: 'x' }] } })],
    [
      'a mount at its path',
      job(istio, { job: { volumeMounts: [{ name: 'v', mountPath: '/istio-job-run' }] }, spec: { volumes: [{ name: 'v', emptyDir: {} }] } }),
    ],
    [
      'a podinfo volume',
      job({ annotations: { 'linkerd.io/inject': 'enabled' } }, { spec: { volumes: [{ name: 'istio-job-run-podinfo', emptyDir: {} }] } }),
    ],
    [
      'podinfo mounted',
      job(
        { annotations: { 'linkerd.io/inject': 'enabled' } },
        { job: { volumeMounts: [{ name: 'p', mountPath: '/etc/podinfo' }] }, spec: { volumes: [{ name: 'p', emptyDir: {} }] } },
      ),
    ],
    ['wrapped already', job(istio, { job: { command: ['/istio-job-run/istio-job-run', '--', 'sh', '-c', './task.sh'] } })],
    ['istio and linkerd', job({ labels: istio.labels, annotations: { 'linkerd.io/inject': 'enabled' } })],
    ['istio and an auth proxy', job(istio, { containers: [{ name: 'proxy', image: 'registry.example/cloud-sql-proxy:2', args: [] }] })],
    ['an istio-proxy container', job({}, { containers: [{ name: 'istio-proxy', image: 'x' }] })],
  ];
  for (const [name, yaml] of shapes) list.push({ name, yaml });
  return list;
}

/**
 * A value VALUE as a pod may write it beside the way written: in capitals, padded with spaces, with Unicode's
 * white space at the ends that Go's strings.TrimSpace (and CEL's trim) takes off and JavaScript's trim() does not
 * (U+0085), and one that JavaScript's takes off and Go's does not (U+FEFF). A label value cannot hold white space.
 */
const spellings = (value: string, where: 'labels' | 'annotations'): string[] =>
  where === 'labels' ? [value.toUpperCase()] : [value.toUpperCase(), ` ${value} `, `\u0085${value}`, `\ufeff${value}`];

/**
 * Pods whose injection markers are spelled otherwise than the kinds table lists their values (each value of each
 * reading in capitals, padded, empty or blank), under a namespace that injects the kind and one that does not; and a
 * label beside an annotation of the same kind, where the label, present, decides even when empty. The policy must
 * read each as --inject does (src/config/kinds.ts, readSetting).
 */
export function readingCases(): Case[] {
  const list: Case[] = [];
  for (const kind of SIDECAR_KINDS as readonly SidecarKind[]) {
    const inject = kind.template.inject;
    if (inject === undefined) continue;
    const rule = kind.template.namespace?.[0];
    const injecting =
      rule === undefined
        ? [{ name: '', namespace: undefined }]
        : [
            { name: '', namespace: undefined },
            {
              name: ', its namespace injects',
              namespace: {
                [rule.label !== undefined ? 'labels' : 'annotations']: {
                  [rule.label ?? rule.annotation ?? '']: rule.values?.[0] ?? 'canary',
                },
              },
            },
          ];
    const values = [inject.reading.on[0], inject.reading.off[0], inject.reading.unset?.find((value) => value !== '')].filter(
      (value): value is string => value !== undefined,
    );
    for (const { name, namespace } of injecting) {
      const at = namespace === undefined ? {} : { namespace, injected: [kind.name as KindName] };
      for (const [where, keys] of [
        ['labels', inject.labels],
        ['annotations', inject.annotations],
      ] as const) {
        for (const key of keys) {
          for (const value of [...values.flatMap((each) => spellings(each, where)), ...(where === 'labels' ? [''] : ['', ' '])])
            list.push({
              name: `${kind.name}: ${where} ${key}: ${JSON.stringify(value)}${name}`,
              yaml: job({ [where]: { [key]: value } }),
              ...at,
            });
        }
      }
      for (const label of inject.labels) {
        for (const annotation of inject.annotations) {
          const on = inject.reading.on[0] ?? 'true';
          list.push({
            name: `${kind.name}: label ${label}: "" beside annotation ${annotation}: ${JSON.stringify(on)}${name}`,
            yaml: job({ labels: { [label]: '' }, annotations: { [annotation]: on } }),
            ...at,
          });
        }
      }
    }
  }
  return list;
}

/**
 * Pods with a declared proxy whose boolean flags (the quit switch, --health-check) are written more than once or
 * spelled otherwise: the last of a flag's words decides, its value read as Go's strconv.ParseBool reads it
 * (src/config/kinds.ts, readBoolFlag). The policy must read each as --inject does.
 */
export function flagCases(): Case[] {
  const list: Case[] = [];
  for (const kind of SIDECAR_KINDS as readonly SidecarKind[]) {
    const container = kind.template.container;
    const quitSwitch = kind.template.quitSwitch;
    if (container === undefined || typeof quitSwitch !== 'object' || !('flag' in quitSwitch)) continue;
    const image = `registry.example/${container.images[0]}:2`;
    for (const flag of [quitSwitch.flag, '--health-check']) {
      for (const args of [
        [`${flag}=false`, flag],
        [flag, `${flag}=false`],
        [`${flag}=0`, `${flag}=T`],
        [`${flag}=True`],
        [`${flag}=yes`],
        [`${flag}=`],
      ]) {
        list.push({
          name: `${kind.name}: its container, args ${JSON.stringify(args)}`,
          yaml: job({}, { containers: [{ name: 'proxy', image, args }] }),
        });
      }
    }
  }
  return list;
}
