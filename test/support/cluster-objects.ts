// Recorded objects of a cluster, in the shapes the API server returns them (its defaults filled in), for the
// stand-in API server (kube-api.ts) and the readings of src/manifest/cluster/: nodes with their kubelets, istiod
// Deployments as Istio's istio-discovery chart makes them (labels app: istiod and istio.io/rev, the container
// `discovery` of the pilot image, ENABLE_NATIVE_SIDECARS in its env where set), the linkerd-config ConfigMap
// whose `values` hold the Helm values of the install (linkerdVersion, proxy.nativeSidecar), the
// cloud-sql-proxy-operator's Deployment as its release manifest installs it, namespaces, Jobs and CronJobs.

import type { KubeObject } from './kube-api.ts';

/** A node whose kubelet reports VERSION (`v1.33.5-gke.1080000`). */
export function node(name: string, kubeletVersion: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': 'e2-standard-4',
      },
    },
    spec: { podCIDR: '10.8.0.0/24', providerID: `gce://example-project/europe-west1-b/${name}` },
    status: {
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }],
      nodeInfo: {
        architecture: 'amd64',
        containerRuntimeVersion: 'containerd://2.0.4',
        kernelVersion: '6.6.72+',
        kubeProxyVersion: kubeletVersion,
        kubeletVersion,
        operatingSystem: 'linux',
        osImage: 'Container-Optimized OS from Google',
      },
    },
  };
}

/** An istiod of REVISION ('default' for the chart's default) at VERSION, with ENABLE_NATIVE_SIDECARS where given. */
export function istiod(version: string, options: { revision?: string; nativeSidecars?: string } = {}): KubeObject {
  const revision = options.revision ?? 'default';
  const labels = { app: 'istiod', 'istio.io/rev': revision, istio: 'pilot', release: 'istiod', 'app.kubernetes.io/version': version };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: revision === 'default' ? 'istiod' : `istiod-${revision}`, namespace: 'istio-system', labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'istiod', 'istio.io/rev': revision } },
      template: {
        metadata: { labels, annotations: { 'prometheus.io/port': '15014', 'sidecar.istio.io/inject': 'false' } },
        spec: {
          serviceAccountName: revision === 'default' ? 'istiod' : `istiod-${revision}`,
          containers: [
            {
              name: 'discovery',
              image: `docker.io/istio/pilot:${version}`,
              args: ['discovery', '--monitoringAddr=:15014', '--log_output_level=default:info', '--domain', 'cluster.local'],
              env: [
                { name: 'REVISION', value: revision },
                { name: 'PILOT_CERT_PROVIDER', value: 'istiod' },
                { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
                ...(options.nativeSidecars === undefined ? [] : [{ name: 'ENABLE_NATIVE_SIDECARS', value: options.nativeSidecars }]),
                { name: 'ISTIOD_ADDR', value: `istiod${revision === 'default' ? '' : `-${revision}`}.istio-system.svc:15012` },
              ],
              ports: [
                { containerPort: 8080, protocol: 'TCP' },
                { containerPort: 15010, protocol: 'TCP' },
                { containerPort: 15017, protocol: 'TCP' },
              ],
              readinessProbe: { httpGet: { path: '/ready', port: 8080, scheme: 'HTTP' }, periodSeconds: 3 },
            },
          ],
        },
      },
    },
  };
}

/** The linkerd-config ConfigMap of an install at VERSION (`enterprise-2.20.0`) with proxy.nativeSidecar as given. */
export function linkerdConfig(version: string, nativeSidecar: boolean | undefined, namespace = 'linkerd'): KubeObject {
  const values = [
    'clusterDomain: cluster.local',
    'clusterNetworks: 10.0.0.0/8,100.64.0.0/10,172.16.0.0/12,192.168.0.0/16',
    'controllerImage: cr.l5d.io/linkerd/controller',
    'controllerReplicas: 1',
    'identityTrustDomain: cluster.local',
    `linkerdVersion: ${version}`,
    'proxy:',
    '  await: true',
    '  enableShutdownEndpoint: false',
    '  image:',
    '    name: cr.l5d.io/linkerd/proxy',
    '    pullPolicy: ""',
    '    version: ""',
    ...(nativeSidecar === undefined ? [] : [`  nativeSidecar: ${nativeSidecar}`]),
    '  ports:',
    '    admin: 4191',
    '    control: 4190',
    '    inbound: 4143',
    '    outbound: 4140',
    'proxyInit:',
    '  runAsRoot: false',
    '',
  ].join('\n');
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'linkerd-config',
      namespace,
      labels: { 'linkerd.io/control-plane-component': 'controller', 'linkerd.io/control-plane-ns': namespace },
      annotations: { 'linkerd.io/created-by': `linkerd/helm ${version}` },
    },
    data: { values },
  };
}

