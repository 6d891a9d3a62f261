// `kubectl istio-job-run profile` and `doctor` through the real kubectl, which finds the built executable on PATH
// as its plugin kubectl-istio_job_run, against the stand-in API server over HTTPS (test/support/kube-api.ts): the
// kubeconfig, the discovery, the lists and the 403s are kubectl's and the server's, not the plugin's. Also a
// missing kubectl and a server that is not there.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { PLUGIN_NAME } from '../../src/manifest/cli/select.ts';
import { cleanEnv, start, WRAPPER } from '../support/process.ts';
import { type KubeApi, type Recorded, startKubeApi } from '../support/kube-api.ts';
import { MIXED_CLUSTER } from '../support/clusters.ts';
import { node } from '../support/cluster-objects.ts';
import { parseFlags } from '../../src/manifest/cli/flags.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-cluster-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const bin = join(scratch, 'bin');
spawnSync('mkdir', [bin]);
symlinkSync(WRAPPER, join(bin, PLUGIN_NAME));

const KUBECTL = spawnSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).stdout.trim();
const skip = KUBECTL === '' ? "kubectl is not installed (the Kubernetes project's packages; Debian 12 has none)" : false;
/** kubectl's folder and the plugin's, nothing else the user has. */
const PATH = `${bin}:${KUBECTL.slice(0, KUBECTL.lastIndexOf('/'))}`;
const TIMEOUT_MS = 60_000;

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `kubectl istio-job-run ARGS` against API, its discovery cache in the stand-in's folder. */
async function kubectlPlugin(api: Pick<KubeApi, 'kubeconfig' | 'dir'>, args: readonly string[], path = PATH): Promise<Result> {
  const env = cleanEnv({ PATH: path, KUBECONFIG: api.kubeconfig, HOME: api.dir });
  return start('kubectl', ['istio-job-run', ...args], { env, timeoutMs: TIMEOUT_MS }).finished;
}

/** A process's command name (/proc/PID/comm); '' once it is gone. */
function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Every process below PID, from each process's parent in /proc/N/stat. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const below: number[] = [];
  for (let frontier = [pid]; frontier.length > 0; ) {
    frontier = [...parents].filter(([, parent]) => frontier.includes(parent)).map(([child]) => child);
    below.push(...frontier);
  }
  return below;
}

/** The profile --check reads from TEXT as its config file. */
function readBack(text: string): unknown {
  const files = { cwd: '/repo', read: (path: string) => (path === '/repo/.istio-job-run.yaml' ? text : undefined), exists: () => true };
  const request = parseFlags(['--check', 'job.yaml', '--config', '/repo/.istio-job-run.yaml'], {}, files);
  assert.equal(request.kind, 'check', JSON.stringify(request));
  return 'profile' in request ? request.profile : undefined;
}

async function withApi<T>(recorded: Recorded, work: (api: KubeApi) => Promise<T>): Promise<T> {
  const api = await startKubeApi(recorded);
  try {
    return await work(api);
  } finally {
    await api.close();
  }
}

