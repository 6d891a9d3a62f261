// The manifest tools' room under an address-space limit: the limit read from /proc, the parser's memory sized
// from the room, a limit too small for any work, and an input refused before it is read, each in one line.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ManifestIo, runManifest } from '../../../src/manifest/cli.ts';
import { type AddressSpace, addressSpace, inputRoom, parserMemory, tooSmall } from '../../../src/manifest/memory.ts';
import { MIGRATE_JOB } from '../../support/manifest.ts';

const MIB = 2 ** 20;
const LIMITS = (soft: string): string =>
  `Limit                     Soft Limit           Hard Limit           Units     \nMax address space         ${soft}           unlimited            bytes     \n`;

describe('addressSpace', () => {
  const files = (limits: string) => (path: string) => (path === '/proc/self/limits' ? limits : 'Name:\tx\nVmSize:\t 1228800 kB\n');
  test('the soft limit and VmSize, in bytes', () => {
    assert.deepEqual(addressSpace(files(LIMITS(String(2048 * MIB)))), { limit: 2048 * MIB, used: 1200 * MIB });
  });
  test('none without a limit, or without /proc', () => {
    assert.equal(addressSpace(files(LIMITS('unlimited'))), undefined);
    assert.equal(
      addressSpace(() => {
        throw Object.assign(new Error('no /proc'), { code: 'ENOENT' });
      }),
      undefined,
    );
  });
});

describe('the room', () => {
  const space = (limitMib: number, usedMib: number): AddressSpace => ({ limit: limitMib * MIB, used: usedMib * MIB });
  test("the parser's memory: a quarter of the room, from its 32 MiB start to its own 2 GiB", () => {
    assert.equal(parserMemory(undefined), undefined);
    assert.deepEqual(parserMemory(space(2048, 1200)), { initial: 512, maximum: 212 * 16 });
    assert.deepEqual(parserMemory(space(1300, 1280)), { initial: 512, maximum: 512 });
    assert.deepEqual(parserMemory(space(64 * 1024, 1200)), { initial: 512, maximum: 32768 });
  });
  test('a limit too small for any work: one line with the limit and what the tools need', () => {
    assert.equal(tooSmall(undefined), undefined);
    assert.equal(tooSmall(space(2048, 1200)), undefined);
    assert.equal(
      tooSmall(space(1300, 1200)),
      'the address space limit (RLIMIT_AS, ulimit -v) is 1300 MiB; the manifest tools need at least 1424 MiB',
    );
  });
  test('the largest input grows with the limit; none is refused without one', () => {
    assert.equal(inputRoom(undefined), Number.POSITIVE_INFINITY);
    assert.ok(inputRoom(space(2048, 1400)) < inputRoom(space(3072, 1400)));
    assert.equal(inputRoom(space(1400, 1400)), 0);
  });
});

describe('--check under a limit', () => {
  async function check(space: AddressSpace, file: { text: string; size?: number }): Promise<{ code: number; stderr: string[] }> {
    const stderr: string[] = [];
    const io: ManifestIo = {
      readFile: (_path, maxBytes) => {
        const size = file.size ?? Buffer.byteLength(file.text);
        if (size > maxBytes) throw Object.assign(new Error('too large'), { code: 'EFBIG', ...(file.size === undefined ? {} : { size }) });
        return file.text;
      },
      listDir: () => undefined,
      stdout: () => undefined,
      stderr: (line) => stderr.push(line),
      addressSpace: () => space,
    };
    return { code: await runManifest(['--check', 'jobs.yaml'], 'istio-job-run', '9.9.9', io), stderr };
  }
  const small: AddressSpace = { limit: 1700 * MIB, used: 1400 * MIB };
  test('a file too large for the room: its size and the limit it needs, exit 2, before it is read', async () => {
    assert.deepEqual(await check(small, { text: '', size: 10 * MIB }), {
      code: 2,
      stderr: ['jobs.yaml: 10.0 MiB, which needs the address space limit (RLIMIT_AS, ulimit -v) of about 2136 MiB; it is 1700 MiB'],
    });
  });
  test('a pipe past the room: the most that fits and the limit it needs, exit 2', async () => {
    const result = await check(small, { text: 'x'.repeat(4 * MIB) });
    assert.equal(result.code, 2);
    assert.deepEqual(result.stderr, [
      'jobs.yaml: larger than 3.2 MiB, which needs the address space limit (RLIMIT_AS, ulimit -v) of more than 1700 MiB; it is 1700 MiB',
    ]);
  });
  test('a file larger than any manifest: the 64 MiB line, whatever the limit', async () => {
    const result = await check(small, { text: '', size: 100 * MIB });
    assert.deepEqual(result.stderr, ['jobs.yaml: larger than 64 MiB, the limit of a manifest file']);
  });
  test('a limit too small for any work: one line, exit 2, nothing read', async () => {
    const result = await check({ limit: 1300 * MIB, used: 1200 * MIB }, { text: MIGRATE_JOB });
    assert.deepEqual(result, {
      code: 2,
      stderr: ['the address space limit (RLIMIT_AS, ulimit -v) is 1300 MiB; the manifest tools need at least 1424 MiB'],
    });
  });
  test('a file that fits is checked', async () => {
    const result = await check({ limit: 4096 * MIB, used: 1400 * MIB }, { text: MIGRATE_JOB });
    assert.deepEqual(result, { code: 1, stderr: [] });
  });
});
