// Hostile limits: open files, address space, a pids or memory cgroup (v1) the wrapper either works within or
// refuses by name, and soft data and stack limits the job keeps as its own.

import { WRAPPER } from '../process.ts';
import { acknowledged, CLASSIC, defineCase, describeStatus, type HostileCase, type Size } from './common.ts';
import { cgroup, spawnHow } from './tools.ts';

interface Limit {
  readonly name: string;
  readonly names: RegExp;
  prefix(i: number): { argv: string[]; what: string; cleanup(): void } | undefined;
}

function limitCase(limit: Limit, tries: Readonly<Record<Size, number>>): HostileCase {
  return defineCase({
    name: `limit: ${limit.name}`,
    about:
      `${limit.name}, classic mode, a job that exits 7: exit 7 with the quit acknowledged, or exit 125 with one line \`istio-job-run: ...\` ` +
      'naming the limit; never a crash code (133, 134, 139) or a hang',
    tries,
    variant: (i) => i,
    sent: () => limit.name,
    standIn: {},
    async judge(i, { sidecar }) {
      const setup = limit.prefix(i);
      if (setup === undefined) return { ok: false, got: ['could not set the limit up on this machine'] };
      try {
        const status = await spawnHow([...setup.argv, WRAPPER, ...CLASSIC, '--', '/bin/sh', '-c', 'exit 7'], { timeoutMs: 12_000 }).status;
        const quits = acknowledged(sidecar);
        const lines = status.stderr.split('\n').filter((line) => line !== '');
        const named = lines.filter((line) => /^istio-job-run: /.test(line) && limit.names.test(line));
        const worked = status.code === 7 && quits === 1;
        const refused = status.code === 125 && named.length >= 1;
        const first = lines[0]?.slice(0, 90);
        return {
          sent: setup.what,
          ok: worked || refused,
          got: worked
            ? ['works: exit 7, quit acknowledged']
            : refused
              ? [`exit 125: ${JSON.stringify(named[0]?.slice(0, 90))}`]
              : [describeStatus(status), `${quits} quit(s)`, first !== undefined && `stderr: ${JSON.stringify(first)}`],
        };
      } finally {
        setup.cleanup();
      }
    },
  });
}

const prlimit = (what: string, option: string): { argv: string[]; what: string; cleanup(): void } => ({
  argv: ['prlimit', option, '--'],
  what,
  cleanup: () => undefined,
});
const inCgroup = (controller: 'pids' | 'memory', settings: Record<string, string>, what: string) => {
  const group = cgroup(controller, settings);
  return group === undefined ? undefined : { argv: group.prefix, what, cleanup: group.remove };
};

export const LIMITS: HostileCase[] = [
  limitCase(
    {
      name: 'nofile 16',
      names: /nofile|open files|file descriptors|RLIMIT_NOFILE/i,
      prefix: (i) =>
        i % 2 === 0 ? prlimit('nofile 16 (soft and hard)', '--nofile=16') : prlimit('nofile 16 soft, 1024 hard', '--nofile=16:1024'),
    },
    { short: 2, long: 20 },
  ),
  limitCase(
    {
      name: 'address space 150 MB',
      names: /address space|virtual memory|RLIMIT_AS|\bas\b/i,
      prefix: (i) =>
        i % 2 === 0
          ? prlimit('RLIMIT_AS 150 MB (soft and hard)', `--as=${150 * 2 ** 20}`)
          : prlimit('RLIMIT_AS 150 MB soft, unlimited hard', `--as=${150 * 2 ** 20}:unlimited`),
    },
    { short: 2, long: 20 },
  ),
  limitCase(
    {
      name: 'pids 4',
      names: /pids|threads|processes|tasks/i,
      prefix: () => inCgroup('pids', { 'pids.max': '4' }, 'a pids cgroup (v1) with pids.max 4'),
    },
    { short: 1, long: 10 },
  ),
  limitCase(
    {
      name: 'memory 16 MB',
      names: /memory|out of memory|OOM/i,
      prefix: () => inCgroup('memory', { 'memory.limit_in_bytes': String(16 * 2 ** 20) }, 'a memory cgroup (v1) of 16 MB'),
    },
    { short: 1, long: 10 },
  ),
];

const SOFT_LIMITS: readonly [string, string, string, string][] = [
  ['ulimit -S -d 400000, hard unlimited', `--data=${400_000 * 1024}:unlimited`, 'd', '400000'],
  ['ulimit -S -s 64, hard unlimited', `--stack=${64 * 1024}:unlimited`, 's', '64'],
  ['ulimit -S -d 400000, hard 4 GiB', `--data=${400_000 * 1024}:${4 * 2 ** 30}`, 'd', '400000'],
  ['ulimit -S -s 64, hard 64 MiB', `--stack=${64 * 1024}:${64 * 2 ** 20}`, 's', '64'],
];

export const softLimits = defineCase({
  name: 'soft data and stack limits',
  about:
    'a soft RLIMIT_DATA of 400000 KiB (`ulimit -S -d 400000`) or RLIMIT_STACK of 64 KiB (`ulimit -S -s 64`), the hard limit above ' +
    'it, classic mode: the job runs with its own soft limit (it prints it) and exits 7, the quit acknowledged',
  tries: { short: 2, long: 20 },
  variant: (i) => SOFT_LIMITS[i % SOFT_LIMITS.length] ?? SOFT_LIMITS[0]!,
  sent: ([what]) => what,
  standIn: {},
  async judge([, option, letter, expected], { sidecar }) {
    const job = ['/bin/sh', '-c', `echo "limit $(ulimit -S -${letter})"; exit 7`];
    const status = await spawnHow(['prlimit', option, '--', WRAPPER, ...CLASSIC, '--', ...job], { timeoutMs: 12_000 }).status;
    const quits = acknowledged(sidecar);
    const seen = status.stdout.match(/^limit (\S+)$/m)?.[1];
    const said = status.stderr.split('\n').filter((line) => line !== '');
    const first = (said.find((line) => line.startsWith('istio-job-run:')) ?? said[0])?.slice(0, 90);
    return {
      ok: status.code === 7 && quits === 1 && seen === expected,
      got: [
        describeStatus(status),
        seen === undefined ? 'the job never ran' : seen === expected ? 'the job keeps its limit' : `the job's limit ${seen}`,
        `${quits} quit(s) acknowledged`,
        status.code !== 7 && first !== undefined && `stderr: ${JSON.stringify(first)}`,
      ],
    };
  },
});
