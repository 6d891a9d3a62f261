// npm run release: both architectures' bundles, their SBOMs and checksums, the notices each bundle carries,
// and the arm64 one running under qemu-user with the bundle's own arm64 libraries (built on this x64 machine).
// That two clones build the same bytes is npm run release:check (scripts/reproduce.ts), a step of .ci/run.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as CDX from '@cyclonedx/cyclonedx-library';
import { bundleJs } from '../../scripts/build.ts';
import { HELM_ARCH, HELM_PLUGIN, helmPluginName } from '../../scripts/helm-plugin.ts';
import { postRender } from '../support/helm.ts';
import { cleanEnv, NODE, root, start } from '../support/process.ts';
import { userNamespaceArgv } from '../support/userns.ts';

const RELEASE = join(root, 'dist', 'release');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
const QEMU = '/usr/bin/qemu-aarch64-static';
// binfmt_misc's registration for aarch64 ELF files, with the F flag (qemu is opened at registration).
const BINFMT =
  ':qemu-aarch64:M::\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00:' +
  '\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:' +
  `${QEMU}:F`;

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-release-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const ARCHES = ['x64', 'arm64'] as const;
const tarball = (arch: string): string => `istio-job-run-${version}-linux-${arch}.tar.gz`;
const sbomFile = (arch: string): string => `istio-job-run-${version}-linux-${arch}.cdx.json`;
const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

function unpack(arch: string): string {
  const dir = join(scratch, arch);
  mkdirSync(dir, { recursive: true });
  execFileSync('tar', ['-xzf', join(RELEASE, `istio-job-run-${version}-linux-${arch}.tar.gz`), '-C', dir]);
  return dir;
}

