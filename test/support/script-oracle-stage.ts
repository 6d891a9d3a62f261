// Where the oracle (script-oracle.ts) runs real scripts: the proof's pod (fixtures/proof-pod.c, its network and PID
// namespace, its stand-in of the sidecar on loopback) inside a mount namespace of its own whose root is an overlay
// of this machine's root, read-only beneath, with the stubs on top and every write kept in memory and dropped at the
// end. Every program a script names is a stub (the pod's binary by another name, $PROOF_FAILING saying which fail)
// at the path the script names it by, save the shells, the programs that run their arguments (timeout, env, nice...),
// pgrep, pidof and pkill, and the programs that speak to the sidecar: curl, wget, python and node are the real ones
// where their command names loopback, and stubs elsewhere.

import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { ISTIO, kindNamed } from '../../src/config/kinds.ts';
import { FIXTURES, NODE } from './process.ts';
import type { Launch, Stage } from './script-proof.ts';

/** The folder the oracle's own files sit in, inside the root. */
export const ORACLE = '/oracle';
/** The stubs of programs named without a folder: first on PATH after the image's sh. */
const STUBS = `${ORACLE}/bin`;
/** Where a script runs from (its relative programs are stubs there), unless its container names a workingDir. */
export const WORK_DIR = `${ORACLE}/work`;
const POD = `${ORACLE}/proof-pod`;

/** The programs that stay real: the shells, what runs its arguments, the process tools a watcher or a quit uses. */
export const REAL = new Set([
  'sh',
  'bash',
  'dash',
  'ash',
  'busybox',
  'timeout',
  'env',
  'nice',
  'nohup',
  'setsid',
  'stdbuf',
  'tini',
  'dumb-init',
  'pgrep',
  'pidof',
  'pkill',
  'kill',
  'istio-job-run',
]);

/** Programs that speak to the sidecar where their command names loopback: real there, stubs elsewhere. */
export const SPEAKERS = ['curl', 'wget', 'python3', 'python', 'node'] as const;

/** The shell each dialect is run by: its path inside the root, and what sh is where the image's sh is that dialect. */
export const SHELLS = {
  dash: { run: '/bin/dash', sh: '/bin/dash' },
  bash: { run: '/bin/bash', sh: '/bin/bash' },
  'bash-posix': { run: `${ORACLE}/shells/posix/sh`, sh: '/bin/bash' },
  ash: { run: `${ORACLE}/shells/ash`, sh: '/bin/busybox' },
} as const;

export type Dialect = keyof typeof SHELLS;

/** The PATH of a container whose image's sh is SH. */
export const pathFor = (sh: Dialect): string => `${ORACLE}/sh/${sh}:${STUBS}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;

/** Where the pod's sidecar processes run from, as in istio-proxy's image: `pkill -f /usr/local/bin/pilot-agent` finds them. */
const SIDECAR_DIR = '/usr/local/bin';

/** linkerd-await's stand-in: it waits for the proxy, runs its command, and with --shutdown tells the proxy to quit. */
function linkerdAwait(): string {
  const linkerd = kindNamed('linkerd');
  const url = (path: string): string => `http://127.0.0.1:${linkerd.listeners[0]?.port ?? 0}${path}`;
  return [
    '#!/bin/dash',
    "# The oracle's linkerd-await: waits for the proxy, runs its command, and with --shutdown tells the proxy to quit.",
    'shutdown=',
    'while [ $# -gt 0 ]; do',
    '  case $1 in',
    '    -S|--shutdown) shutdown=1; shift ;;',
    '    -v|--verbose) shift ;;',
    '    --) shift; break ;;',
    '    -*=*) shift ;;',
    '    -*) shift 2 ;;',
    '    *) break ;;',
    '  esac',
    'done',
    `/usr/bin/curl -sf -o /dev/null ${url(linkerd.ready?.path ?? '/ready')}`,
    '"$@"',
    'status=$?',
    `[ -z "$shutdown" ] || /usr/bin/curl -sf -o /dev/null -X POST ${url(linkerd.quit.path)}`,
    'exit $status',
    '',
  ].join('\n');
}

