// A private user namespace (with its own mount namespace) in which a test is root, also from inside a chroot.
// The kernel refuses CLONE_NEWUSER to a chrooted process: one whose root is not the root of its mount namespace
// (a fresh machine built with debootstrap and entered with chroot is one). There the namespace is entered in two steps:
// first a private mount namespace whose root is moved onto the chroot's root (the `pivot_root . .` and `umount -l .`
// idiom of runc), so the process is no longer chrooted, and only then the user namespace.

import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';

/** unshare and its arguments that run `sh -c SCRIPT sh ARGS...` as root of a new user and mount namespace. */
export function userNamespaceArgv(script: string, args: readonly string[]): [string, string[]] {
  const userns = ['--user', '--map-root-user', '--mount', '--', 'sh', '-c', script, 'sh', ...args];
  if (!chrooted()) return ['unshare', userns];
  // In the private mount namespace: nsenter into that same namespace resets the root to the namespace's root while
  // keeping the working directory (--wd), the chroot's root; pivot_root makes that directory the namespace's root
  // (it is a mount point of its own, as pivot_root requires) and the old root, stacked on it, is detached.
  const pivot = 'pivot_root . . && umount -l . && cd / && exec "$@"';
  const enter = `cd / && exec nsenter --target "$$" --mount --wd -- sh -c '${pivot}' sh "$@"`;
  return ['unshare', ['--mount', '--propagation', 'private', '--', 'sh', '-c', enter, 'sh', 'unshare', ...userns]];
}

/**
 * True when this process's root is not the root of its mount namespace: entering that same namespace (nsenter, which
 * needs root) resets the root to the namespace's, whose device and inode are then compared with this process's root.
 * Where the namespace cannot be entered, the process cannot have chrooted either: false.
 */
function chrooted(): boolean {
  let namespaceRoot: string;
  try {
    namespaceRoot = execFileSync('nsenter', ['--mount=/proc/self/ns/mnt', '--', 'stat', '--format', '%d:%i', '/'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return false;
  }
  const own = statSync('/');
  return namespaceRoot !== `${own.dev}:${own.ino}`;
}
