// The portable bundle: the HTTP client loaded from its asset, --install for the emptyDir pattern, and the
// installed copy running where there is no libc at all (any job image), mounted at another path than it was
// installed to.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { IDENTITY_FILE, writeIdentity } from '../../src/bundle/identity.ts';
import { whyChrootsFail, inChroot, makeRoot } from '../support/chroot.ts';
import { pidOne, root, run, start, PLAIN_EXECUTABLE } from '../support/process.ts';
import { Sidecar } from '../support/sidecar.ts';

const BUNDLE = join(root, 'dist', 'bundle');
const LAUNCHER = join(BUNDLE, 'istio-job-run');
const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-bundle-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

let counter = 0;
/** A copy of the bundle, NOTICES one line longer; with its identity made again unless `keepIdentity`. */
function alteredBundle(name: string, keepIdentity = false): string {
  const dir = join(scratch, name);
  cpSync(BUNDLE, dir, { recursive: true });
  appendFileSync(join(dir, 'istio-job-run.lib', 'NOTICES'), '\n');
  if (!keepIdentity) writeIdentity(join(dir, 'istio-job-run.lib'));
  return dir;
}

/** A copy of the bundle whose content differs, with its own identity: another bundle to install. */
let other: string | undefined;
const otherBundle = (): string => (other ??= alteredBundle('other-bundle'));

const freshDir = (): string => {
  const dir = join(scratch, `target-${++counter}`);
  mkdirSync(dir);
  return dir;
};

async function install(dir: string, launcher = LAUNCHER): Promise<{ code: number | null; stderr: string }> {
  const result = await start(launcher, ['--install', dir]).finished;
  return { code: result.code, stderr: result.stderr };
}

/** DIR after an install: the launcher, the libraries' symlink, and the store it points at. */
function layout(dir: string): { store: string; entries: string[] } {
  const entries = readdirSync(dir).sort();
  const store = readlinkSync(join(dir, 'istio-job-run.lib'));
  return { store, entries };
}

