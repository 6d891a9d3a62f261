// Images without any libc, on this machine: a chroot that holds a static busybox and nothing else (or
// nothing at all), with host folders bind-mounted at the paths a pod would mount its volumes, run in its
// own mount and PID namespaces so the entrypoint is PID 1 and nothing is left mounted afterwards.

import { execFileSync, type SpawnOptions } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { start, type Running } from './process.ts';

export const BUSYBOX = '/bin/busybox';
const APPLETS = ['sh', 'echo', 'cat', 'sleep', 'ls', 'true', 'false', 'hostname'];

export interface Root {
  readonly path: string;
  remove(): void;
}

/** An empty root, or one with busybox as /bin/busybox and its applets. */
export function makeRoot(options: { busybox: boolean }): Root {
  const path = mkdtempSync(join(tmpdir(), 'istio-job-run-root-'));
  mkdirSync(join(path, 'proc'));
  if (options.busybox) {
    mkdirSync(join(path, 'bin'));
    copyFileSync(BUSYBOX, join(path, 'bin', 'busybox'));
    for (const applet of APPLETS) symlinkSync('busybox', join(path, 'bin', applet));
  }
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface ChrootOptions {
  /** [host path, path inside the root]: bind mounts, as a pod's volume mounts. */
  readonly mounts?: readonly (readonly [string, string])[];
  /** Mount /proc inside (default). Without it the launcher finds itself from argv[0]. */
  readonly proc?: boolean;
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
}

/** Runs argv inside the root, as PID 1 of a new PID namespace (the host PID is pidOne(running.pid)). */
export function inChroot(root: Root, argv: readonly string[], options: ChrootOptions = {}): Running {
  const script = [
    'set -e',
    ...(options.mounts ?? []).map(([host, inside]) => `mkdir -p "$0${inside}" && mount --bind "${host}" "$0${inside}"`),
    ...(options.proc === false ? [] : ['mount -t proc proc "$0/proc"']),
    'exec chroot "$0" "$@"',
  ].join('\n');
  // The host's PATH finds mount and chroot; inside the root only /bin exists.
  const spawnOptions: SpawnOptions & { timeoutMs?: number } = { env: options.env ?? { PATH: '/bin:/usr/bin:/sbin:/usr/sbin' } };
  if (options.timeoutMs !== undefined) spawnOptions.timeoutMs = options.timeoutMs;
  return start('unshare', ['--mount', '--pid', '--fork', '--', '/bin/sh', '-c', script, root.path, ...argv], spawnOptions);
}

/** Why this machine cannot build such roots (it needs root, unshare and a static busybox), or undefined when it can. */
export function whyChrootsFail(): string | undefined {
  try {
    execFileSync('unshare', ['--mount', '--pid', '--fork', 'true'], { stdio: 'ignore' });
    execFileSync(BUSYBOX, ['true'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'needs root, unshare and a static busybox (Debian busybox-static)';
  }
}