describe('kubectl istio-job-run profile', { skip, timeout: 5 * TIMEOUT_MS }, () => {
  test('the oldest kubelet, istiod, linkerd-config and the operator, as the config file', async () => {
    const result = await withApi(MIXED_CLUSTER, (api) => kubectlPlugin(api, ['profile']));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^# kubernetes: the oldest kubelet: node pool-b-1, v1\.32\.9-gke\.1234000$/m);
    assert.match(
      result.stdout,
      /^# istio: istiod istio-system\/istiod \(revision default\): docker\.io\/istio\/pilot:1\.28\.1, ENABLE_NATIVE_SIDECARS unset$/m,
    );
    assert.match(result.stdout, /^# linkerd: linkerd-config in linkerd: linkerdVersion enterprise-2\.20\.0, proxy\.nativeSidecar true$/m);
    assert.match(
      result.stdout,
      /^# cloud-sql-proxy-operator: Deployment cloud-sql-proxy-operator-system\/cloud-sql-proxy-operator-controller-manager: /m,
    );
    assert.equal(
      result.stderr,
      `${PLUGIN_NAME}: profile: istiod istio-system/istiod-canary (revision canary, docker.io/istio/pilot:1.29.0) is left out: ` +
        'the profile holds one Istio; doctor tells each namespace by its own revision\n',
    );
    // The profile model's reader takes the file back as the same profile.
    assert.deepEqual(readBack(result.stdout), {
      kubernetes: [1, 32],
      meshes: [
        { name: 'istio', version: [1, 28] },
        { name: 'linkerd', version: [2, 20], setting: 'native' },
        { name: 'cloud-sql-proxy-operator', version: [1, 7] },
      ],
    });
  });

  test('RBAC refuses the nodes: one line naming them and the permission, nothing printed, exit 2', async () => {
    const result = await withApi({ ...MIXED_CLUSTER, forbidden: ['nodes', 'configmaps'] }, (api) => kubectlPlugin(api, ['profile']));
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.equal(
      result.stderr,
      `${PLUGIN_NAME}: profile: cannot read the nodes (their kubelets' versions): nodes is forbidden: User "jane@example.com" cannot ` +
        'list resource "nodes" in API group "" at the cluster scope: needs list on nodes at the cluster scope (a ClusterRole rule ' +
        '{apiGroups: [""], resources: ["nodes"], verbs: ["list"]})\n' +
        `${PLUGIN_NAME}: profile: cannot read Linkerd's linkerd-config ConfigMap: configmaps is forbidden: User "jane@example.com" ` +
        'cannot list resource "configmaps" in API group "" at the cluster scope: needs list on configmaps in every namespace (a ' +
        'ClusterRole rule {apiGroups: [""], resources: ["configmaps"], verbs: ["list"]})\n',
    );
  });

  test('no kubectl on PATH: one line saying so, exit 2', async () => {
    const env = cleanEnv({ PATH: bin, HOME: scratch });
    const result = await start(join(bin, PLUGIN_NAME), ['profile'], { env, timeoutMs: TIMEOUT_MS }).finished;
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      `${PLUGIN_NAME}: profile: kubectl is not on PATH: profile and doctor read the cluster through it (install kubectl: ` +
        'https://kubernetes.io/docs/tasks/tools/)\n',
    );
  });

  test('TERM while kubectl waits on the server: kubectl and what it started end too, then the plugin by TERM', async () => {
    await withApi({ ...MIXED_CLUSTER, hang: ['nodes'] }, async (api) => {
      const env = cleanEnv({ PATH, KUBECONFIG: api.kubeconfig, HOME: api.dir });
      const running = start('kubectl', ['istio-job-run', 'profile'], { env, timeoutMs: TIMEOUT_MS });
      await api.requested(/^GET \/api\/v1\/nodes\?/);
      const kubectls = descendants(running.pid).filter((pid) => commandOf(pid).startsWith('kubectl'));
      assert.notEqual(kubectls.length, 0, 'no kubectl under the plugin');
      running.process.kill('SIGTERM');
      const result = await running.finished;
      assert.deepEqual([result.code, result.stdout], [143, '']);
      assert.deepEqual(
        kubectls.filter((pid) => existsSync(`/proc/${pid}`)),
        [],
        'a kubectl the plugin started outlived it',
      );
    });
  });

  test("credentials the server does not take: kubectl's line, exit 2; --help: the usage, with both commands", async () => {
    const result = await withApi(MIXED_CLUSTER, async (api) => {
      spawnSync('sed', ['-i', 's/token: stand-in-token/token: expired/', api.kubeconfig]);
      return kubectlPlugin(api, ['profile']);
    });
    assert.deepEqual(
      [result.code, result.stdout, result.stderr],
      [
        2,
        '',
        `${PLUGIN_NAME}: profile: kubectl get nodes failed (exit 1): error: You must be logged in to the server (the server has asked for the client to provide credentials)\n`,
      ],
    );
    const help = await withApi(MIXED_CLUSTER, (api) => kubectlPlugin(api, ['doctor', '--help']));
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, new RegExp(`^ {7}${PLUGIN_NAME} profile \\[--context NAME\\] \\[--kubeconfig FILE\\]$`, 'm'));
    assert.match(help.stdout, new RegExp(`^ {7}${PLUGIN_NAME} doctor \\[--context NAME\\] \\[--kubeconfig FILE\\]$`, 'm'));
  });

  test("a server that is not there: kubectl's own line, exit 2", async () => {
    const api = await startKubeApi(MIXED_CLUSTER);
    const dir = mkdtempSync(join(scratch, 'gone-'));
    const gone = { dir, kubeconfig: api.kubeconfig.replace(api.dir, dir) };
    spawnSync('cp', [api.kubeconfig, join(api.dir, 'server.crt'), dir]);
    spawnSync('sed', ['-i', `s|${api.dir}|${dir}|`, gone.kubeconfig]);
    await api.close();
    const result = await kubectlPlugin(gone, ['profile']);
    assert.equal(result.code, 2);
    const port = new URL(api.server).port;
    assert.match(
      result.stderr,
      new RegExp(
        `^${PLUGIN_NAME}: profile: kubectl get nodes failed \\(exit 1\\): The connection to the server 127\\.0\\.0\\.1:${port} was refused - did you specify the right host or port\\?\n$`,
      ),
    );
  });
});

