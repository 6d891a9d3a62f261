// The launcher's libc (docs/RELEASE.md): src/launcher/launcher.c itself, with scripts/build.ts's flags and header,
// compiles with -Wall -Wextra -Werror, links statically against musl without a build id, and runs, for x64
// and for arm64 (under qemu-user). Alone, without the bundle's lib directory, it says it cannot start the
// loader and exits 125.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { LAUNCHER_LDFLAGS, launcherCompile, target } from '../../scripts/build.ts';
import { EXIT_WRAPPER_FAILED } from '../../src/command/exit-code.ts';
import { LIB_DIR } from '../../src/bundle/self.ts';
import { start } from '../support/process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-launcher-libc-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe('the launcher against musl', () => {
  for (const [arch, run] of [
    ['x64', []],
    ['arm64', ['/usr/bin/qemu-aarch64-static']],
  ] as const) {
    test(`${arch}: src/launcher/launcher.c compiles with -Wall -Wextra -Werror, links statically, and runs`, async () => {
      const t = target(arch);
      const work = mkdtempSync(join(scratch, `${arch}-`));
      const output = join(work, 'istio-job-run');
      execFileSync(t.muslGcc, [...LAUNCHER_LDFLAGS, ...launcherCompile(t.loader, work, ['-o', output])], { stdio: 'pipe' });
      assert.doesNotMatch(execFileSync('readelf', ['-l', output], { encoding: 'utf8' }), /INTERP/, 'static');
      assert.doesNotMatch(execFileSync('readelf', ['-n', output], { encoding: 'utf8' }), /Build ID/);
      const [command, ...args] = [...run, output, '--version'];
      const result = await start(command ?? output, args, { timeoutMs: 30_000 }).finished;
      assert.equal(result.code, EXIT_WRAPPER_FAILED, result.stderr);
      const lines = result.stderr.split('\n');
      // qemu-user knows no PR_SET_CHILD_SUBREAPER: the launcher says so, and goes on.
      if (run.length > 0) assert.match(lines.shift() ?? '', /^istio-job-run: warning: cannot become the job's subreaper \(prctl\)/);
      assert.deepEqual(lines, [`istio-job-run: cannot start ${join(work, LIB_DIR, t.loader)}: No such file or directory`, '']);
    });
  }
});
