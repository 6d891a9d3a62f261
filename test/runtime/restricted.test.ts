// Every pod the project shows (docker/k8s/*.yaml, and each YAML block of README.md that has containers)
// against the restricted Pod Security Standard, whose controls are written out below as a table, from
// the Kubernetes documentation: https://kubernetes.io/docs/concepts/security/pod-security-standards/
// ("Restricted" includes every "Baseline" control). Then the project's own rules beside them: a
// read-only root and memory requests and limits on every container.
// No podman needed: it runs with the runtime suite because the pods there are made from these manifests.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { root } from '../support/process.ts';
import { podSpecOf } from '../support/runtime.ts';

type Json = Record<string, unknown>;
interface Spec extends Json {
  securityContext?: Json;
  volumes?: Json[];
  initContainers?: Json[];
  containers?: Json[];
  ephemeralContainers?: Json[];
}

const at = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((node, key) => (node !== null && typeof node === 'object' ? (node as Json)[key] : undefined), value);
const containersOf = (spec: Spec): Json[] => [
  ...(spec.initContainers ?? []),
  ...(spec.containers ?? []),
  ...(spec.ephemeralContainers ?? []),
];
const nameOf = (container: Json): string => String(container['name'] ?? '?');
/** One message per container for which `bad` holds. */
const eachContainer = (spec: Spec, bad: (container: Json) => string | undefined): string[] =>
  containersOf(spec).flatMap((container) => {
    const why = bad(container);
    return why === undefined ? [] : [`${nameOf(container)}: ${why}`];
  });
/** A pod-level field that containers may set instead: every container must end up allowed. */
const podOrEveryContainer = (spec: Spec, path: string[], allowed: (value: unknown) => boolean, what: string): string[] =>
  eachContainer(spec, (container) => {
    const own = at(container, 'securityContext', ...path);
    const value = own === undefined ? at(spec, 'securityContext', ...path) : own;
    return allowed(value) ? undefined : `${what} (is ${JSON.stringify(value)})`;
  });

