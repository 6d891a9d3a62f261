// The manifest tools on hostile input, through the built executable (the bundle, its launcher in front, and the
// plain executable): real signals while they wait on a stdin nobody writes and while they parse a large file, an
// endless stdin and /dev/zero, a closed stdout, /dev/full, a reader that leaves early, and the kubectl plugin's
// name and -f DIR. Every wait is on an event (a line of output, a write taken), every child has a hard timeout.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { PLUGIN_NAME } from '../../src/manifest/cli/select.ts';
import { cleanEnv, type Finished, PLAIN_EXECUTABLE, start, WRAPPER } from '../support/process.ts';
import { MIGRATE_JOB, unprofiled } from '../support/manifest.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-manifest-hostile-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const PLUGIN = join(scratch, PLUGIN_NAME);
symlinkSync(WRAPPER, PLUGIN);

const JOB = MIGRATE_JOB;
const jobFile = join(scratch, 'job.yaml');
writeFileSync(jobFile, JOB);
/** Large enough that parsing it takes seconds: a signal sent once it is read finds the tool parsing. */
const BIG = Array.from({ length: 6000 }, (_, i) => JOB.replaceAll('migrate', `migrate-${i}`)).join('---\n');
const bigFile = join(scratch, 'big.yaml');
writeFileSync(bigFile, BIG);

/** The exit status as a shell reports it: the code, or 128+N for a death by signal N. */
const status = (result: Finished): number => result.code ?? 128 + (constants.signals[result.signal as NodeJS.Signals] ?? 0);

const EXECUTABLES = [
  ['the bundle', WRAPPER],
  ['the plain executable', PLAIN_EXECUTABLE],
] as const;
const STOPS = [
  ['SIGTERM', 143],
  ['SIGINT', 130],
  ['SIGHUP', 129],
] as const;

describe('TERM, INT and HUP end the tools at once, with 128+N', () => {
  for (const [what, executable] of EXECUTABLES) {
    for (const [signal, code] of STOPS) {
      test(`${what}: --check waiting on a stdin nobody writes, ${signal}: ${code}`, async () => {
        // The first file's finding is written before stdin is read: then it waits on stdin.
        const running = start(executable, ['--check', jobFile, '--check', '-']);
        await running.line(/: error: unwrapped: /, 'stdout');
        running.process.kill(signal);
        const result = await running.finished;
        assert.equal(status(result), code, result.stderr);
        if (executable === WRAPPER) assert.equal(result.code, code, 'the launcher exits with 128+N');
        assert.equal(unprofiled(result.stderr), '');
      });
    }
    test(`${what}: --inject - (a post-renderer) while it parses a large file, TERM: 143, nothing written`, async () => {
      const running = start(executable, ['--inject', '-']);
      const stdin = running.process.stdin;
      assert.ok(stdin !== null);
      // The write is taken once the tool has read all but what a pipe holds: it is reading or parsing then.
      await new Promise<void>((resolve, reject) => stdin.end(BIG, (error?: Error | null) => (error ? reject(error) : resolve())));
      running.process.kill('SIGTERM');
      const result = await running.finished;
      assert.equal(status(result), 143, result.stderr);
      assert.equal(result.stdout, '', 'ended before its output');
    });
  }
  test('--check while it parses a large file, INT: 130, its findings not written', async () => {
    const running = start(WRAPPER, ['--check', jobFile, '--check', bigFile]);
    await running.line(/: error: unwrapped: /, 'stdout');
    running.process.kill('SIGINT');
    const result = await running.finished;
    assert.equal(result.code, 130, result.stderr);
    assert.doesNotMatch(result.stdout, /big\.yaml/);
  });
  test('the kubectl plugin waiting on stdin, HUP: 129', async () => {
    const running = start(PLUGIN, ['check', '-f', jobFile, '-f', '-']);
    await running.line(/: error: unwrapped: /, 'stdout');
    running.process.kill('SIGHUP');
    const result = await running.finished;
    assert.equal(result.code, 129, result.stderr);
  });
});

