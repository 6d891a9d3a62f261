// The manifest tools through the built bundle under an address-space limit (prlimit --as, as `ulimit -v` or a
// CI runner sets one): a file of 10,000 Jobs is checked whole, 100 MB on stdin is one line naming the limit
// and exit 2, a limit below the launcher's floors is the tools' line and exit 2 (the wrapper's stays 125), and
// a tool that dies anyway is reported in its own words with a shell's code, never as a wrapper that left
// sidecars running.

import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { isManifestInvocation, PLUGIN_NAME } from '../../src/manifest/cli/select.ts';
import { start, WRAPPER } from '../support/process.ts';
import { MIGRATE_JOB, unprofiled } from '../support/manifest.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-manifest-memory-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const JOBS = 10_000;
const jobs = join(scratch, 'jobs.yaml');
writeFileSync(jobs, Array.from({ length: JOBS }, (_, i) => MIGRATE_JOB.replace('name: migrate', `name: migrate-${i}`)).join('---\n'));

const MIB = 2 ** 20;
/** In MiB: 2, 3 and 4 GiB, and 1.75 GiB, where the parser's WebAssembly memory used to take all the room left. */
const LIMITS = [1792, 2048, 3072, 4096];
/** Loaded as the machine is, a run of 10,000 Jobs takes seconds; the bound only catches a hang. */
const TIMEOUT_MS = 120_000;

const underLimit = (mib: number, args: readonly string[]) =>
  start('prlimit', [`--as=${mib * MIB}`, '--', WRAPPER, ...args], { timeoutMs: TIMEOUT_MS });