// image: admitted since Kubernetes 1.33 (https://github.com/kubernetes/kubernetes/pull/130394), not yet on the page.
const ALLOWED_VOLUMES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'image',
  'persistentVolumeClaim',
  'projected',
  'secret',
];
const SAFE_SYSCTLS = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
const SELINUX_TYPES = [undefined, '', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'];
const unsetOr =
  (...allowed: unknown[]) =>
  (value: unknown): boolean =>
    value === undefined || allowed.includes(value);

/** The controls of the restricted profile, each a check over a pod spec that lists what breaks it. */
const RESTRICTED: readonly {
  readonly profile: 'baseline' | 'restricted';
  readonly control: string;
  readonly check: (spec: Spec) => string[];
}[] = [
  {
    profile: 'baseline',
    control: 'HostProcess: windowsOptions.hostProcess unset or false',
    check: (spec) => podOrEveryContainer(spec, ['windowsOptions', 'hostProcess'], unsetOr(false), 'hostProcess'),
  },
  {
    profile: 'baseline',
    control: 'Host namespaces: hostNetwork, hostPID, hostIPC unset or false',
    check: (spec) => ['hostNetwork', 'hostPID', 'hostIPC'].filter((field) => !unsetOr(false)(spec[field])).map((field) => `pod: ${field}`),
  },
  {
    profile: 'baseline',
    control: 'Privileged containers: securityContext.privileged unset or false',
    check: (spec) => eachContainer(spec, (c) => (unsetOr(false)(at(c, 'securityContext', 'privileged')) ? undefined : 'privileged')),
  },
  {
    profile: 'baseline',
    control: 'HostPath volumes: none',
    check: (spec) => (spec.volumes ?? []).filter((v) => v['hostPath'] !== undefined).map((v) => `volume ${String(v['name'])}: hostPath`),
  },
  {
    profile: 'baseline',
    control: 'Host ports: hostPort unset or 0',
    check: (spec) =>
      eachContainer(spec, (c) =>
        ((c['ports'] as Json[] | undefined) ?? []).every((p) => unsetOr(0)(p['hostPort'])) ? undefined : 'hostPort',
      ),
  },
  {
    profile: 'baseline',
    control: 'AppArmor: unset, RuntimeDefault or Localhost',
    check: (spec) => podOrEveryContainer(spec, ['appArmorProfile', 'type'], unsetOr('RuntimeDefault', 'Localhost'), 'appArmorProfile'),
  },
  {
    profile: 'baseline',
    control: 'SELinux: type unset or a container type; user and role unset',
    check: (spec) =>
      podOrEveryContainer(spec, ['seLinuxOptions', 'type'], (v) => SELINUX_TYPES.includes(v as string), 'seLinuxOptions.type')
        .concat(podOrEveryContainer(spec, ['seLinuxOptions', 'user'], unsetOr(''), 'seLinuxOptions.user'))
        .concat(podOrEveryContainer(spec, ['seLinuxOptions', 'role'], unsetOr(''), 'seLinuxOptions.role')),
  },
  {
    profile: 'baseline',
    control: '/proc mount type: unset or Default',
    check: (spec) => eachContainer(spec, (c) => (unsetOr('Default')(at(c, 'securityContext', 'procMount')) ? undefined : 'procMount')),
  },
  {
    profile: 'baseline',
    control: 'Sysctls: only the safe set',
    check: (spec) =>
      ((at(spec, 'securityContext', 'sysctls') as Json[] | undefined) ?? [])
        .filter((s) => !SAFE_SYSCTLS.includes(String(s['name'])))
        .map((s) => `pod: sysctl ${String(s['name'])}`),
  },
  {
    profile: 'restricted',
    control: 'Volume types: configMap, csi, downwardAPI, emptyDir, ephemeral, image, persistentVolumeClaim, projected, secret',
    check: (spec) =>
      (spec.volumes ?? [])
        .filter((v) => !Object.keys(v).some((key) => ALLOWED_VOLUMES.includes(key)))
        .map(
          (v) =>
            `volume ${String(v['name'])}: ${Object.keys(v)
              .filter((k) => k !== 'name')
              .join(',')}`,
        ),
  },
  {
    profile: 'restricted',
    control: 'Privilege escalation: allowPrivilegeEscalation false on every container',
    check: (spec) =>
      eachContainer(spec, (c) =>
        at(c, 'securityContext', 'allowPrivilegeEscalation') === false ? undefined : 'allowPrivilegeEscalation is not false',
      ),
  },
  {
    profile: 'restricted',
    control: 'Running as non-root: runAsNonRoot true, on the pod or on every container',
    check: (spec) => podOrEveryContainer(spec, ['runAsNonRoot'], (v) => v === true, 'runAsNonRoot is not true'),
  },
  {
    profile: 'restricted',
    control: 'Running as non-root user: runAsUser unset or not 0',
    check: (spec) => podOrEveryContainer(spec, ['runAsUser'], (v) => v !== 0, 'runAsUser 0'),
  },
  {
    profile: 'restricted',
    control: 'Seccomp: RuntimeDefault or Localhost, on the pod or on every container',
    check: (spec) =>
      podOrEveryContainer(spec, ['seccompProfile', 'type'], (v) => v === 'RuntimeDefault' || v === 'Localhost', 'seccompProfile.type'),
  },
  {
    profile: 'restricted',
    control: 'Capabilities: drop ALL; add nothing but NET_BIND_SERVICE',
    check: (spec) =>
      eachContainer(spec, (c) => {
        const drop = (at(c, 'securityContext', 'capabilities', 'drop') as string[] | undefined) ?? [];
        const add = (at(c, 'securityContext', 'capabilities', 'add') as string[] | undefined) ?? [];
        if (!drop.includes('ALL')) return 'capabilities.drop lacks ALL';
        return add.every((cap) => cap === 'NET_BIND_SERVICE') ? undefined : `capabilities.add ${add.join(',')}`;
      }),
  },
];

/** The project's own rules, beyond the standard. */
const OURS: readonly { readonly control: string; readonly check: (spec: Spec) => string[] }[] = [
  {
    control: 'readOnlyRootFilesystem true on every container',
    check: (spec) =>
      eachContainer(spec, (c) =>
        at(c, 'securityContext', 'readOnlyRootFilesystem') === true ? undefined : 'readOnlyRootFilesystem is not true',
      ),
  },
  {
    control: 'memory requests and limits on every container, the request within the limit',
    check: (spec) =>
      eachContainer(spec, (c) => {
        const request = mebibytes(at(c, 'resources', 'requests', 'memory'));
        const limit = mebibytes(at(c, 'resources', 'limits', 'memory'));
        if (request === undefined || limit === undefined) return 'memory request or limit missing';
        return request <= limit ? undefined : 'memory request above the limit';
      }),
  },
];

function mebibytes(value: unknown): number | undefined {
  const match = /^(\d+)(Mi|Gi)$/.exec(String(value ?? ''));
  return match === null ? undefined : Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
}

/** Every pod the project shows: [where, spec]. README blocks without containers (the env snippet) are not pods. */
function shownPods(): [string, Spec][] {
  const pods: [string, Spec][] = [];
  const add = (where: string, text: string): void => {
    for (const doc of parseAllDocuments(text)) {
      const spec = podSpecOf(doc.toJS());
      if (spec !== undefined) pods.push([where, spec as unknown as Spec]);
    }
  };
  for (const file of readdirSync(join(root, 'docker', 'k8s')).filter((name) => name.endsWith('.yaml'))) {
    add(`docker/k8s/${file}`, readFileSync(join(root, 'docker', 'k8s', file), 'utf8'));
  }
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  for (const [index, block] of [...readme.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].entries())
    add(`README.md yaml block ${index + 1}`, block[1] ?? '');
  return pods;
}

describe('the restricted Pod Security Standard, and read-only roots with memory bounds', () => {
  const pods = shownPods();

  test('the pods shown: both manifests and the README examples with containers', () => {
    assert.ok(pods.filter(([where]) => where.startsWith('docker/k8s/')).length >= 2);
    assert.ok(pods.filter(([where]) => where.startsWith('README.md')).length >= 2);
  });

  for (const { profile, control, check } of RESTRICTED) {
    test(`${profile}: ${control}`, () => {
      const violations = pods.flatMap(([where, spec]) => check(spec).map((why) => `${where}: ${why}`));
      assert.deepEqual(violations, []);
    });
  }
  for (const { control, check } of OURS) {
    test(`ours: ${control}`, () => {
      assert.deepEqual(
        pods.flatMap(([where, spec]) => check(spec).map((why) => `${where}: ${why}`)),
        [],
      );
    });
  }

  test('the table tells a pod that breaks it: a bare container breaks the restricted controls and ours', () => {
    const bare: Spec = {
      containers: [{ name: 'bare', image: 'x', securityContext: { runAsUser: 0 } }],
      hostPID: true,
      volumes: [{ name: 'h', hostPath: {} }],
    };
    const broken = [...RESTRICTED, ...OURS].filter(({ check }) => check(bare).length > 0).map(({ control }) => control.split(':')[0]);
    assert.deepEqual(broken, [
      'Host namespaces',
      'HostPath volumes',
      'Volume types',
      'Privilege escalation',
      'Running as non-root',
      'Running as non-root user',
      'Seccomp',
      'Capabilities',
      'readOnlyRootFilesystem true on every container',
      'memory requests and limits on every container, the request within the limit',
    ]);
  });
});