describe('kubectl istio-job-run doctor', { skip, timeout: 5 * TIMEOUT_MS }, () => {
  test('per namespace, who injects, native or classic and why; then the check of every Job and CronJob', async () => {
    const result = await withApi(MIXED_CLUSTER, (api) => kubectlPlugin(api, ['doctor']));
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stdout,
      /^namespace batch: istio injects \(label istio-injection=enabled\): classic: .*node pool-b-1 runs kubelet v1\.32\.9-gke\.1234000$/m,
    );
    assert.match(result.stdout, /^namespace canary-batch: istio injects \(label istio\.io\/rev=canary\): native: /m);
    assert.match(result.stdout, /^namespace payments: linkerd injects \(annotation linkerd\.io\/inject=enabled\): native: /m);
    assert.match(
      result.stdout,
      /^namespace payments-legacy: linkerd injects \(annotation linkerd\.io\/inject=enabled\): classic: the namespace's config\.linkerd\.io\/proxy-enable-native-sidecar: "false", which the injector copies to the pods there$/m,
    );
    assert.match(
      result.stdout,
      /^payments-legacy\/cronjob\/statement-export: error: unwrapped: CronJob statement-export gets a classic linkerd-proxy /m,
    );
    assert.match(result.stdout, /^namespace ambient-apps: istio: no sidecar \(label istio\.io\/dataplane-mode=ambient/m);
    assert.match(result.stdout, /^batch\/job\/nightly-report: error: unwrapped: /m);
    assert.doesNotMatch(result.stdout, /canary-batch\/job\/export: error|payments\/|ledger-sync-29412345/);
    assert.match(result.stdout, /^checked 3 Jobs and 2 CronJobs: /m);
  });

  test('every node 1.33+: the same Istio injects native, and its Job is clean', async () => {
    const nodes = [node('pool-a-1', 'v1.33.5-gke.1080000'), node('pool-b-1', 'v1.34.1-gke.1040000')];
    const result = await withApi({ ...MIXED_CLUSTER, objects: { ...MIXED_CLUSTER.objects, nodes } }, (api) =>
      kubectlPlugin(api, ['doctor', '--context', 'stand-in']),
    );
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stdout,
      /^namespace batch: istio injects \(label istio-injection=enabled\): native: istio 1\.28 injects it native: every node is 1\.33\+$/m,
    );
    assert.doesNotMatch(result.stdout, /nightly-report/);
    assert.match(result.stdout, /^default\/job\/db-migrate: error: unwrapped: /m);
  });

  test("a context the kubeconfig does not have: kubectl's line, exit 2; an option it does not take: a usage line", async () => {
    const result = await withApi(MIXED_CLUSTER, (api) => kubectlPlugin(api, ['doctor', '--context=elsewhere']));
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      `${PLUGIN_NAME}: doctor: kubectl get nodes failed (exit 1): Error in configuration: context was not found for specified context: elsewhere\n`,
    );
    const usage = await withApi(MIXED_CLUSTER, (api) => kubectlPlugin(api, ['doctor', '-A']));
    assert.deepEqual(
      [usage.code, usage.stderr],
      [2, `${PLUGIN_NAME}: doctor: "-A" is not an option (--context NAME, --kubeconfig FILE) (see ${PLUGIN_NAME} help)\n`],
    );
  });

  test('RBAC refuses the Jobs: one line naming them and the permission, exit 2', async () => {
    const result = await withApi({ ...MIXED_CLUSTER, forbidden: ['jobs'] }, (api) => kubectlPlugin(api, ['doctor']));
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.equal(
      result.stderr,
      `${PLUGIN_NAME}: doctor: cannot read the Jobs: jobs.batch is forbidden: User "jane@example.com" cannot list resource "jobs" ` +
        'in API group "batch" at the cluster scope: needs list on jobs.batch in every namespace (a ClusterRole rule ' +
        '{apiGroups: ["batch"], resources: ["jobs"], verbs: ["list"]})\n',
    );
  });
});
