// The kubectl plugin's commands that read the cluster: `profile` prints the cluster profile as the config file,
// `doctor` says per namespace which meshes inject and in which form, and checks the cluster's Jobs and CronJobs
// under that profile. Both read through the user's kubectl (src/manifest/cluster/kubectl.ts says why). Exit codes:
// 0 done (doctor: no error found), 1 doctor found an error, 2 a usage error, or a read that failed or was refused.

import { doctor, DOCTOR_READS } from '../cluster/doctor.ts';
import { type Kubectl, listAll, type Read, type Target } from '../cluster/kubectl.ts';
import { PROFILE_READS, profileFile, readProfile } from '../cluster/profile.ts';
import { EXIT_TOOL_USAGE, PLUGIN_NAME } from './select.ts';

/** The commands, each with its help. */
export const CLUSTER_COMMANDS = {
  profile:
    "print the cluster profile read from the current cluster (the oldest kubelet, istiod's release and " +
    'ENABLE_NATIVE_SIDECARS, linkerd-config, the cloud-sql-proxy-operator) as the config file .istio-job-run.yaml',
  doctor:
    'say per namespace which meshes inject and whether native or classic, and why; then check every Job and CronJob ' +
    'of the cluster under that profile, as check does',
} as const;
export type ClusterCommand = keyof typeof CLUSTER_COMMANDS;

/** Their flags: the kubectl flags passed on to every kubectl the command runs. */
export const CLUSTER_FLAGS = [
  { flag: '--context', argument: 'NAME', help: "the kubeconfig context to read (default: kubectl's current context)" },
  { flag: '--kubeconfig', argument: 'FILE', help: "the kubeconfig file (default: kubectl's: KUBECONFIG, else ~/.kube/config)" },
] as const;

export const isClusterCommand = (command: string | undefined): command is ClusterCommand =>
  command !== undefined && Object.hasOwn(CLUSTER_COMMANDS, command);

export interface ClusterIo {
  readonly kubectl: Kubectl;
  readonly stdout: (text: string) => void;
  readonly stderr: (line: string) => void;
}

/** `--context NAME`, `--kubeconfig FILE` (or `=VALUE`), in any order; a line saying what is wrong. */
function parseTarget(command: ClusterCommand, args: readonly string[]): Target | string {
  const target: { context?: string; kubeconfig?: string } = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const equals = arg.indexOf('=');
    const flag = arg.startsWith('--') && equals > 0 ? arg.slice(0, equals) : arg;
    const row = CLUSTER_FLAGS.find((candidate) => candidate.flag === flag);
    if (row === undefined)
      return `${command}: ${JSON.stringify(arg)} is not an option (${CLUSTER_FLAGS.map((item) => `${item.flag} ${item.argument}`).join(', ')})`;
    const value = flag === arg ? args[++i] : arg.slice(equals + 1);
    if (value === undefined || value === '') return `${command}: ${flag} needs a value (${flag} ${row.argument})`;
    target[flag === '--context' ? 'context' : 'kubeconfig'] = value;
  }
  return target;
}

/** Runs `profile` or `doctor` with their arguments; returns the exit code. */
export async function runCluster(command: ClusterCommand, args: readonly string[], io: ClusterIo): Promise<number> {
  const target = parseTarget(command, args);
  if (typeof target === 'string') {
    io.stderr(`${target} (see ${PLUGIN_NAME} help)`);
    return EXIT_TOOL_USAGE;
  }
  const reads: readonly Read[] = command === 'profile' ? PROFILE_READS : [...PROFILE_READS, ...DOCTOR_READS];
  const { objects, problems } = await listAll(io.kubectl, reads, target);
  if (problems.length > 0) {
    for (const problem of problems) io.stderr(`${command}: ${problem}`);
    return EXIT_TOOL_USAGE;
  }
  const cluster = readProfile(objects);
  if (command === 'profile') {
    for (const note of cluster.notes) io.stderr(`profile: ${note}`);
    io.stdout(profileFile(cluster, target.context));
    return 0;
  }
  return doctor(cluster, objects, io);
}
