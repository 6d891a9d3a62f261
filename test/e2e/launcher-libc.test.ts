// The launcher's libc (docs/RELEASE.md): scripts/build.ts's flags declare and link every call the launcher may
// use against musl, for x64 and for arm64 (run under qemu-user), as a static program without a build id.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { LAUNCHER_CFLAGS, LAUNCHER_LDFLAGS, target } from '../../scripts/build.ts';
import { FIXTURES, start } from '../support/process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-launcher-libc-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe("the launcher's flags against musl", () => {
  for (const [arch, run] of [
    ['x64', []],
    ['arm64', ['/usr/bin/qemu-aarch64-static']],
  ] as const) {
    test(`${arch}: every call the launcher may use compiles with -Wall -Wextra -Werror, links statically, and runs`, async () => {
      const t = target(arch);
      const output = join(scratch, `calls-${arch}`);
      execFileSync(t.muslGcc, [...LAUNCHER_CFLAGS, ...LAUNCHER_LDFLAGS, '-o', output, join(FIXTURES, 'launcher-calls.c')], {
        stdio: 'pipe',
      });
      assert.doesNotMatch(execFileSync('readelf', ['-l', output], { encoding: 'utf8' }), /INTERP/, 'static');
      assert.doesNotMatch(execFileSync('readelf', ['-n', output], { encoding: 'utf8' }), /Build ID/);
      const [command, ...args] = [...run, output];
      const result = await start(command ?? output, args, { timeoutMs: 30_000 }).finished;
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'declared and linked\n');
    });
  }
});
