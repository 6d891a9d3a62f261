// npm run release:check: is the release of this commit reproducible? Clones the commit twice, at two
// different paths, builds `npm ci && npm run release` in each, one after the other (so at different times),
// with a different umask, time zone and locale, and compares their SHA256SUMS. On a difference it names the
// files, and for a tarball the entries, that differ. Exit 0 when both are the same, 1 when not.
// The work tree's uncommitted changes are not part of it: it checks the commit (docs/RELEASE.md).

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { root } from './root.ts';
import { runMain, runTool } from './tools.ts';

const STEP_TIMEOUT_MS = 10 * 60_000;

interface Build {
  readonly dir: string;
  readonly umask: string;
  readonly env: Record<string, string>;
}

const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string =>
  runTool(command, args, { cwd, env, timeout: STEP_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'inherit'] });

function build(commit: string, { dir, umask, env }: Build): string {
  const started = Date.now();
  run('git', ['clone', '--quiet', '--no-checkout', root, dir], tmpdir());
  run('git', ['checkout', '--quiet', '--detach', commit], dir);
  // Everything the build inherits from outside, but the differences asked for.
  const environment = { ...process.env, ...env };
  delete environment['SOURCE_DATE_EPOCH'];
  run('sh', ['-c', `umask ${umask} && npm ci --no-audit --no-fund --loglevel=error >&2 && npm run release --silent >&2`], dir, environment);
  process.stderr.write(`reproduce: built ${commit.slice(0, 12)} in ${dir} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  return readFileSync(join(dir, 'dist', 'release', 'SHA256SUMS'), 'utf8');
}

/** The entries of two tarballs that differ, by unpacking both. */
function tarballDifferences(a: string, b: string, scratch: string): string[] {
  const unpack = (tarball: string, into: string): string => {
    mkdirSync(into, { recursive: true });
    run('tar', ['-xzf', tarball, '-C', into], into);
    return into;
  };
  const left = unpack(a, join(scratch, 'left'));
  const right = unpack(b, join(scratch, 'right'));
  const differences: string[] = [];
  if (run('tar', ['-tvzf', a], scratch) !== run('tar', ['-tvzf', b], scratch))
    differences.push('the listings (names, modes, owners, times) differ');
  for (const file of readdirSync(left, { recursive: true, encoding: 'utf8' }).sort()) {
    if (!statSync(join(left, file)).isFile()) continue;
    try {
      run('cmp', ['-s', join(left, file), join(right, file)], scratch);
    } catch {
      differences.push(`${file} differs`);
    }
  }
  rmSync(left, { recursive: true, force: true });
  rmSync(right, { recursive: true, force: true });
  return differences;
}

function main(): number {
  const commit = run('git', ['rev-parse', 'HEAD'], root).trim();
  if (run('git', ['status', '--porcelain', '--untracked-files=no'], root).trim() !== '') {
    process.stderr.write('reproduce: the work tree has uncommitted changes; they are not checked, only the commit\n');
  }
  const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-reproduce-'));
  try {
    const builds: Build[] = [
      { dir: join(scratch, 'a'), umask: '022', env: { TZ: 'UTC', LC_ALL: 'C' } },
      {
        dir: join(scratch, 'second', 'clone', 'at', 'a', 'longer', 'path'),
        umask: '077',
        env: { TZ: 'Pacific/Kiritimati', LC_ALL: 'C.UTF-8' },
      },
    ];
    mkdirSync(join(scratch, 'second', 'clone', 'at', 'a', 'longer'), { recursive: true });
    const sums = builds.map((b) => build(commit, b));
    if (sums[0] === sums[1]) {
      process.stderr.write(`reproduce: the same SHA256SUMS from both clones:\n${sums[0]}`);
      return 0;
    }
    process.stderr.write(`reproduce: the SHA256SUMS differ\n--- ${builds[0]?.dir}\n${sums[0]}--- ${builds[1]?.dir}\n${sums[1]}`);
    const releases = builds.map((b) => join(b.dir, 'dist', 'release'));
    for (const name of readdirSync(releases[0] ?? '').filter((file) => file.endsWith('.tar.gz'))) {
      const [a, b] = releases.map((dir) => join(dir, name));
      if (a === undefined || b === undefined) continue;
      for (const difference of tarballDifferences(a, b, join(scratch, 'unpacked'))) {
        process.stderr.write(`reproduce: ${relative(scratch, a)}: ${difference}\n`);
      }
    }
    return 1;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

await runMain('reproduce', async () => {
  process.exitCode = main();
});