/** Writes the downward API's files of a pod (`PATH TEXT`... `--`), as kubelet does, then runs the container's command. */
export const PODINFO = `${ORACLE}/podinfo`;
const PODINFO_SCRIPT = [
  '#!/bin/dash',
  "# The oracle: the files of the pod's downward API volumes (PATH TEXT ... --), then the container's command.",
  'while [ "$1" != -- ]; do mkdir -p "$1"; rmdir "$1"; printf \'%s\' "$2" > "$1"; shift 2; done',
  'shift',
  'exec "$@"',
  '',
].join('\n');

/** A dispatcher: the real program (REAL, with its arguments) where the command names loopback, else the stub. */
function dispatcher(real: string, stub: string): string {
  return [
    '#!/bin/dash',
    "# The oracle: the real program where the command speaks to loopback (the pod's sidecar), else a stub.",
    'PATH=/usr/bin:/bin',
    "loopback='localhost|127\\.[0-9]+\\.[0-9]+\\.[0-9]+|0\\.0\\.0\\.0|\\[::1\\]'",
    `if printf '%s\\n' "$@" | grep -Eq "$loopback"; then exec ${real} "$@"; fi`,
    'for word in "$@"; do',
    '  [ "$word" = - ] || continue',
    `  input=$(mktemp); cat > "$input"`,
    `  if grep -Eq "$loopback" "$input"; then exec ${real} "$@" < "$input"; fi`,
    `  exec ${stub} "$@" < "$input"`,
    'done',
    `exec ${stub} "$@"`,
    '',
  ].join('\n');
}

/** The oracle's stage: the proof's Stage, the layer of stubs to put over the root, and how a pod is started. */
export interface OracleStage extends Stage {
  readonly launch: Launch;
  remove(): void;
}

/**
 * A stage whose root has a stub at each path of PROGRAMS (a name alone: on PATH; a relative path: under the
 * working folder it runs from, WORK_DIR unless given) and the folders of FOLDERS.
 */
