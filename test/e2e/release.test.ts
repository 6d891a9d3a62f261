// npm run release: both architectures' bundles and their checksums, and the arm64 one running under
// qemu-user with the bundle's own arm64 libraries (built on this x64 machine).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { NODE, root, start } from '../support/process.ts';

const RELEASE = join(root, 'dist', 'release');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
const QEMU = '/usr/bin/qemu-aarch64-static';
// binfmt_misc's registration for aarch64 ELF files, with the F flag (qemu is opened at registration).
const BINFMT =
  ':qemu-aarch64:M::\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00:' +
  '\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:' +
  `${QEMU}:F`;

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-release-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function unpack(arch: string): string {
  const dir = join(scratch, arch);
  execFileSync('mkdir', ['-p', dir]);
  execFileSync('tar', ['-xzf', join(RELEASE, `istio-job-run-${version}-linux-${arch}.tar.gz`), '-C', dir]);
  return dir;
}

describe('npm run release', () => {
  before(async () => {
    const build = await start(NODE, [join(root, 'scripts', 'release.ts')], { timeoutMs: 300_000 }).finished;
    assert.equal(build.code, 0, build.stderr);
  });

  test('writes both bundles and SHA256SUMS, which sha256sum -c accepts', () => {
    const names = [`istio-job-run-${version}-linux-arm64.tar.gz`, `istio-job-run-${version}-linux-x64.tar.gz`];
    assert.deepEqual(readdirSync(RELEASE).sort(), ['SHA256SUMS', ...names]);
    const check = execFileSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: RELEASE, encoding: 'utf8' });
    assert.deepEqual(
      check.trim().split('\n').sort(),
      names.map((name) => `${name}: OK`),
    );
  });

  test('each bundle: the launcher and istio-job-run.lib/ with the loader of its architecture', () => {
    for (const [arch, loader, machine] of [
      ['x64', 'ld-linux-x86-64.so.2', 'Advanced Micro Devices X86-64'],
      ['arm64', 'ld-linux-aarch64.so.1', 'AArch64'],
    ] as const) {
      const dir = unpack(arch);
      assert.deepEqual(readdirSync(dir).sort(), ['istio-job-run', 'istio-job-run.lib']);
      const lib = readdirSync(join(dir, 'istio-job-run.lib'));
      assert.ok(lib.includes(loader) && lib.includes('istio-job-run') && lib.includes('libc.so.6'), lib.join(' '));
      for (const file of ['istio-job-run', `istio-job-run.lib/istio-job-run`, `istio-job-run.lib/libstdc++.so.6`]) {
        assert.match(execFileSync('readelf', ['-h', join(dir, file)], { encoding: 'utf8' }), new RegExp(`Machine:\\s+${machine}`), file);
      }
      assert.doesNotMatch(
        execFileSync('readelf', ['-l', join(dir, 'istio-job-run')], { encoding: 'utf8' }),
        /INTERP/,
        'the launcher is static',
      );
    }
  });

  test('the x64 bundle runs', async () => {
    const dir = unpack('x64');
    const result = await start(join(dir, 'istio-job-run'), ['--sidecar', 'none', '--', 'sh', '-c', 'echo ran; exit 6']).finished;
    assert.equal(result.code, 6);
    assert.equal(result.stdout, 'ran\n');
  });

  test("arm64 under qemu: the executable with the bundle's own arm64 loader and libraries", async () => {
    const lib = join(unpack('arm64'), 'istio-job-run.lib');
    const result = await start(
      QEMU,
      [
        join(lib, 'ld-linux-aarch64.so.1'),
        '--library-path',
        lib,
        join(lib, 'istio-job-run'),
        '--sidecar',
        'none',
        '--',
        'sh',
        '-c',
        'echo ran; exit 7',
      ],
      { timeoutMs: 60_000 },
    ).finished;
    assert.equal(result.code, 7, result.stderr);
    assert.equal(result.stdout, 'ran\n');
  });

  test('arm64 under qemu through its launcher (binfmt_misc of a private user namespace)', async () => {
    const dir = unpack('arm64');
    const script =
      'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc && printf "%b" "$1" > /proc/sys/fs/binfmt_misc/register && exec "$2" --version';
    const result = await start(
      'unshare',
      ['--user', '--map-root-user', '--mount', '--', 'sh', '-c', script, 'sh', BINFMT, join(dir, 'istio-job-run')],
      { timeoutMs: 60_000 },
    ).finished;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `istio-job-run ${version}\n`);
  });
});
