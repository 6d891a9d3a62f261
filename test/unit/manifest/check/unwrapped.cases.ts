// The cases of the unwrapped theme for test/unit/manifest/check/unwrapped.test.ts: manifests that trip each rule and manifests
// that must not. A rule's cases live in one theme's file.

import { type Case, container, indent, INJECTED, job, pod, WRAPPED } from './cases.ts';

export const CASES: readonly Case[] = [
  // unwrapped
  {
    name: 'a plain Job whose pod asks for injection',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: INJECTED }),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  // Istio injects for "y", "yes", "true", "on" in any case; any other value but "" means no injection.
  ...['yes', 'on', 'Y', 'TRUE'].map(
    (value): Case => ({
      name: `sidecar.istio.io/inject: "${value}" in a namespace that does not inject`,
      rule: 'unwrapped',
      yaml: job(pod('command: ["./task.sh"]'), { podMeta: `annotations:\n  sidecar.istio.io/inject: "${value}"` }),
      expect: { at: 'command: ["./task.sh"]', level: 'error' },
    }),
  ),
  ...['no', 'enabled', '1'].map(
    (value): Case => ({
      name: `sidecar.istio.io/inject: "${value}" in a namespace that injects`,
      rule: 'unwrapped',
      yaml: job(pod('command: ["./task.sh"]'), { podMeta: `annotations:\n  sidecar.istio.io/inject: "${value}"` }),
      settings: { namespaces: new Map([['istio', new Set(['*'])]]) },
    }),
  ),
  // Istio's ambient mode: the label istio.io/dataplane-mode, exactly "ambient", keeps the sidecar out (Istio compares
  // the label's value as it is); any other spelling, or the key as an annotation, leaves the namespace's injection.
  {
    name: 'istio.io/dataplane-mode: ambient as a label, in a namespace that injects: no sidecar',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'labels:\n  istio.io/dataplane-mode: ambient' }),
    settings: { namespaces: new Map([['istio', new Set(['*'])]]) },
  },
  ...[
    ['labels', 'Ambient'],
    ['labels', 'AMBIENT'],
    ['annotations', 'ambient'],
    ['annotations', '" ambient "'],
  ].map(
    ([where, value]): Case => ({
      name: `istio.io/dataplane-mode: ${value} as ${where === 'labels' ? 'a label' : 'an annotation'}, in a namespace that injects: a sidecar`,
      rule: 'unwrapped',
      yaml: job(pod('command: ["./task.sh"]'), { podMeta: `${where}:\n  istio.io/dataplane-mode: ${value}` }),
      settings: { namespaces: new Map([['istio', new Set(['*'])]]) },
      expect: { at: 'command: ["./task.sh"]', level: 'error' },
    }),
  ),
  // Each value the other injectors take as on, and some they do not.
  ...(
    [
      ['dapr.io/enabled', ['y', 'yes', 'on', '1', 'T', ' True '], ['no', 'false', '0', 'enabled']],
      ['vault.hashicorp.com/agent-inject', ['1', 't', 'T', 'TRUE', 'true', 'True'], ['0', 'F', 'yes', 'tRUE']],
      ['consul.hashicorp.com/connect-inject', ['1', 't', 'T', 'TRUE', 'true', 'True'], ['0', 'False', 'on', 'tRUE']],
      ['linkerd.io/inject', ['enabled', 'ingress'], ['disabled', 'Enabled', 'true']],
    ] as const
  ).flatMap(([key, on, off]) =>
    [...on, ...off].map(
      (value): Case => ({
        name: `${key}: "${value}"`,
        rule: 'unwrapped',
        yaml: job(pod('command: ["./task.sh"]'), { podMeta: `annotations:\n  ${key}: "${value}"` }),
        ...((on as readonly string[]).includes(value) ? { expect: { at: 'command: ["./task.sh"]', level: 'error' } } : {}),
      }),
    ),
  ),
  {
    name: 'a plain Job whose pod has a revision label',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'labels: {istio.io/rev: canary}' }),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a bare Pod that asks for injection and never restarts',
    rule: 'unwrapped',
    yaml: 'kind: Pod\nmetadata:\n  name: p\n  labels: {sidecar.istio.io/inject: "true"}\nspec:\n  restartPolicy: Never\n  containers:\n  - {name: job, image: x, command: [./t]}\n',
    expect: { at: '- {name: job', level: 'error' },
  },
  {
    name: 'a plain Job inside a kind: List',
    rule: 'unwrapped',
    yaml: `apiVersion: v1\nkind: List\nitems:\n- ${indent(job(pod('command: ["./task.sh"]'), { podMeta: INJECTED }), 2).trimStart()}`,
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a Linkerd-injected Job',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'annotations:\n  linkerd.io/inject: enabled' }),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a Consul-injected Job',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'annotations:\n  "consul.hashicorp.com/connect-inject": "true"' }),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a Dapr-enabled Job',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'annotations:\n  dapr.io/enabled: "true"' }),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a Vault Agent sidecar',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'annotations:\n  vault.hashicorp.com/agent-inject: "true"' }),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a declared Cloud SQL proxy container',
    rule: 'unwrapped',
    yaml: job(
      `restartPolicy: Never\ncontainers:\n${container('command: ["./task.sh"]')}\n${container('args: ["--quitquitquit"]', 'proxy').replace('image: example', 'image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1')}`,
    ),
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a plain Job in a namespace the user says injects',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { jobMeta: 'namespace: payments' }),
    settings: { namespaces: new Map([['istio', new Set(['payments'])]]) },
    expect: { at: 'command: ["./task.sh"]', level: 'error' },
  },
  {
    name: 'a plain Job with no marker and no namespace said',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]')),
  },
  {
    name: 'a plain Job in a namespace the user does not name',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { jobMeta: 'namespace: batch' }),
    settings: { namespaces: new Map([['istio', new Set(['payments'])]]) },
  },
  {
    name: 'a quit in an EXIT trap of a script that then execs the job: the trap never runs',
    rule: 'unwrapped',
    yaml: job(pod(`command: ["sh", "-c", "trap 'curl -XPOST localhost:15020/quitquitquit' EXIT; exec ./task"]`), { podMeta: INJECTED }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a pkill of the Cloud SQL proxy v1 in a pod that shares its process namespace',
    rule: 'unwrapped',
    yaml: job(
      `restartPolicy: Never\nshareProcessNamespace: true\ncontainers:\n${container('command: ["sh", "-c", "./task; rc=$?; pkill -INT cloud_sql_proxy; exit $rc"]')}\n${container('command: ["/cloud_sql_proxy", "-instances=p:r:i=tcp:5432"]', 'proxy').replace('image: example', 'image: gcr.io/cloudsql-docker/gce-proxy:1.33.2')}`,
    ),
  },
  {
    name: 'a pkill of the Cloud SQL proxy in a pod that does not share its process namespace: it finds nothing',
    rule: 'unwrapped',
    yaml: job(
      `restartPolicy: Never\ncontainers:\n${container('command: ["sh", "-c", "./task; rc=$?; pkill -INT cloud_sql_proxy; exit $rc"]')}\n${container('command: ["/cloud_sql_proxy", "-instances=p:r:i=tcp:5432"]', 'proxy').replace('image: example', 'image: gcr.io/cloudsql-docker/gce-proxy:1.33.2')}`,
    ),
    expect: { at: 'command: ["sh", "-c", "./task; rc=$?; pkill', level: 'error' },
  },
  { name: 'a Job that runs the wrapper', rule: 'unwrapped', yaml: job(pod(WRAPPED), { podMeta: INJECTED }) },
  {
    name: 'a Linkerd Job under linkerd-await --shutdown',
    rule: 'unwrapped',
    yaml: job(pod('command: ["/linkerd-await", "--shutdown", "--", "./task"]'), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled\n  config.linkerd.io/proxy-admin-shutdown: enabled',
    }),
  },
  {
    name: 'a Linkerd proxy as a native sidecar',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled\n  config.alpha.linkerd.io/proxy-enable-native-sidecar: "true"',
    }),
  },
  {
    name: 'a Vault Agent that only pre-populates',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), {
      podMeta: 'annotations:\n  vault.hashicorp.com/agent-inject: "true"\n  vault.hashicorp.com/agent-pre-populate-only: "true"',
    }),
  },
  {
    name: 'a native Cloud SQL proxy',
    rule: 'unwrapped',
    yaml: job(
      `restartPolicy: Never\ncontainers:\n${container('command: ["./task.sh"]')}\ninitContainers:\n${container('restartPolicy: Always', 'proxy').replace('image: example', 'image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1')}`,
    ),
  },
  {
    name: 'a Job with native Istio sidecars',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), {
      podMeta: 'annotations:\n  sidecar.istio.io/nativeSidecar: "true"\n  sidecar.istio.io/inject: "true"',
    }),
  },
  // A pod the rule leaves alone: injection off, a native proxy, scuttle, a server, not a Job.
  {
    name: 'a Job with injection off',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: 'labels:\n  sidecar.istio.io/inject: "false"' }),
    settings: { namespaces: new Map([['istio', new Set(['*'])]]) },
  },
  {
    name: 'an already injected pod with a native proxy',
    rule: 'unwrapped',
    yaml: job(pod('command: ["./task.sh"]'), {
      podMeta: `annotations:\n  sidecar.istio.io/status: '${JSON.stringify({ initContainers: ['istio-init', 'istio-proxy'], containers: null })}'`,
    }),
  },
  {
    name: 'a Job that uses scuttle',
    rule: 'unwrapped',
    yaml: job(pod('command: ["scuttle", "./task.sh"]\nenv: [{name: ENVOY_ADMIN_API, value: "http://127.0.0.1:15000"}]'), {
      podMeta: INJECTED,
    }),
  },
  {
    name: 'a Pod that restarts always (a server)',
    rule: 'unwrapped',
    yaml: 'kind: Pod\nmetadata: {name: p, labels: {sidecar.istio.io/inject: "true"}}\nspec:\n  containers:\n  - {name: web, image: x}\n',
  },
  {
    name: 'a Deployment',
    rule: 'unwrapped',
    yaml: 'kind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    metadata: {labels: {sidecar.istio.io/inject: "true"}}\n    spec:\n      containers: [{name: web, image: x}]\n',
  },
  // A quit no way reaches, the only sign of the sidecar (its namespace injects it): each branch before it exits.
  {
    name: 'a quit after an if/elif/else whose every branch exits',
    rule: 'unwrapped',
    yaml: job(
      pod(
        'command: ["sh", "-c", "set -e; if [ -n \\"$A\\" ]; then ./a; exit 0; elif [ -n \\"$B\\" ]; then ./b; exit 0; else ./c; exit 0; fi; curl -fsS -XPOST localhost:15020/quitquitquit"]',
      ),
    ),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a quit after an if/elif/else whose one branch goes on',
    rule: 'unwrapped',
    yaml: job(
      pod(
        'command: ["sh", "-c", "set -e; if [ -n \\"$A\\" ]; then ./a; exit 0; else ./c; fi; curl -fsS -XPOST localhost:15020/quitquitquit"]',
      ),
    ),
  },
];
