// Whole clusters of recorded objects (cluster-objects.ts) for the stand-in API server: a mixed one, whose one
// 1.32 node keeps Istio's default revision classic while a canary revision is set native, with Linkerd 2.20 and
// the cloud-sql-proxy-operator, a namespace that opts out of Linkerd's native sidecar, and Jobs and CronJobs of each
// kind in their namespaces.

import {
  cloudSqlProxyOperator,
  container,
  cronJob,
  istiod,
  job,
  linkerdConfig,
  namespace,
  node,
  plainDeployment,
} from './cluster-objects.ts';
import type { Recorded } from './kube-api.ts';

const REPORT = container('report', 'registry.example/nightly-report:1.0', { command: ['./report.sh'], args: ['--since', '24h'] });

export const MIXED_CLUSTER: Recorded = {
  gitVersion: 'v1.33.5-gke.1080000',
  objects: {
    nodes: [node('pool-a-1', 'v1.33.5-gke.1080000'), node('pool-a-2', 'v1.33.5-gke.1080000'), node('pool-b-1', 'v1.32.9-gke.1234000')],
    deployments: [
      plainDeployment('shop', 'web'),
      istiod('1.28.1'),
      istiod('1.29.0', { revision: 'canary', nativeSidecars: 'true' }),
      cloudSqlProxyOperator('1.7.0'),
    ],
    configmaps: [linkerdConfig('enterprise-2.20.0', true)],
    namespaces: [
      namespace('default'),
      namespace('kube-system'),
      namespace('istio-system'),
      namespace('linkerd', {}, { 'linkerd.io/inject': 'disabled' }),
      namespace('batch', { 'istio-injection': 'enabled' }),
      namespace('canary-batch', { 'istio.io/rev': 'canary' }),
      namespace('payments', {}, { 'linkerd.io/inject': 'enabled' }),
      namespace('payments-legacy', {}, { 'linkerd.io/inject': 'enabled', 'config.linkerd.io/proxy-enable-native-sidecar': 'false' }),
      namespace('ambient-apps', { 'istio.io/dataplane-mode': 'ambient' }),
      namespace('shop'),
    ],
    jobs: [
      job('batch', 'nightly-report', { containers: [REPORT] }),
      job('canary-batch', 'export', { containers: [container('export', 'registry.example/export:3.2', { command: ['/app/export'] })] }),
      job('payments', 'ledger-sync-29412345', { containers: [container('sync', 'registry.example/ledger:1.4')] }, 'ledger-sync'),
      job('default', 'db-migrate', {
        containers: [
          container('migrate', 'registry.example/migrate:5.0', { command: ['/app/migrate'] }),
          container('cloud-sql-proxy', 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.0', {
            args: ['--structured-logs', 'example-project:europe-west1:orders'],
          }),
        ],
      }),
    ],
    cronjobs: [
      cronJob('payments', 'ledger-sync', '*/15 * * * *', { containers: [container('sync', 'registry.example/ledger:1.4')] }),
      cronJob('payments-legacy', 'statement-export', '0 3 * * *', {
        containers: [container('export', 'registry.example/statements:0.9', { command: ['/app/export', '--month'] })],
      }),
    ],
  },
};