test('an https: URL loads the HTTP client from its asset: the readiness GET opens with a TLS handshake', async () => {
  // The first byte each connection sends; 0x16 starts a TLS record (the client's hello).
  const firstBytes: number[] = [];
  const server = createServer((socket) =>
    socket.once('data', (data: Buffer) => {
      firstBytes.push(data[0] ?? -1);
      socket.destroy();
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const args = ['--sidecar', 'classic', '--ready-url', `https://127.0.0.1:${port}/ready`, '--ready-timeout', '1s'];
    const result = await run([...args, '--quit', 'never', '--', 'true']);
    assert.equal(result.code, 125, result.stderr);
    assert.doesNotMatch(result.stderr, /no HTTPS client/);
    assert.ok(firstBytes.includes(0x16), `first bytes: ${firstBytes.join(', ')}; ${result.stderr}`);
  } finally {
    server.close();
  }
});

describe('--install', () => {
  test('puts a launcher (0755) and its libraries into DIR, and nothing else', async () => {
    const dir = freshDir();
    const result = await install(dir);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, new RegExp(`installed istio-job-run \\d+\\.\\d+\\.\\d+ as ${dir}/istio-job-run`));
    const { store, entries } = layout(dir);
    assert.deepEqual(entries, [store, 'istio-job-run', 'istio-job-run.lib'].sort());
    assert.match(store, /^\.istio-job-run\.\d+\.\d+\.\d+\.[0-9a-f]{16}$/);
    assert.equal(statSync(join(dir, 'istio-job-run')).mode & 0o777, 0o755);
    assert.ok(lstatSync(join(dir, 'istio-job-run.lib')).isSymbolicLink());
    assert.deepEqual(readdirSync(join(dir, store)).sort(), readdirSync(join(BUNDLE, 'istio-job-run.lib')).sort());
    const version = await run(['--version']);
    const copy = await start(join(dir, 'istio-job-run'), ['--version']).finished;
    assert.equal(copy.stdout, version.stdout);
  });

  test('is idempotent: a second install of the same bundle keeps the one copy it made', async () => {
    const dir = freshDir();
    assert.equal((await install(dir)).code, 0);
    const first = layout(dir);
    const inode = statSync(join(dir, first.store, 'istio-job-run')).ino;
    const second = await install(dir);
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(layout(dir), first);
    assert.equal(statSync(join(dir, first.store, 'istio-job-run')).ino, inode, 'the copy is reused, not made again');
  });

  test('racing installs into one folder, two rounds of three: one copy, and it runs', async () => {
    const dir = freshDir();
    for (let round = 0; round < 2; round++) {
      const results = await Promise.all([install(dir), install(dir), install(dir)]);
      for (const result of results) assert.equal(result.code, 0, result.stderr);
      const { store, entries } = layout(dir);
      assert.deepEqual(entries, [store, 'istio-job-run', 'istio-job-run.lib'].sort());
    }
    const copy = await start(join(dir, 'istio-job-run'), ['--sidecar', 'none', '--', 'sh', '-c', 'exit 4']).finished;
    assert.equal(copy.code, 4);
  });

  test("a killed install's leftovers go with the next install; a racing install's fresh work stays", async () => {
    const dir = freshDir();
    const abandoned = join(dir, '.istio-job-run.tmp-0badc0de.store');
    const fresh = join(dir, '.istio-job-run.tmp-0000f00d.store');
    for (const path of [abandoned, fresh]) mkdirSync(path);
    writeFileSync(join(abandoned, 'istio-job-run'), 'half a copy');
    const hoursAgo = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(abandoned, hoursAgo, hoursAgo);
    const result = await install(dir);
    assert.equal(result.code, 0, result.stderr);
    const { store, entries } = layout(dir);
    assert.deepEqual(entries, [store, '.istio-job-run.tmp-0000f00d.store', 'istio-job-run', 'istio-job-run.lib'].sort());
  });

  test('another bundle replaces the first install and removes its files', async () => {
    const dir = freshDir();
    assert.equal((await install(dir)).code, 0);
    const first = layout(dir);
    const other = otherBundle();
    const result = await install(dir, join(other, 'istio-job-run'));
    assert.equal(result.code, 0, result.stderr);
    const second = layout(dir);
    assert.notEqual(second.store, first.store);
    assert.deepEqual(second.entries, [second.store, 'istio-job-run', 'istio-job-run.lib'].sort());
  });

  test('a volume with room for one copy: a repeat install and an install of another bundle both succeed', {
    skip: whyChrootsFail(),
  }, async () => {
    const dir = freshDir();
    const lib = join(BUNDLE, 'istio-job-run.lib');
    const bytes = readdirSync(lib).reduce((sum, name) => sum + statSync(join(lib, name)).size, 0);
    // Room for one store and a half, the launchers and the directories.
    const size = Math.ceil((bytes * 1.5) / 4096) * 4096;
    const script =
      'mount -t tmpfs -o size="$4" tmpfs "$1" && "$2" --install "$1" && "$2" --install "$1" && "$3" --install "$1" && ' +
      'ls -A "$1" && "$1/istio-job-run" --sidecar none -- sh -c "exit 7"';
    const result = await start(
      'unshare',
      ['--mount', '--', 'sh', '-c', script, 'sh', dir, LAUNCHER, join(otherBundle(), 'istio-job-run'), String(size)],
      {
        timeoutMs: 60_000,
      },
    ).finished;
    assert.equal(result.code, 7, result.stderr);
    assert.match(result.stderr, /no room .* for a second copy beside the earlier install: removing it first/);
    const entries = result.stdout.trim().split('\n').sort();
    assert.equal(entries.length, 3, result.stdout);
    assert.deepEqual(
      entries.filter((name) => !name.startsWith('.istio-job-run.')),
      ['istio-job-run', 'istio-job-run.lib'],
    );
  });

  test('an installed copy can install itself again (it finds its bundle through the symlink)', async () => {
    const dir = freshDir();
    assert.equal((await install(dir)).code, 0);
    const result = await install(dir, join(dir, 'istio-job-run'));
    assert.equal(result.code, 0, result.stderr);
    const copy = await start(join(dir, 'istio-job-run'), ['--sidecar', 'none', '--', 'sh', '-c', 'exit 4']).finished;
    assert.equal(copy.code, 4);
  });

  const failures: [string, () => string, RegExp][] = [
    ['a missing DIR', () => join(scratch, 'no-such-dir'), /--install: ".*no-such-dir" does not exist/],
    [
      'a file',
      () => {
        const file = join(scratch, `file-${++counter}`);
        writeFileSync(file, '');
        return file;
      },
      /is not a directory/,
    ],
  ];
  for (const [name, target, message] of failures) {
    test(`${name}: a clear error, exit 125`, async () => {
      const result = await install(target());
      assert.equal(result.code, 125);
      assert.match(result.stderr, message);
    });
  }

  test('a read-only DIR: exit 125, and nothing left behind', { skip: whyChrootsFail() }, async () => {
    const dir = freshDir();
    const script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && exec "$2" --install "$1"';
    const result = await start('unshare', ['--mount', '--', 'sh', '-c', script, 'sh', dir, LAUNCHER]).finished;
    assert.equal(result.code, 125);
    assert.match(result.stderr, /--install: ".*" is not writable/);
    assert.deepEqual(readdirSync(dir), []);
  });

  test('--install needs a value', async () => {
    const result = await install('');
    assert.equal(result.code, 125);
    assert.match(result.stderr, /--install: needs a directory/);
  });

  test('the identity is read from the bundle, not computed: a bundle altered after its build is refused', async () => {
    const altered = alteredBundle(`altered-${++counter}`, true);
    const dir = freshDir();
    const result = await install(dir, join(altered, 'istio-job-run'));
    assert.equal(result.code, 125, result.stderr);
    assert.match(result.stderr, /--install: .*NOTICES is \d+ bytes; the bundle's IDENTITY says \d+/);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.deepEqual(readdirSync(dir), []);
  });

  test('a bundle without its identity is refused', async () => {
    const bare = join(scratch, `bare-${++counter}`);
    cpSync(BUNDLE, bare, { recursive: true });
    rmSync(join(bare, 'istio-job-run.lib', IDENTITY_FILE));
    const dir = freshDir();
    const result = await install(dir, join(bare, 'istio-job-run'));
    assert.equal(result.code, 125, result.stderr);
    assert.match(result.stderr, /--install: .*IDENTITY cannot be read \(ENOENT\): the bundle is incomplete/);
    assert.deepEqual(readdirSync(dir), []);
  });

  test('the plain executable, which uses the system libc, refuses to install itself', async () => {
    const dir = freshDir();
    const result = await start(PLAIN_EXECUTABLE, ['--install', dir]).finished;
    assert.equal(result.code, 125);
    assert.match(result.stderr, /uses the system's C library/);
    assert.deepEqual(readdirSync(dir), []);
  });
});

describe('in an image without libc', { skip: whyChrootsFail() }, () => {
  /** The emptyDir: the installed copy on the host, mounted in the job's root at /opt/tools. */
  let shared: string;
  const job = makeRoot({ busybox: true });
  after(() => job.remove());
  const tools = (): [string, string][] => [[shared, '/opt/tools']];

  test('the init container: --install run from a root that holds only the bundle', async () => {
    const image = makeRoot({ busybox: false });
    try {
      cpSync(BUNDLE, join(image.path, 'opt', 'istio-job-run'), { recursive: true });
      shared = freshDir();
      const result = await inChroot(image, ['/opt/istio-job-run/istio-job-run', '--install', '/shared'], { mounts: [[shared, '/shared']] })
        .finished;
      assert.equal(result.code, 0, result.stderr);
      assert.ok(readdirSync(shared).includes('istio-job-run'));
      assert.deepEqual(execFileSync('ls', [image.path], { encoding: 'utf8' }).split('\n').filter(Boolean).sort(), [
        'opt',
        'proc',
        'shared',
      ]);
    } finally {
      image.remove();
    }
  });

  test('the job container: exit code and output intact, mounted elsewhere than installed', async () => {
    const result = await inChroot(
      job,
      ['/opt/tools/istio-job-run', '--sidecar', 'none', '--', '/bin/sh', '-c', 'echo out; echo err >&2; exit 3'],
      { mounts: tools() },
    ).finished;
    assert.equal(result.code, 3, result.stderr);
    assert.equal(result.stdout, 'out\n');
    assert.equal(result.stderr, 'err\n');
  });

  test('signals: a TERM to PID 1 (the installed copy) reaches the job, exit 143', async () => {
    const running = inChroot(job, ['/opt/tools/istio-job-run', '--sidecar', 'none', '--', '/bin/sh', '-c', 'echo ready; exec sleep 30'], {
      mounts: tools(),
    });
    await running.line(/^ready$/);
    process.kill(pidOne(running.pid), 'SIGTERM');
    const result = await running.finished;
    assert.equal(result.code, 143, result.stderr);
  });

  test('a missing command in that image: 127', async () => {
    const result = await inChroot(job, ['/opt/tools/istio-job-run', '--sidecar', 'none', '--', '/usr/bin/python3'], { mounts: tools() })
      .finished;
    assert.equal(result.code, 127);
    assert.match(result.stderr, /\/usr\/bin\/python3: not found/);
  });

  test('without /proc: the launcher finds itself from argv[0]', async () => {
    const result = await inChroot(job, ['/opt/tools/istio-job-run', '--version'], { mounts: tools(), proc: false }).finished;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^istio-job-run \d/);
  });

  test('classic mode from that image: waits, runs, quits, over real HTTP', async () => {
    const sidecar = await Sidecar.start({ readyAfter: 2 });
    try {
      const result = await inChroot(
        job,
        [
          '/opt/tools/istio-job-run',
          '--sidecar',
          'classic',
          '--ready-url',
          sidecar.readyUrl,
          '--quit-url',
          sidecar.quitUrl,
          '--',
          '/bin/sh',
          '-c',
          'exit 0',
        ],
        { mounts: tools() },
      ).finished;
      assert.equal(result.code, 0, result.stderr);
      assert.equal(sidecar.readyRequests.at(-1)?.status, 200);
      assert.deepEqual(
        sidecar.quitRequests.map((r) => r.status),
        [200],
      );
    } finally {
      await sidecar.close();
    }
  });
});