describe('npm run release', () => {
  before(async () => {
    const build = await start(NODE, [join(root, 'scripts', 'release.ts')], { timeoutMs: 300_000 }).finished;
    assert.equal(build.code, 0, build.stderr);
  });

  test('writes both bundles, their SBOMs and SHA256SUMS over them all, which sha256sum -c accepts', () => {
    const names = ARCHES.flatMap((arch) => [tarball(arch), sbomFile(arch), helmPluginName(arch)]).sort();
    assert.deepEqual(readdirSync(RELEASE).sort(), ['SHA256SUMS', ...names]);
    const check = execFileSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: RELEASE, encoding: 'utf8' });
    assert.deepEqual(
      check.trim().split('\n').sort(),
      names.map((name) => `${name}: OK`),
    );
  });

  test('each bundle: the launcher and istio-job-run.lib/ with the loader of its architecture', () => {
    for (const [arch, loader, machine] of [
      ['x64', 'ld-linux-x86-64.so.2', 'Advanced Micro Devices X86-64'],
      ['arm64', 'ld-linux-aarch64.so.1', 'AArch64'],
    ] as const) {
      const dir = unpack(arch);
      assert.deepEqual(readdirSync(dir).sort(), ['istio-job-run', 'istio-job-run.lib']);
      const lib = readdirSync(join(dir, 'istio-job-run.lib'));
      assert.ok(
        lib.includes(loader) && lib.includes('istio-job-run') && lib.includes('libc.so.6') && lib.includes('NOTICES'),
        lib.join(' '),
      );
      for (const file of ['istio-job-run', `istio-job-run.lib/istio-job-run`, `istio-job-run.lib/libstdc++.so.6`]) {
        assert.match(execFileSync('readelf', ['-h', join(dir, file)], { encoding: 'utf8' }), new RegExp(`Machine:\\s+${machine}`), file);
      }
      assert.doesNotMatch(
        execFileSync('readelf', ['-l', join(dir, 'istio-job-run')], { encoding: 'utf8' }),
        /INTERP/,
        'the launcher is static',
      );
    }
  });

  test('each Helm plugin tarball, as helm plugin install reads it: one folder named as the file, only folders and files', () => {
    for (const arch of ARCHES) {
      const file = helmPluginName(arch);
      // Helm takes the folder from the file's name: the extension off, then all from the `-` before a version.
      assert.equal(file.replace(/\.tgz$/, '').replace(/(.*)-[0-9]+\..*/, '$1'), HELM_PLUGIN);
      const listing = execFileSync('tar', ['-tvzf', join(RELEASE, file)], { encoding: 'utf8' })
        .trim()
        .split('\n');
      for (const line of listing) assert.match(line, /^[d-]/, `${file}: Helm's extractor takes only folders and regular files: ${line}`);
      const names = listing.map((line) => line.slice(line.lastIndexOf(' ') + 1));
      const bundle = execFileSync('tar', ['-tzf', join(RELEASE, tarball(arch))], { encoding: 'utf8' })
        .trim()
        .split('\n');
      assert.deepEqual(
        names.filter((name) => name.startsWith(`./${HELM_PLUGIN}/`)).sort(),
        [
          `./${HELM_PLUGIN}/`,
          `./${HELM_PLUGIN}/plugin.yaml`,
          ...bundle.filter((name) => name !== './').map((name) => name.replace('./', `./${HELM_PLUGIN}/`)),
        ].sort(),
      );
    }
  });

  test('the x64 Helm plugin, unpacked, runs as Helm 4 runs a post-renderer', async () => {
    const dir = join(scratch, 'helm-plugin');
    mkdirSync(dir, { recursive: true });
    execFileSync('tar', ['-xzf', join(RELEASE, helmPluginName('x64')), '-C', dir]);
    const job = readFileSync(join(root, 'docker', 'k8s', 'job.yaml'), 'utf8');
    const rendered = await postRender(join(dir, HELM_PLUGIN), job, { arch: HELM_ARCH.x64, env: cleanEnv() });
    assert.ok(rendered.ok, `${rendered.error}: ${rendered.stderr}`);
    assert.equal(rendered.manifests, job);
  });

  test('the x64 bundle runs', async () => {
    const dir = unpack('x64');
    const result = await start(join(dir, 'istio-job-run'), ['--sidecar', 'none', '--', 'sh', '-c', 'echo ran; exit 6']).finished;
    assert.equal(result.code, 6);
    assert.equal(result.stdout, 'ran\n');
  });

  test("arm64 under qemu: the executable with the bundle's own arm64 loader and libraries", async () => {
    const lib = join(unpack('arm64'), 'istio-job-run.lib');
    const result = await start(
      QEMU,
      [
        join(lib, 'ld-linux-aarch64.so.1'),
        '--library-path',
        lib,
        join(lib, 'istio-job-run'),
        '--sidecar',
        'none',
        '--',
        'sh',
        '-c',
        'echo ran; exit 7',
      ],
      { timeoutMs: 60_000 },
    ).finished;
    assert.equal(result.code, 7, result.stderr);
    assert.equal(result.stdout, 'ran\n');
  });

  test('arm64 under qemu through its launcher (binfmt_misc of a private user namespace)', async () => {
    const dir = unpack('arm64');
    const script =
      'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc && printf "%b" "$1" > /proc/sys/fs/binfmt_misc/register && exec "$2" --version';
    const [file, args] = userNamespaceArgv(script, [BINFMT, join(dir, 'istio-job-run')]);
    const result = await start(file, args, { timeoutMs: 60_000 }).finished;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `istio-job-run ${version}\n`);
  });
  test('a SOURCE_DATE_EPOCH that is not seconds: a clear error naming it, and the release left as it was', async () => {
    const before = readdirSync(RELEASE).sort();
    const result = await start(NODE, [join(root, 'scripts', 'release.ts')], { env: cleanEnv({ SOURCE_DATE_EPOCH: 'yesterday' }) }).finished;
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /SOURCE_DATE_EPOCH is "yesterday": it must be seconds since 1970/);
    assert.deepEqual(readdirSync(RELEASE).sort(), before);
  });

  test('each launcher: static against musl, no build id', () => {
    for (const arch of ARCHES) {
      const launcher = join(unpack(arch), 'istio-job-run');
      assert.doesNotMatch(readFileSync(launcher, 'latin1'), /glibc\.(cpu|elision|malloc)/, `${arch}: no glibc linked in`);
      assert.doesNotMatch(execFileSync('readelf', ['-n', launcher], { encoding: 'utf8' }), /Build ID/, arch);
    }
  });

  test('no file of either tarball holds the path of this clone', () => {
    const path = Buffer.from(root);
    for (const arch of ARCHES) {
      const dir = unpack(arch);
      for (const file of files(dir)) assert.equal(readFileSync(join(dir, file)).indexOf(path), -1, `${arch}: ${file} holds ${root}`);
    }
  });

  test('each SBOM: valid CycloneDX 1.6, every file of its tarball with its sha256, our sources with theirs', async () => {
    const validator = new CDX.Validation.JsonStrictValidator(CDX.Spec.Version.v1dot6);
    for (const arch of ARCHES) {
      const json = readFileSync(join(RELEASE, sbomFile(arch)), 'utf8');
      assert.equal(await validator.validate(json), null, `${arch}: the SBOM matches the schema`);
      const bom = JSON.parse(json) as Sbom;
      const dir = unpack(arch);
      const listed = bom.components.filter((c) => c['bom-ref'].startsWith('file:'));
      assert.deepEqual(listed.map((c) => c.name).sort(), files(dir).sort(), `${arch}: the SBOM lists every file of the tarball`);
      for (const file of listed) assert.equal(file.hashes?.[0]?.content, sha256(join(dir, file.name)), file.name);
      for (const source of bom.components.filter((c) => c['bom-ref'].startsWith('source:'))) {
        assert.equal(source.hashes?.[0]?.content, sha256(join(root, source.name)), source.name);
      }
      assert.ok(
        bom.components.some((c) => c.name === 'src/launcher/launcher.c'),
        "the launcher's source",
      );
      const refs = new Set(bom.components.map((c) => c['bom-ref']));
      for (const dependency of bom.dependencies) for (const ref of dependency.dependsOn) assert.ok(refs.has(ref), ref);
      for (const deb of bom.components.filter((c) => c.purl?.startsWith('pkg:deb/') === true)) {
        const arch = /[?&]arch=([^&]+)/.exec(deb.purl ?? '')?.[1] ?? '';
        const installed = execFileSync('dpkg-query', ['-W', '-f', '${Version}', `${deb.name}:${arch}`], { encoding: 'utf8' });
        assert.equal(deb.version, installed, `${deb.name} as installed here`);
      }
    }
  });

  test('each NOTICES: a section with the licence text of every part of every file', async () => {
    const inputs = (await bundleJs(join(scratch, 'js'))).inputs;
    const npmDirs = [...new Set(inputs.flatMap((input) => /^(.*node_modules\/(@[^/]+\/)?[^/]+)\//.exec(input)?.[1] ?? []))];
    assert.ok(npmDirs.includes('node_modules/undici'), npmDirs.join(' '));
    for (const arch of ARCHES) {
      const dir = unpack(arch);
      const notices = readFileSync(join(dir, 'istio-job-run.lib', 'NOTICES'), 'utf8');
      const sections = noticeSections(notices);
      const header = notices.slice(0, notices.indexOf('\n====='));
      for (const file of files(dir)) assert.match(header, new RegExp(`^  ${file.replace(/[.+]/g, '\\$&')}$`, 'm'), `${arch}: ${file}`);
      const has = (ref: string, text: string, what: string): void => {
        const section = sections.get(ref);
        assert.ok(section !== undefined, `${arch}: no section for ${ref} (${what})`);
        assert.ok(licenceTextIn(sections, section, text), `${arch}: the section of ${ref} lacks ${what}`);
      };
      has('istio-job-run', readFileSync(join(root, 'LICENSE'), 'utf8'), 'our LICENSE');
      for (const npmDir of npmDirs) {
        const pkg = JSON.parse(readFileSync(join(root, npmDir, 'package.json'), 'utf8')) as { name: string; version: string };
        const licence = readdirSync(join(root, npmDir)).find((name) => /^licen[cs]e/i.test(name));
        assert.ok(licence !== undefined, `${npmDir} has a licence file`);
        has(`npm:${pkg.name}@${pkg.version}`, readFileSync(join(root, npmDir, licence), 'utf8'), `${npmDir}/${licence}`);
      }
      const node = [...sections.keys()].find((ref) => ref.startsWith(`npm:node-linux-${arch}@`));
      assert.ok(node !== undefined && /Node\.js is licensed for use as follows/.test(sections.get(node) ?? ''), `${arch}: Node's LICENSE`);
      for (const library of readdirSync(join(dir, 'istio-job-run.lib')).filter((name) => name.includes('.so'))) {
        const owner = debianOwner(join(dir, 'istio-job-run.lib', library), library);
        const ref = [...sections.keys()].find((key) => key.startsWith(`deb:${owner.package}:`));
        assert.ok(ref !== undefined, `${arch}: no section for ${owner.package}, which ${library} comes from`);
        assert.match(sections.get(ref) ?? '', new RegExp(`^Version: +${owner.version.replace(/[.+]/g, '\\$&')}$`, 'm'));
        assert.match(sections.get(ref) ?? '', /^Source: +\S+ \S+$/m, `${ref}: its source package`);
        has(ref, readFileSync(`/usr/share/doc/${owner.package}/copyright`, 'utf8'), `${owner.package}'s copyright file`);
      }
      const musl = [...sections.keys()].find((ref) => ref.startsWith('deb:musl-dev:'));
      assert.ok(musl !== undefined, `${arch}: a section for the launcher's libc`);
      has(musl, readFileSync('/usr/share/doc/musl-dev/copyright', 'utf8'), "musl's copyright file");
    }
  });
});

interface SbomComponent {
  readonly 'bom-ref': string;
  readonly name: string;
  readonly version?: string;
  readonly purl?: string;
  readonly hashes?: { content: string }[];
}
interface Sbom {
  readonly components: SbomComponent[];
  readonly dependencies: { ref: string; dependsOn: string[] }[];
}

/** Every regular file under DIR, relative to it. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

/** NOTICES' sections by their heading (a ref between two rules). */
function noticeSections(notices: string): Map<string, string> {
  const parts = notices.split(/^={78}\n/m);
  const sections = new Map<string, string>();
  for (let i = 1; i + 1 < parts.length; i += 2) sections.set((parts[i] ?? '').trim(), parts[i + 1] ?? '');
  return sections;
}

/** TEXT is in SECTION, or in a section SECTION points at (NOTICES prints a text that parts share once). */
function licenceTextIn(sections: Map<string, string>, section: string, text: string): boolean {
  const wanted = text.trimEnd();
  return (
    section.includes(wanted) ||
    [...section.matchAll(/the same text as in the section of (\S+) -----/g)].some(
      ([, ref]) => sections.get(ref ?? '')?.includes(wanted) === true,
    )
  );
}

/** The Debian package that installed the file of this machine whose bytes FILE has (dpkg-query -S). */
function debianOwner(file: string, name: string): { package: string; version: string } {
  const digest = sha256(file);
  const lines = execFileSync('dpkg-query', ['-S', `*/${name}`], { encoding: 'utf8' })
    .trim()
    .split('\n');
  for (const line of lines) {
    const [owner, path] = line.split(': ');
    if (owner === undefined || path === undefined) continue;
    try {
      if (sha256(path) !== digest) continue;
    } catch {
      continue;
    }
    const bare = owner.split(':')[0] ?? owner;
    return { package: bare, version: execFileSync('dpkg-query', ['-W', '-f', '${Version}', owner], { encoding: 'utf8' }) };
  }
  throw new Error(`no Debian package installed a file with the bytes of ${file}`);
}
