// podman with all of its state private to one run: storage, run root and temporary files under a folder
// of its own, its own containers.conf (runc, file events, ulimits runc accepts here), every call bounded by
// `timeout -k`, and everything removed at the end.
// Used by `npm run images` (scripts/images.ts) and the runtime suite (test/runtime/).

import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { version } from './build.ts';
import { root } from './root.ts';

/** Runtime settings podman needs here: runc (crun fails), file events, a nofile limit under the hard one. */
const CONTAINERS_CONF = `[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
events_logger = "file"
`;

/** Seconds a podman call may take before `timeout` sends TERM, and KILL after a further grace. */
const DEFAULT_TIMEOUT_S = 120;
const KILL_GRACE_S = 5;

export interface PodmanResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export class Podman {
  readonly dir: string;
  readonly #env: NodeJS.ProcessEnv;

  private constructor(dir: string) {
    this.dir = dir;
    for (const sub of ['storage', 'run', 'tmp']) mkdirSync(join(dir, sub));
    writeFileSync(join(dir, 'containers.conf'), CONTAINERS_CONF);
    this.#env = { PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin', CONTAINERS_CONF: join(dir, 'containers.conf') };
  }

  /** A podman whose state lives in a new temporary folder. */
  static create(prefix = 'istio-job-run-podman-'): Podman {
    return new Podman(mkdtempSync(join(tmpdir(), prefix)));
  }

  /** Why podman cannot run here, or undefined when it can. */
  static unavailable(): string | undefined {
    const podman = Podman.create('istio-job-run-podman-check-');
    try {
      const { status } = spawnSyncStatus(podman.#argv(['info', '--format', '{{.Host.OCIRuntime.Name}}'], 30), podman.#env);
      return status === 0
        ? undefined
        : 'needs root and podman, runc, catatonit, iptables (Debian packages; `npm run setup -- --tests` installs them)';
    } finally {
      rmSync(podman.dir, { recursive: true, force: true });
    }
  }

  #argv(args: readonly string[], timeoutS: number): string[] {
    return [
      '-k',
      String(KILL_GRACE_S),
      String(timeoutS),
      'podman',
      '--root',
      join(this.dir, 'storage'),
      '--runroot',
      join(this.dir, 'run'),
      '--tmpdir',
      join(this.dir, 'tmp'),
      '--runtime',
      'runc',
      '--events-backend',
      'file',
      ...args,
    ];
  }

  /** One podman call to its end (bounded); never throws. */
  run(args: readonly string[], options: { timeoutS?: number; cwd?: string } = {}): Promise<PodmanResult> {
    return new Promise((resolve) => {
      execFile(
        'timeout',
        this.#argv(args, options.timeoutS ?? DEFAULT_TIMEOUT_S),
        {
          env: this.#env,
          cwd: options.cwd ?? root,
          maxBuffer: 64 * 1024 * 1024,
          encoding: 'utf8',
        },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  /** One podman call that must succeed: its stdout, or an error naming the call and its stderr. */
  async ok(args: readonly string[], options: { timeoutS?: number; cwd?: string } = {}): Promise<string> {
    const result = await this.run(args, options);
    if (result.code !== 0) throw new Error(`podman ${args.join(' ')}: exit ${result.code}\n${result.stderr}`);
    return result.stdout;
  }

  /** The command line of a bounded podman call, for a caller that starts and reads it (`logs -f`). */
  command(args: readonly string[], timeoutS: number): { file: string; args: string[]; env: NodeJS.ProcessEnv } {
    return { file: 'timeout', args: this.#argv(args, timeoutS), env: this.#env };
  }

  /** Everything podman made, then the folder: pods, containers, volumes, images, leftover mounts. */
  async remove(): Promise<void> {
    for (const args of [
      ['pod', 'rm', '-a', '-f'],
      ['rm', '-a', '-f'],
      ['volume', 'rm', '-a', '-f'],
      ['rmi', '-a', '-f'],
    ]) {
      await this.run(args, { timeoutS: 60 });
    }
    const mounts = readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((line) => line.split(' ')[1] ?? '')
      .filter((point) => point.startsWith(`${this.dir}/`))
      .reverse();
    for (const point of mounts) spawnSyncStatus(['-k', '2', '10', 'umount', '-l', point], this.#env);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** `timeout ARGV...` to its end, for the few calls made before or after everything else. */
function spawnSyncStatus(timeoutArgv: readonly string[], env: NodeJS.ProcessEnv): { status: number | null } {
  return spawnSync('timeout', timeoutArgv, { env, stdio: 'ignore' });
}

/** The OCI labels of the images, from the project's own records. */
export function imageLabels(): { version: string; revision: string; source: string } {
  const git = (args: string[]): string => {
    const result = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
    return result.status === 0 ? result.stdout.trim() : '';
  };
  const remote = git(['remote', 'get-url', 'origin'])
    .replace(/^git@([^:]+):/, 'https://$1/')
    .replace(/\.git$/, '');
  return { version, revision: git(['rev-parse', 'HEAD']) || 'unknown', source: remote || 'unknown' };
}

/** Builds one image from a Dockerfile in docker/, from the repository root as the README says. */
export async function buildImage(
  podman: Podman,
  options: {
    dockerfile: string;
    tag: string;
    arch?: 'x64' | 'arm64';
    manifest?: string;
  },
): Promise<void> {
  const labels = imageLabels();
  const args = [
    'build',
    '--pull=never',
    '-q',
    '-f',
    join('docker', options.dockerfile),
    '--build-arg',
    `VERSION=${labels.version}`,
    '--build-arg',
    `REVISION=${labels.revision}`,
    '--build-arg',
    `SOURCE=${labels.source}`,
  ];
  if (options.arch !== undefined) {
    args.push('--build-arg', `ARCH=${options.arch}`, '--platform', `linux/${options.arch === 'x64' ? 'amd64' : 'arm64'}`);
  }
  args.push(options.manifest === undefined ? '-t' : '--manifest', options.manifest ?? options.tag, '.');
  await podman.ok(args, { timeoutS: 300 });
}
