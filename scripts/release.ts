// npm run release: dist/release/ with the portable bundle for each architecture as
// istio-job-run-<version>-linux-<arch>.tar.gz, its CycloneDX SBOM istio-job-run-<version>-linux-<arch>.cdx.json,
// the Helm 4 post-renderer plugin holding the same bundle (scripts/helm-plugin.ts), and SHA256SUMS over them all that `sha256sum -c` accepts. Both are built on this machine: the other
// architecture's Node comes from the npm registry, its libraries and tools from Debian's cross packages; it
// gets no code cache (that is architecture-specific).
// Reproducible: the same commit gives the same bytes in any clone, at any time (docs/RELEASE.md; checked by
// npm run release:check, scripts/reproduce.ts).

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, openSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleJs, buildBundle, buildExecutable, dist, target, version, type Arch } from './build.ts';
import { helmPluginName, layHelmPlugin } from './helm-plugin.ts';
import { NOTICES } from './notices.ts';
import { root } from './root.ts';
import { makeSbom } from './sbom.ts';
import { runMain, runTool, StepError } from './tools.ts';

const ARCHES: readonly Arch[] = ['x64', 'arm64'];

export const tarballName = (arch: Arch): string => `istio-job-run-${version}-linux-${arch}.tar.gz`;
export const sbomName = (arch: Arch): string => `istio-job-run-${version}-linux-${arch}.cdx.json`;

/** The time every file of a release carries: SOURCE_DATE_EPOCH if set, else the commit's time. */
export function sourceDateEpoch(): number {
  const given = process.env['SOURCE_DATE_EPOCH'];
  if (given !== undefined && given !== '') {
    if (!/^\d+$/.test(given))
      throw new StepError(`SOURCE_DATE_EPOCH is ${JSON.stringify(given)}: it must be seconds since 1970 (git log -1 --format=%ct)`);
    return Number(given);
  }
  try {
    return Number(runTool('git', ['log', '-1', '--format=%ct'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    throw new StepError("not a git checkout: set SOURCE_DATE_EPOCH to the release commit's time (git log -1 --format=%ct)");
  }
}

/**
 * DIR as a .tar.gz that depends on nothing but DIR's names, bytes and modes: entries sorted by name, owner
 * root, every mtime EPOCH, GNU format; gzip -9n, with no name and no time in its header.
 */
async function tarball(dir: string, output: string, epoch: number): Promise<void> {
  const tar = spawn(
    'tar',
    ['--sort=name', '--format=gnu', '--owner=0', '--group=0', '--numeric-owner', `--mtime=@${epoch}`, '-cf', '-', '-C', dir, '.'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const gzip = spawn('gzip', ['-9n'], { stdio: [tar.stdout, openSync(output, 'w'), 'inherit'] });
  const [[tarCode], [gzipCode]] = (await Promise.all([once(tar, 'exit'), once(gzip, 'exit')])) as [[number | null], [number | null]];
  if (tarCode !== 0 || gzipCode !== 0) throw new StepError(`tar (${tarCode}) | gzip (${gzipCode}) of ${dir} failed`);
}

async function release(): Promise<void> {
  const epoch = sourceDateEpoch();
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
      const dir = join(work, `bundle-${arch}`);
      const bundle = await buildBundle(t, executable, scripts, dir);
      const name = tarballName(arch);
      const plugin = join(work, `helm-plugin-${arch}`);
      layHelmPlugin(dir, plugin, arch);
      // Two compressions at once: most of a release's time on a machine with a core to spare.
      await Promise.all([tarball(dir, join(out, name), epoch), tarball(plugin, join(out, helmPluginName(arch)), epoch)]);
      const sbom = await makeSbom(bundle, dir, name, arch, epoch);
      writeFileSync(join(out, sbomName(arch)), sbom);
      process.stderr.write(
        `${name}: bundle ${mib(duSize(dir))} raw, ${mib(statSync(join(out, name)).size)} gzip; ` +
          `${NOTICES} ${kib(statSync(join(dir, 'istio-job-run.lib', NOTICES)).size)}; SBOM ${kib(Buffer.byteLength(sbom))}; ` +
          `Helm plugin ${mib(statSync(join(out, helmPluginName(arch))).size)} gzip\n`,
      );
    }
    const names = readdirSync(out).sort();
    const sums = runTool('sha256sum', names, { cwd: out });
    writeFileSync(join(out, 'SHA256SUMS'), sums);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.stderr.write(`wrote ${out} (SOURCE_DATE_EPOCH ${epoch})\n`);
}

function duSize(dir: string): number {
  return Number(runTool('du', ['-sb', dir]).split('\t')[0]);
}

const mib = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MiB`;
const kib = (bytes: number): string => `${(bytes / 1024).toFixed(0)} KiB`;

if (import.meta.main) await runMain('release', release);