describe('the manifest tools under an address-space limit', () => {
  for (const mib of LIMITS) {
    test(`--check of ${JOBS} Jobs under ${mib} MiB: every Job checked, exit 1 (the findings)`, async () => {
      const result = await underLimit(mib, ['--check', jobs]).finished;
      assert.equal(unprofiled(result.stderr), '');
      assert.equal(result.code, 1);
      assert.equal(result.stdout.split('\n').filter((line) => /: error: unwrapped: Job migrate-\d+ /.test(line)).length, JOBS);
    });
  }

  test(`--check of ${JOBS} Jobs under 1536 MiB: the limit they need, exit 2; under that limit they are checked`, async () => {
    const refused = await underLimit(1536, ['--check', jobs]).finished;
    const needs = new RegExp(
      `^istio-job-run: ${jobs}: [\\d.]+ MiB needs the address space limit \\(RLIMIT_AS, ulimit -v\\) to be about (\\d+) MiB; it is 1536 MiB\n$`,
    ).exec(refused.stderr);
    assert.ok(needs !== null, refused.stderr);
    assert.deepEqual([refused.code, refused.stdout], [2, '']);
    const result = await underLimit(Number(needs[1]), ['--check', jobs]).finished;
    assert.deepEqual([result.code, unprofiled(result.stderr), result.stdout.split('\n').length - 1], [1, '', JOBS]);
  });

  test(`--inject of ${JOBS} Jobs under 2048 MiB: every Job rewritten, exit 0`, async () => {
    const result = await underLimit(2048, ['--inject', jobs]).finished;
    assert.equal(unprofiled(result.stderr), '');
    assert.equal(result.code, 0);
    assert.equal(result.stdout.match(/\/istio-job-run", "--"/g)?.length, JOBS);
  });

  const text = readFileSync(jobs);
  const hundredMb = Buffer.concat(Array.from({ length: Math.ceil(100e6 / text.length) }, () => text)).subarray(0, 100e6);
  for (const mib of LIMITS) {
    test(`100 MB on stdin under ${mib} MiB: one line naming the limit and what it needs, exit 2`, async () => {
      const running = underLimit(mib, ['--check', '-']);
      running.process.stdin?.end(hundredMb);
      const result = await running.finished;
      assert.equal(result.stdout, '');
      assert.match(
        result.stderr,
        new RegExp(
          `^istio-job-run: <stdin>: larger than [\\d.]+ MiB, the most the address space limit \\(RLIMIT_AS, ulimit -v\\) of ${mib} MiB leaves room for; 64 MiB needs it to be about \\d+ MiB\n$`,
        ),
      );
      assert.equal(result.code, 2);
    });
  }
});

describe("below the launcher's floors, before Node starts", () => {
  const plugin = join(scratch, PLUGIN_NAME);
  symlinkSync(WRAPPER, plugin);
  // The launcher tells a tool from the wrapper as select.ts does: each start-up here, by both.
  const starts: [string, string[]][] = [
    [WRAPPER, ['--check', jobs]],
    [WRAPPER, ['--check=-']],
    [WRAPPER, ['--image', 'registry.example/x:1', '--inject', jobs]],
    [WRAPPER, ['--image=registry.example/x:1', '--native', '--inject', jobs]],
    [WRAPPER, ['--image', '--check', '--inject', jobs]],
    [WRAPPER, ['--image', 'registry.example/x:1', '--admission-policy']],
    [plugin, ['check', '-f', jobs]],
    [WRAPPER, ['--', 'true']],
    [WRAPPER, ['--quit', 'never', '--', '--check']],
    [WRAPPER, ['--checked', jobs]],
    [WRAPPER, ['--native', '--', 'true']],
  ];
  for (const [file, args] of starts) {
    const tool = isManifestInvocation(args, file);
    const shown = [file === plugin ? PLUGIN_NAME : 'istio-job-run', ...args.map((arg) => arg.replace(jobs, 'jobs.yaml'))].join(' ');
    test(`${shown} under 1000 MiB: ${tool ? "the manifest tools' line, exit 2" : "the wrapper's line, exit 125"}`, async () => {
      const result = await start('prlimit', [`--as=${1000 * MIB}`, '--', file, ...args]).finished;
      assert.equal(
        result.stderr,
        `istio-job-run: the address space limit (RLIMIT_AS) is 1000 MiB; ${tool ? 'the manifest tools need' : 'the wrapper needs'} at least 1536 MiB (ulimit -v)\n`,
      );
      assert.equal(result.code, tool ? 2 : 125);
    });
  }
  test('--check with 16 open files: the limit and what the tools need, exit 2', async () => {
    const result = await start('prlimit', ['--nofile=16', '--', WRAPPER, '--check', jobs]).finished;
    assert.equal(
      result.stderr,
      'istio-job-run: the open files limit (RLIMIT_NOFILE) is 16; the manifest tools need at least 64 (ulimit -n)\n',
    );
    assert.equal(result.code, 2);
  });
});

/** The Node half of a bundle started as PID: the launcher's one child, once it waits to read stdin. */
async function toolReadingStdin(pid: number): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [child] = readFileSync(`/proc/${pid}/task/${pid}/children`, 'latin1').trim().split(' ');
    // /proc/PID/syscall: the system call it blocks in and its arguments: read (0) of fd 0.
    const call = child === undefined || child === '' ? '' : readFileSync(`/proc/${child}/syscall`, 'latin1');
    if (/^0 0x0 /.test(call)) return Number(child);
    if (Date.now() > deadline) throw new Error(`the tool did not come to read its stdin (${call})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a manifest tool that dies', () => {
  for (const [signal, number] of [
    ['SIGABRT', 6],
    ['SIGKILL', 9],
  ] as const) {
    test(`of ${signal} (V8 out of memory, the kernel's killer): one line in its own words, exit ${128 + number}`, async () => {
      const running = start(WRAPPER, ['--check', '-']);
      process.kill(await toolReadingStdin(running.pid), signal);
      const result = await running.finished;
      assert.equal(result.stdout, '');
      assert.match(result.stderr, new RegExp(`^istio-job-run: the manifest tool died of signal ${number} \\([^)]+\\)[^\\n]*\\n$`));
      assert.doesNotMatch(result.stderr, /sidecar|quit|wrapper/);
      assert.equal(result.code, 128 + number);
    });
  }
});