/** Runs a shell line with $EXE the executable; its stdout, stderr and exit status. */
async function shell(line: string, executable: string = WRAPPER): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('/bin/bash', ['-c', line], { env: cleanEnv({ EXE: executable, JOB: jobFile }), stdio: ['ignore', 'pipe', 'pipe'] });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

describe('size, and stdout', () => {
  for (const [what, executable] of EXECUTABLES) {
    test(`${what}: /dev/zero and an endless stdin end with one line naming the limit, exit 2`, async () => {
      const zero = await shell('"$EXE" --check /dev/zero', executable);
      assert.deepEqual([zero.code, zero.stdout], [2, '']);
      assert.equal(zero.stderr, 'istio-job-run: /dev/zero: larger than 64 MiB, the limit of a manifest file\n');
      const endless = await shell('yes "a: 1" | "$EXE" --inject -', executable);
      assert.deepEqual([endless.code, endless.stdout], [2, '']);
      assert.equal(endless.stderr, 'istio-job-run: <stdin>: larger than 64 MiB, the limit of a manifest file\n');
    });
    test(`${what}: a closed stdout and a full disk: one line with the errno, exit 2`, async () => {
      for (const [redirect, errno] of [
        ['>&-', 'EBADF'],
        ['>/dev/full', 'ENOSPC'],
      ] as const) {
        for (const mode of ['--inject', '--check']) {
          const result = await shell(`"$EXE" ${mode} "$JOB" ${redirect}`, executable);
          assert.deepEqual(
            [result.code, result.stderr],
            [2, `istio-job-run: stdout cannot be written (${errno})\n`],
            `${mode} ${redirect}`,
          );
        }
      }
      const discarded = await shell('"$EXE" --inject "$JOB" >/dev/null', executable);
      assert.deepEqual([discarded.code, unprofiled(discarded.stderr)], [0, ''], '>/dev/null is a stdout that takes it all');
    });
  }
  test('a reader that stops early (EPIPE): quiet, and the exit code the findings give', async () => {
    // Far more than a pipe holds, so the tool is still writing when the reader leaves.
    const checks = await shell(
      '"$EXE" $(for i in $(seq 1000); do printf -- "--check %s " "$JOB"; done) | head -1 >/dev/null; echo "$PIPESTATUS"',
    );
    assert.deepEqual([checks.stdout, checks.stderr], ['1\n', '']);
    const injected = await shell(`"$EXE" --inject "${bigFile}" | grep -q migrate; echo "$PIPESTATUS"`);
    assert.deepEqual([injected.stdout, injected.stderr], ['0\n', '']);
  });
});

describe('the kubectl plugin', () => {
  test('its error lines carry its own name', async () => {
    const running = start(PLUGIN, ['check', '-f', join(scratch, 'missing.yaml')]);
    running.process.stdin?.end();
    const result = await running.finished;
    assert.equal(result.code, 2);
    assert.match(result.stderr, new RegExp(`^${PLUGIN_NAME}: .*missing\\.yaml: cannot be read \\(ENOENT\\)\\n$`));
  });
  test('-f DIR: the .yaml, .yml and .json files in it, in name order, not below it', async () => {
    const dir = join(scratch, 'manifests');
    mkdirSync(join(dir, 'below'), { recursive: true });
    writeFileSync(join(dir, 'b.yaml'), JOB.replaceAll('migrate', 'beta'));
    writeFileSync(join(dir, 'a.yml'), JOB.replaceAll('migrate', 'alpha'));
    writeFileSync(join(dir, 'c.json'), JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gamma' } }));
    writeFileSync(join(dir, 'notes.txt'), 'not: a manifest\n');
    writeFileSync(join(dir, 'below', 'd.yaml'), JOB.replaceAll('migrate', 'delta'));
    const running = start(PLUGIN, ['check', '-f', dir, '-f', jobFile]);
    running.process.stdin?.end();
    const result = await running.finished;
    assert.equal(result.code, 1, result.stderr);
    assert.deepEqual(
      result.stdout
        .trim()
        .split('\n')
        .map((line) => line.slice(0, line.indexOf(':'))),
      [join(dir, 'a.yml'), join(dir, 'b.yaml'), jobFile],
    );
  });
});