/** The cloud-sql-proxy-operator's Deployment at VERSION, as its release manifest installs it. */
export function cloudSqlProxyOperator(version: string): KubeObject {
  const labels = { 'control-plane': 'controller-manager' };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'cloud-sql-proxy-operator-controller-manager', namespace: 'cloud-sql-proxy-operator-system', labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels, annotations: { 'kubectl.kubernetes.io/default-container': 'manager' } },
        spec: {
          containers: [
            {
              name: 'kube-rbac-proxy',
              image: 'gcr.io/kubebuilder/kube-rbac-proxy:v0.16.0',
              args: ['--secure-listen-address=0.0.0.0:8443', '--upstream=http://127.0.0.1:8080/', '--v=0'],
            },
            {
              name: 'manager',
              image: `gcr.io/cloud-sql-connectors/cloud-sql-proxy-operator:${version}`,
              command: ['/manager'],
              args: ['--health-probe-bind-address=:8081', '--metrics-bind-address=127.0.0.1:8080', '--leader-elect'],
            },
          ],
          serviceAccountName: 'cloud-sql-proxy-operator-controller-manager',
        },
      },
    },
  };
}

/** A Deployment of no interest here (an application), so that a list holds more than the ones read. */
export function plainDeployment(namespace: string, name: string): KubeObject {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name, image: `registry.example/${name}:2.1.0` }] } },
    },
  };
}

/** A namespace with LABELS and ANNOTATIONS; the API server adds kubernetes.io/metadata.name itself. */
export function namespace(name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      labels: { 'kubernetes.io/metadata.name': name, ...labels },
      ...(Object.keys(annotations).length === 0 ? {} : { annotations }),
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

/** A container as the API server stores it: its defaults filled in. */
export function container(name: string, image: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    image,
    imagePullPolicy: 'IfNotPresent',
    resources: {},
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    ...fields,
  };
}

interface PodTemplate {
  readonly containers: readonly Record<string, unknown>[];
  readonly initContainers?: readonly Record<string, unknown>[];
  readonly annotations?: Record<string, string>;
  readonly labels?: Record<string, string>;
  readonly restartPolicy?: 'Never' | 'OnFailure';
}

const UID = '6f1c2a4e-0d7b-4c59-9a7e-3b2f1e0c8d91';

function podSpec(pod: PodTemplate): Record<string, unknown> {
  return {
    ...(pod.initContainers === undefined ? {} : { initContainers: pod.initContainers }),
    containers: pod.containers,
    dnsPolicy: 'ClusterFirst',
    restartPolicy: pod.restartPolicy ?? 'Never',
    schedulerName: 'default-scheduler',
    securityContext: {},
    terminationGracePeriodSeconds: 30,
  };
}

/** A Job as the API server returns it; `owner` names the CronJob that made it. */
export function job(namespace: string, name: string, pod: PodTemplate, owner?: string): KubeObject {
  const selector = { 'batch.kubernetes.io/controller-uid': UID };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace,
      uid: UID,
      labels: { ...selector, 'batch.kubernetes.io/job-name': name, 'controller-uid': UID, 'job-name': name },
      ...(owner === undefined
        ? {}
        : {
            ownerReferences: [
              { apiVersion: 'batch/v1', kind: 'CronJob', name: owner, uid: UID, controller: true, blockOwnerDeletion: true },
            ],
          }),
    },
    spec: {
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      completions: 1,
      manualSelector: false,
      parallelism: 1,
      podReplacementPolicy: 'TerminatingOrFailed',
      selector: { matchLabels: selector },
      suspend: false,
      template: {
        metadata: {
          ...(pod.annotations === undefined ? {} : { annotations: pod.annotations }),
          labels: { ...selector, 'batch.kubernetes.io/job-name': name, 'controller-uid': UID, 'job-name': name, ...pod.labels },
        },
        spec: podSpec(pod),
      },
    },
    status: { active: 1, ready: 1, startTime: '2026-12-07T01:00:00Z', terminating: 0, uncountedTerminatedPods: {} },
  };
}

/** A CronJob as the API server returns it. */
export function cronJob(namespace: string, name: string, schedule: string, pod: PodTemplate): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace, uid: UID },
    spec: {
      concurrencyPolicy: 'Forbid',
      failedJobsHistoryLimit: 1,
      schedule,
      successfulJobsHistoryLimit: 3,
      suspend: false,
      jobTemplate: {
        metadata: {},
        spec: {
          backoffLimit: 2,
          template: {
            metadata: {
              ...(pod.annotations === undefined ? {} : { annotations: pod.annotations }),
              ...(pod.labels === undefined ? {} : { labels: pod.labels }),
            },
            spec: podSpec(pod),
          },
        },
      },
    },
    status: { lastScheduleTime: '2026-12-07T00:00:00Z' },
  };
}
