// The launcher built for its own tests: src/launcher/launcher.c compiled with the host's C compiler and the header the
// bundle's build writes, starting test/unit/launcher/fake-wrapper.ts instead of the bundled loader (the
// TEST_WRAPPER define; a bundle is never built with it), and short timeouts for the start and the finish.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after } from 'node:test';
import { launcherCompile } from '../../../scripts/build.ts';
import { NODE, start, type Running } from '../../support/process.ts';

const FAKE_WRAPPER = join(dirname(fileURLToPath(import.meta.url)), 'fake-wrapper.ts');
/** How long the test build waits for the fake's hello. */
export const HELLO_TIMEOUT_MS = 3_000;
/** How long past the quit plan's timeout the test build waits for the fake to say its code. */
const FINISH_GRACE_MS = 300;

/** A shell test, true while the launcher lives: a command that waits ends with it, should a test's timeout kill it. */
export const LAUNCHER_LIVES = 'kill -0 $PPID 2>/dev/null';
/** A shell loop that waits as long as the launcher lives. */
export const WHILE_LAUNCHER_LIVES = `while ${LAUNCHER_LIVES}; do sleep 0.01; done`;

/** Builds the launcher into a temporary directory, removed after the file's tests. */
export function buildLauncher(): string {
  const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-launcher-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const output = join(dir, 'launcher');
  const wrapper = [NODE, FAKE_WRAPPER].map((part) => JSON.stringify(part)).join(',');
  execFileSync(
    'gcc',
    launcherCompile('ld-unused.so', dir, [
      `-DTEST_WRAPPER=${wrapper}`,
      `-DHELLO_TIMEOUT_MS=${HELLO_TIMEOUT_MS}`,
      `-DFINISH_GRACE_MS=${FINISH_GRACE_MS}`,
      '-o',
      output,
    ]),
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return output;
}

/** The launcher with the fake in MODES, running COMMAND. */
export function launch(
  launcher: string,
  modes: readonly string[],
  command: readonly string[],
  options: Parameters<typeof start>[2] = {},
): Running {
  return start(launcher, [...modes, '--', ...command], { timeoutMs: 10_000, ...options });
}

/** The fake's pid, from its first line. */
export async function fakePid(running: Running): Promise<number> {
  return Number((await running.line(/^fake: pid \d+$/, 'stderr')).split(' ')[2]);
}

/** Runs `body` over `items`, `width` at a time: many Node start-ups at once would starve each other. */
export async function inBatches<T, R>(items: readonly T[], width: number, body: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += width) results.push(...(await Promise.all(items.slice(i, i + width).map(body))));
  return results;
}