export function oracleStage(
  programs: readonly { readonly name: string; readonly cwd: string }[],
  folders: readonly string[],
  files: readonly { readonly path: string; readonly shell: string }[],
): OracleStage {
  const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-oracle-'));
  const layer = join(dir, 'layer');
  const inLayer = (path: string): string => join(layer, path);
  for (const sub of [STUBS, WORK_DIR, `${ORACLE}/shells/posix`, ...Object.keys(SHELLS).map((sh) => `${ORACLE}/sh/${sh}`)])
    mkdirSync(inLayer(sub), { recursive: true });
  execFileSync('gcc', ['-O2', '-Wall', '-Werror', '-o', inLayer(POD), join(FIXTURES, 'proof-pod.c')], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  symlinkSync('/bin/busybox', inLayer(`${ORACLE}/shells/ash`));
  symlinkSync('/bin/bash', inLayer(`${ORACLE}/shells/posix/sh`));
  for (const [name, shell] of Object.entries(SHELLS)) symlinkSync(shell.sh, inLayer(`${ORACLE}/sh/${name}/sh`));
  // The stubs of the speakers, which their dispatchers run where the command names no loopback.
  mkdirSync(inLayer(`${ORACLE}/stub`));
  for (const speaker of SPEAKERS) symlinkSync(POD, inLayer(`${ORACLE}/stub/${speaker}`));
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(inLayer(path)), { recursive: true });
    writeFileSync(inLayer(path), text);
    chmodSync(inLayer(path), 0o755);
  };
  for (const speaker of SPEAKERS) {
    const real = speaker === 'node' ? NODE : speaker === 'python' ? '/usr/bin/python3' : `/usr/bin/${speaker}`;
    write(`${STUBS}/${speaker}`, dispatcher(real, `${ORACLE}/stub/${speaker}`));
  }
  // An image whose sh is busybox's has busybox's wget.
  write(`${ORACLE}/sh/ash/wget`, dispatcher('/bin/busybox wget', `${ORACLE}/stub/wget`));
  mkdirSync(inLayer(SIDECAR_DIR), { recursive: true });
  for (const process of ISTIO.template.processes) symlinkSync(POD, inLayer(`${SIDECAR_DIR}/${process}`));
  write(PODINFO, PODINFO_SCRIPT);
  const LINKERD_AWAIT = `${ORACLE}/wrappers/linkerd-await`;
  mkdirSync(dirname(inLayer(LINKERD_AWAIT)));
  write(LINKERD_AWAIT, linkerdAwait());
  const at = (name: string, cwd: string): string => (isAbsolute(name) ? name : join(cwd, name));
  const link = (target: string, path: string): void => {
    mkdirSync(dirname(inLayer(path)), { recursive: true });
    try {
      symlinkSync(target, inLayer(path));
    } catch {}
  };
  for (const { name, cwd } of [...programs, { name: 'linkerd-await', cwd: '/' }]) {
    const base = name.slice(name.lastIndexOf('/') + 1);
    if (REAL.has(base) || (SPEAKERS as readonly string[]).includes(base) || base === '' || base === '.' || base === '..') continue;
    link(base === 'linkerd-await' ? LINKERD_AWAIT : POD, name.includes('/') ? at(name, cwd) : `${STUBS}/${name}`);
  }
  // A script file a shell runs (`/bin/sh /config/initialize`): the job's work by the shell's name, as the model has it;
  // a sourced one: empty, as the model reads past it.
  for (const { path, shell } of files) {
    if (shell === '.') {
      if (!existsSync(inLayer(path))) write(path, '');
      continue;
    }
    link(POD, `${ORACLE}/named/${shell}`);
    if (!existsSync(inLayer(path))) write(path, `exec ${ORACLE}/named/${shell} "$@"\n`);
  }
  for (const folder of folders) mkdirSync(inLayer(folder), { recursive: true });
  const pods = join(dir, 'pods');
  const out = join(dir, 'out');
  for (const sub of [pods, out]) mkdirSync(sub);
  copyFileSync(inLayer(POD), join(dir, 'proof-pod'));
  // Each pod: a mount namespace whose root is the overlay; the stage's folder bound into it, so its outputs stay.
  const prelude = [
    'set -e',
    'stage=$1 pods=$2; shift 2',
    'top=$(mktemp -d "$pods/pod-XXXXXX")',
    'mkdir "$top/rw" "$top/root"',
    'mount -t tmpfs tmpfs "$top/rw"',
    'mkdir "$top/rw/upper" "$top/rw/work" "$top/rw/layer"',
    'cp -a "$stage/layer/." "$top/rw/layer/"',
    'mount -t overlay overlay -o "lowerdir=$top/rw/layer:/,upperdir=$top/rw/upper,workdir=$top/rw/work" "$top/root"',
    'mount -t proc proc "$top/root/proc"',
    'mount -t tmpfs -o mode=755 tmpfs "$top/root/dev"',
    'for device in null zero full random urandom tty; do touch "$top/root/dev/$device"; mount --bind "/dev/$device" "$top/root/dev/$device"; done',
    'ln -s /proc/self/fd "$top/root/dev/fd"; ln -s fd/0 "$top/root/dev/stdin"; ln -s fd/1 "$top/root/dev/stdout"; ln -s fd/2 "$top/root/dev/stderr"',
    'mkdir -p "$top/root$stage"',
    'mount --bind "$stage" "$top/root$stage"',
    'exec chroot "$top/root" "$@"',
  ].join('\n');
  const launch: Launch = (pod) => [
    'unshare',
    [
      '--net',
      '--pid',
      '--fork',
      '--mount',
      '--propagation',
      'private',
      '--kill-child',
      '--',
      '/bin/sh',
      '-c',
      prelude,
      'sh',
      dir,
      pods,
      POD,
      ...pod.slice(1),
    ],
  ];
  return {
    dir,
    pod: POD,
    bin: STUBS,
    sidecar: SIDECAR_DIR,
    path: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    pathLacking: () => pathFor('dash'),
    work: (index) => {
      const work = join(dir, 'work', String(index));
      mkdirSync(work, { recursive: true });
      return work;
    },
    output: (id) => join(out, id),
    launch,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
