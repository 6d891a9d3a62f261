// The network: a quit URL whose DNS server never answers beside a healthy one, and credentials in a URL.

import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WRAPPER } from '../process.ts';
import { acknowledged, CLASSIC, defineCase, describeStatus, EXIT_BOUND_MS } from './common.ts';
import { spawnHow } from './tools.ts';

export const blackHoledDns = defineCase({
  name: 'black-holed DNS name beside a healthy quit URL',
  about:
    'one --quit-url names a host whose DNS server never answers, the other is 127.0.0.1 (--quit-timeout 2s): the healthy quit is ' +
    `acknowledged, and the wrapper exits within 2 s + ${EXIT_BOUND_MS} ms of the job's end`,
  tries: { short: 1, long: 10 },
  variant: (i) => i % 2 === 0,
  sent: (blackHoleFirst) => `black hole ${blackHoleFirst ? 'first' : 'second'}`,
  scratch: true,
  standIn: {},
  async judge(blackHoleFirst, { scratch, sidecar }) {
    const dns = createSocket('udp4');
    dns.on('message', () => undefined); // swallowed: never answered
    dns.bind(53, '127.0.0.1');
    await once(dns, 'listening');
    try {
      const resolv = join(scratch, 'resolv.conf');
      writeFileSync(resolv, 'nameserver 127.0.0.1\noptions timeout:5 attempts:3\n');
      const order = blackHoleFirst
        ? ['http://quit.black-hole.test:15020/quitquitquit', 'http://127.0.0.1:15020/quitquitquit']
        : ['http://127.0.0.1:15020/quitquitquit', 'http://quit.black-hole.test:15020/quitquitquit'];
      const spawned = spawnHow(
        [
          '/usr/bin/unshare',
          '--mount',
          '--',
          '/bin/sh',
          '-c',
          'mount --bind "$0" /etc/resolv.conf && exec "$@"',
          resolv,
          WRAPPER,
          ...CLASSIC,
          ...order.flatMap((url) => ['--quit-url', url]),
          '--',
          '/bin/sh',
          '-c',
          'echo done',
        ],
        { timeoutMs: 20_000 },
      );
      await spawned.line(/^done$/).catch(() => undefined);
      const doneAt = performance.now();
      const status = await spawned.status;
      const tookMs = status.endedAt - doneAt;
      const quits = acknowledged(sidecar);
      return {
        ok: status.code === 0 && quits === 1 && tookMs < 2_000 + EXIT_BOUND_MS,
        got: [
          describeStatus(status),
          `${quits} quit(s) acknowledged`,
          tookMs >= 2_000 + EXIT_BOUND_MS ? `exit ${(tookMs / 1000).toFixed(0)} s after the job` : 'exit within the bound',
          /127\.0\.0\.1:15020\/quitquitquit.*gave up/.test(status.stderr) && 'gave up on 127.0.0.1',
        ],
      };
    } finally {
      dns.close();
    }
  },
});

const CREDENTIALS: readonly [string, string[], Record<string, string>][] = [
  ['--quit-url', ['--quit-url', 'http://user:secret@127.0.0.1:15020/quitquitquit'], {}],
  ['ISTIO_JOB_RUN_QUIT_URL', [], { ISTIO_JOB_RUN_QUIT_URL: 'http://user:secret@127.0.0.1:15020/quitquitquit' }],
  ['--ready-url', ['--ready-url', 'http://user:secret@127.0.0.1:15021/healthz/ready'], {}],
];

export const urlCredentials = defineCase({
  name: 'credentials in a URL',
  about:
    'http://user:secret@127.0.0.1:15020/quitquitquit as --quit-url, as ISTIO_JOB_RUN_QUIT_URL, or as --ready-url: a usage error (125), ' +
    'the command not run, "secret" never on stderr',
  tries: { short: 3, long: 30 },
  variant: (i) => CREDENTIALS[i % CREDENTIALS.length] ?? CREDENTIALS[0]!,
  sent: ([name]) => name,
  standIn: {},
  async judge([, args, env]) {
    const status = await spawnHow([WRAPPER, ...CLASSIC, ...args, '--', '/bin/sh', '-c', 'echo ran'], { env, timeoutMs: 10_000 }).status;
    const leaked = status.stderr.includes('secret');
    const ran = status.stdout.includes('ran');
    return {
      ok: status.code === 125 && !leaked && !ran,
      got: [describeStatus(status), ran && 'the command ran', leaked ? '"secret" on stderr' : 'no secret on stderr'],
    };
  },
});
