// --install: a re-install that fails at its last step leaves the first install whole, and --install without
// its directory is a usage error before any HTTP request.

import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { WRAPPER } from '../process.ts';
import { defineCase, describeStatus, EXIT_BOUND_MS } from './common.ts';
import { spawnHow } from './tools.ts';

/** Every entry under dir: path, kind, mode, and the link target or the content's hash. */
function snapshot(dir: string): string {
  const lines: string[] = [];
  const visit = (at: string, relative: string): void => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name);
      const stat = lstatSync(path);
      const rel = join(relative, name);
      if (stat.isSymbolicLink()) lines.push(`${rel} -> ${readlinkSync(path)}`);
      else if (stat.isDirectory()) {
        lines.push(`${rel}/ ${(stat.mode & 0o7777).toString(8)}`);
        visit(path, rel);
      } else lines.push(`${rel} ${(stat.mode & 0o7777).toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`);
    }
  };
  visit(dir, '');
  return lines.join('\n');
}

export const failedReinstall = defineCase({
  name: 'failed re-install',
  about:
    'a first --install works; a second one fails at its last rename (the launcher is a bind-mount point: EBUSY): it says so, ' +
    'and the first install is byte-identical and still runs a job (exit 4)',
  tries: { short: 1, long: 10 },
  variant: () => undefined,
  sent: () => 'a second install whose last rename fails (EBUSY)',
  scratch: true,
  async judge(_, { scratch: dir }) {
    const first = await spawnHow([WRAPPER, '--install', dir]).status;
    if (first.code !== 0)
      return { sent: 'a first install', ok: false, got: [`the first install failed: ${describeStatus(first)} ${first.stderr.trim()}`] };
    const before = snapshot(dir);
    const launcher = join(dir, 'istio-job-run');
    const second = await spawnHow(
      [
        '/usr/bin/unshare',
        '--mount',
        '--',
        '/bin/sh',
        '-c',
        'mount --bind "$1" "$1" && exec "$2" --install "$3"',
        'sh',
        launcher,
        WRAPPER,
        dir,
      ],
      { timeoutMs: 10_000 },
    ).status;
    const identical = snapshot(dir) === before;
    const works = await spawnHow([launcher, '--sidecar', 'none', '--', '/bin/sh', '-c', 'exit 4'], { timeoutMs: 8_000 }).status;
    return {
      ok: second.code === 125 && identical && works.code === 4,
      got: [
        `second install ${describeStatus(second)}`,
        identical ? 'the first install byte-identical' : 'the first install changed',
        `the installed copy ${works.code === 4 ? 'works' : `fails (${describeStatus(works)}: ${works.stderr.trim().split('\n')[0]?.slice(0, 100)})`}`,
      ],
    };
  },
});

export const installWithoutDir = defineCase({
  name: '--install without a directory',
  about:
    '`--install` as the last argument, inside Kubernetes (classic assumed), the stand-in up: a usage error at once, exit 125, no HTTP request',
  tries: { short: 1, long: 10 },
  variant: (i) => (i % 2 === 0 ? ['--install'] : ['--log-level', 'debug', '--install']),
  sent: (args) => args.join(' '),
  standIn: {},
  async judge(args, { sidecar }) {
    const started = performance.now();
    const status = await spawnHow([WRAPPER, ...args], { env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, timeoutMs: 15_000 }).status;
    const tookMs = status.endedAt - started;
    const requests = sidecar.requests.length;
    const named = /^istio-job-run: --install/m.test(status.stderr);
    return {
      ok: status.code === 125 && requests === 0 && named && tookMs < EXIT_BOUND_MS,
      got: [
        describeStatus(status),
        `${requests} HTTP request(s)`,
        named ? 'names --install' : `says ${JSON.stringify(status.stderr.split('\n')[0]?.slice(0, 80))}`,
        tookMs >= EXIT_BOUND_MS && `took ${(tookMs / 1000).toFixed(0)} s`,
      ],
    };
  },
});
