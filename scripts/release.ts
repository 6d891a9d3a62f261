// npm run release: dist/release/ with the portable bundle for each architecture as
// istio-job-run-<version>-linux-<arch>.tar.gz, and SHA256SUMS that `sha256sum -c` accepts.
// Both are built on this machine: the other architecture's Node comes from the npm registry, its
// libraries and tools from Debian's cross packages; it gets no code cache (that is architecture-specific).

import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleJs, buildBundle, buildExecutable, dist, target, version, type Arch } from './build.ts';

const ARCHES: readonly Arch[] = ['x64', 'arm64'];

async function release(): Promise<void> {
  const out = join(dist, 'release');
  const work = join(dist, '.release');
  rmSync(out, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  mkdirSync(work, { recursive: true });
  try {
    const scripts = await bundleJs(work);
    for (const arch of ARCHES) {
      const t = target(arch);
      const executable = join(work, `istio-job-run-${arch}`);
      await buildExecutable(t, scripts, executable, work);
      const bundle = join(work, `bundle-${arch}`);
      buildBundle(t, executable, bundle);
      const name = `istio-job-run-${version}-linux-${arch}.tar.gz`;
      // Reproducible: sorted names, no owners, no times.
      execFileSync('sh', [
        '-c',
        'tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - -C "$1" . | gzip -9n > "$2"',
        'tar',
        bundle,
        join(out, name),
      ]);
      process.stderr.write(`${name}: bundle ${mib(duSize(bundle))} raw, ${mib(statSync(join(out, name)).size)} gzip\n`);
    }
    const names = readdirSync(out)
      .filter((name) => name.endsWith('.tar.gz'))
      .sort();
    const sums = execFileSync('sha256sum', names, { cwd: out, encoding: 'utf8' });
    writeFileSync(join(out, 'SHA256SUMS'), sums);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.stderr.write(`wrote ${out}\n`);
}

function duSize(dir: string): number {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
}

const mib = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MiB`;

if (import.meta.main) await release();
