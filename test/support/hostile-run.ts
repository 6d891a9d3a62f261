// Starting the adversarial suite's runner (test/support/hostile-main.ts) in a network namespace of its
// own, from a test or from scripts/reliability.ts, and reading its tries back.

import { join } from 'node:path';
import type { Size, Try } from './hostile/index.ts';
import { NODE, root, start } from './process.ts';

export interface TryLine extends Try {
  readonly case: string;
  readonly index: number;
  readonly ms: number;
}

/** Runs `tries` (default: the case's own for that size) of each named case; resolves with every try. */
export async function runHostile(
  size: Size,
  cases: readonly string[],
  options: { tries?: number; timeoutMs: number; onTry?: (line: TryLine) => void },
): Promise<TryLine[]> {
  const args = ['--net', '--', NODE, join(root, 'test/support/hostile-main.ts'), '--size', size, ...cases.map((name) => `--case=${name}`)];
  if (options.tries !== undefined) args.push('--tries', String(options.tries));
  const running = start('unshare', args, { timeoutMs: options.timeoutMs, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' } });
  running.process.stdin?.end();
  let seen = 0;
  const lines = (): TryLine[] =>
    running
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as TryLine);
  running.process.stdout?.on('data', () => {
    const all = lines();
    for (; seen < all.length; seen++) options.onTry?.(all[seen] as TryLine);
  });
  const finished = await running.finished;
  if (finished.code !== 0) throw new Error(`the hostile runner failed (${finished.code}): ${finished.stderr.slice(-2000)}`);
  return lines();
}
