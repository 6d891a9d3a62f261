// The manifest tools' room under an address-space limit: the limit read from /proc, the parser's memory sized
// from the room, a limit too small for any work, and an input refused before it is read, each in one line.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ManifestIo, runManifest } from '../../../../src/manifest/cli/cli.ts';
import { type AddressSpace, addressSpace, inputRoom, inputTooLarge, parserMemory, tooSmall } from '../../../../src/manifest/yaml/memory.ts';
import { MIGRATE_JOB } from '../../../support/manifest.ts';

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
      'the address space limit (RLIMIT_AS, ulimit -v) is 1300 MiB; the manifest tools need at least 1328 MiB',
    );
  });
  test('the largest input grows with the limit; none is refused without one', () => {
    const room = (limitMib: number, usedMib: number) => ({ before: space(limitMib, 1200), now: space(limitMib, usedMib) });
    assert.equal(inputRoom(undefined), Number.POSITIVE_INFINITY);
    assert.ok(inputRoom(room(2048, 1400)) < inputRoom(room(3072, 1400)));
    assert.equal(inputRoom(room(1400, 1400)), 0);
  });
  test('the limit a refusal names holds on the next run, though what is mapped moves by a few MiB', () => {
    // Loading the parser maps its share of the room and LOADED besides; the next start maps JITTER more.
    const startAt = (limit: number, used: number, loaded: number) => {
      const before = { limit, used };
      return { before, now: { limit, used: used + loaded + (parserMemory(before)?.maximum ?? 0) * 65536 } };
    };
    for (const usedMib of [1100, 1187.3, 1250]) {
      for (const sizeMib of [0.5, 2.9, 10, 37.1]) {
        const refused = startAt(1536 * MIB, usedMib * MIB, 5.4 * MIB);
        const line = inputTooLarge('jobs.yaml', refused, sizeMib * MIB, 64 * MIB);
        const about = Number(/to be about (\d+) MiB/.exec(line)?.[1]);
        assert.equal(about % 16, 0, line);
        for (const jitterMib of [-4, 0, 4, 8]) {
          const next = startAt(about * MIB, (usedMib + jitterMib) * MIB, (5.4 + jitterMib / 4) * MIB);
          assert.ok(inputRoom(next) >= sizeMib * MIB, `${line}: at ${about} MiB with ${jitterMib} MiB more mapped`);
        }
      }
    }
  });
});

describe('--check under a limit', () => {
  /** runManifest with the address space BEFORE the parser loads, and NOW after (BEFORE too, when left out). */
  async function check(
    before: AddressSpace,
    file: { text: string; size?: number },
    now = before,
  ): Promise<{ code: number; stderr: string[] }> {
    const stderr: string[] = [];
    const spaces = [before, now];
    const io: ManifestIo = {
      readFile: (_path, maxBytes) => {
        const size = file.size ?? Buffer.byteLength(file.text);
        if (size > maxBytes) throw Object.assign(new Error('too large'), { code: 'EFBIG', ...(file.size === undefined ? {} : { size }) });
        return file.text;
      },
      listDir: () => undefined,
      stdout: () => undefined,
      stderr: (line) => stderr.push(line),
      addressSpace: () => (spaces.length > 1 ? spaces.shift() : spaces[0]),
    };
    // With the cluster stated: no line about the profile among those compared here.
    return { code: await runManifest(['--check', 'jobs.yaml', '--kubernetes', '1.29'], 'istio-job-run', '9.9.9', io), stderr };
  }
  // 500 MiB of room: the parser gets 125 MiB, loading it maps 5 MiB more.
  const before: AddressSpace = { limit: 1700 * MIB, used: 1200 * MIB };
  const loaded: AddressSpace = { limit: 1700 * MIB, used: 1330 * MIB };
  test('a file too large for the room: its size and the limit it needs (the parser takes its share), exit 2', async () => {
    // 5 + 96 + 640 MiB besides the parser: 988 MiB of room, of which the parser takes a quarter.
    assert.deepEqual(await check(before, { text: '', size: 10 * MIB }, loaded), {
      code: 2,
      stderr: ['jobs.yaml: 10.0 MiB needs the address space limit (RLIMIT_AS, ulimit -v) to be about 2208 MiB; it is 1700 MiB'],
    });
  });
  test('a pipe past the room: the most that fits, and the limit the largest manifest needs, exit 2', async () => {
    const result = await check(before, { text: 'x'.repeat(5 * MIB) }, loaded);
    assert.equal(result.code, 2);
    assert.deepEqual(result.stderr, [
      'jobs.yaml: larger than 4.3 MiB, the most the address space limit (RLIMIT_AS, ulimit -v) of 1700 MiB leaves room for; 64 MiB needs it to be about 6816 MiB',
    ]);
  });
  test('a file larger than any manifest: the 64 MiB line, whatever the limit', async () => {
    const result = await check(before, { text: '', size: 100 * MIB }, loaded);
    assert.deepEqual(result.stderr, ['jobs.yaml: larger than 64 MiB, the limit of a manifest file']);
  });
  test('a limit too small for any work: one line, exit 2, nothing read', async () => {
    const result = await check({ limit: 1300 * MIB, used: 1200 * MIB }, { text: MIGRATE_JOB });
    assert.deepEqual(result, {
      code: 2,
      stderr: ['the address space limit (RLIMIT_AS, ulimit -v) is 1300 MiB; the manifest tools need at least 1328 MiB'],
    });
  });
  test('a file that fits is checked', async () => {
    const result = await check({ limit: 4096 * MIB, used: 1400 * MIB }, { text: MIGRATE_JOB });
    assert.deepEqual(result, { code: 1, stderr: [] });
  });
});
