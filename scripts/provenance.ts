// Where each byte of the portable bundle comes from, found from the build's real inputs (never a list kept by
// hand): esbuild's metafile names the npm packages in the executable's scripts, package-lock.json their
// versions and hashes, the pinned Node package its licence, dpkg the Debian package of every library copied
// into istio-job-run.lib/ and of every file the launcher's link read. scripts/notices.ts turns this into the
// bundle's NOTICES file, scripts/sbom.ts into the release's CycloneDX SBOM.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { PackageURL } from 'packageurl-js';
import { root } from './root.ts';

/** One licence or copyright text, with where it was read from (a path relative to the repository or absolute). */
export interface LicenceText {
  readonly from: string;
  readonly text: string;
}

export interface DebianOrigin {
  readonly package: string;
  readonly architecture: string;
  readonly sourcePackage: string;
  readonly sourceVersion: string;
}

/** Something the bundle carries a copy of (or a compiled form of), with its licence texts. */
export interface Component {
  /** Unique within a bundle; the SBOM's bom-ref. */
  readonly ref: string;
  readonly kind: 'ours' | 'node' | 'npm' | 'deb';
  readonly name: string;
  readonly version: string;
  /** An SPDX expression where the package declares one (npm, Node, ours); Debian's copyright files say it in prose. */
  readonly licence?: string | undefined;
  readonly purl?: string | undefined;
  /** Where its source is published, for a person. */
  readonly source: string;
  readonly texts: readonly LicenceText[];
  /** Hashes the inputs declare: package-lock's integrity of an npm tarball. */
  readonly hashes?: readonly { readonly alg: 'SHA-512'; readonly hex: string }[] | undefined;
  readonly debian?: DebianOrigin;
}

/** A file of the bundle (path relative to the bundle's folder) and what went into it. */
export interface BundleFile {
  readonly path: string;
  /** Refs of the components it is a copy or a compiled form of. */
  readonly madeOf: readonly string[];
  /** Our source files (relative to the repository) it is built from. */
  readonly sources: readonly string[];
}

export const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

export const OURS_REF = 'istio-job-run';

export function ours(version: string): Component {
  return {
    ref: OURS_REF,
    kind: 'ours',
    name: 'istio-job-run',
    version,
    licence: packageJson(root).license,
    source: 'this repository: src/ (the wrapper and the launcher), scripts/ (the build)',
    texts: [{ from: 'LICENSE', text: readFileSync(join(root, 'LICENSE'), 'utf8') }],
  };
}

interface PackageJson {
  readonly name: string;
  readonly version: string;
  readonly license?: string;
}
const packageJson = (dir: string): PackageJson => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;

/** A package's licence files: LICENSE, LICENCE, COPYING, with any case and extension. */
function licenceFiles(dir: string): LicenceText[] {
  return readdirSync(dir)
    .filter((name) => /^(licen[cs]e|copying)([.-].*)?$/i.test(name))
    .sort()
    .map((name) => ({ from: relative(root, join(dir, name)), text: readFileSync(join(dir, name), 'utf8') }));
}

/** The npm package folders (relative to the repository) that esbuild's metafile inputs come from. */
export function npmPackageDirs(inputs: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const input of inputs) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match?.[1] !== undefined) dirs.add(match[1]);
  }
  return [...dirs].sort();
}

interface LockEntry {
  readonly version?: string;
  readonly integrity?: string;
  readonly license?: string;
}
const lockPackages = (): Record<string, LockEntry> =>
  (JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }).packages;

/** An integrity string (sha512-BASE64) as the hex the SBOM wants. */
const integrityHashes = (integrity: string | undefined): Component['hashes'] =>
  integrity?.startsWith('sha512-') === true
    ? [{ alg: 'SHA-512', hex: Buffer.from(integrity.slice(7), 'base64').toString('hex') }]
    : undefined;

function npmPurl(name: string, version: string): string {
  const [scope, bare] = name.startsWith('@') ? name.split('/') : [undefined, name];
  return new PackageURL('npm', scope, bare ?? name, version, undefined, undefined).toString();
}

/** An npm package the bundle carries, from its folder under node_modules/ and its package-lock.json entry. */
export function npmComponent(dir: string): Component {
  const pkg = packageJson(join(root, dir));
  const locked = lockPackages()[dir];
  if (locked?.version !== pkg.version) {
    throw new Error(`${dir} is ${pkg.version} but package-lock.json says ${locked?.version ?? 'nothing'}: run npm ci`);
  }
  return {
    ref: `npm:${pkg.name}@${pkg.version}`,
    kind: 'npm',
    name: pkg.name,
    version: pkg.version,
    licence: pkg.license,
    purl: npmPurl(pkg.name, pkg.version),
    source: `the npm registry: npm pack ${pkg.name}@${pkg.version}`,
    texts: licenceFiles(join(root, dir)),
    hashes: integrityHashes(locked.integrity),
  };
}

/** The pinned Node package, from the folder its binary is in (PACKAGE/bin/node). */
export function nodeComponent(arch: string, nodeBinary: string): Component {
  const dir = dirname(dirname(nodeBinary));
  const name = `node-linux-${arch}`;
  const locked = lockPackages()[`node_modules/${name}`];
  if (locked?.version === undefined) throw new Error(`package-lock.json has no node_modules/${name}: run npm install`);
  const version = locked.version;
  if (!dir.startsWith(join(root, 'node_modules'))) {
    // Fetched with npm pack (scripts/pinned-node.ts): the tarball must be the one package-lock.json pins.
    const pack = packOf(dir);
    const integrity = `sha512-${createHash('sha512').update(readFileSync(pack)).digest('base64')}`;
    if (integrity !== locked.integrity) throw new Error(`${pack} is not the ${name}@${version} package-lock.json pins (${integrity})`);
    if (!existsSync(join(dir, 'LICENSE'))) execFileSync('tar', ['-xzf', pack, '-C', dirname(dir), 'package/LICENSE']);
  }
  return {
    ref: `npm:${name}@${version}`,
    kind: 'node',
    name,
    version,
    licence: locked?.license,
    purl: npmPurl(name, version),
    source:
      `Node.js ${version}: its source is released by the Node.js project as node-v${version}.tar.gz; the binary ` +
      `is the npm registry's ${name}@${version} (npm pack ${name}@${version})`,
    texts: [{ from: `${name}@${version}/LICENSE`, text: readFileSync(join(dir, 'LICENSE'), 'utf8') }],
    hashes: integrityHashes(locked?.integrity),
  };
}

/** The npm pack tarball that scripts/pinned-node.ts unpacked into DIR (its package/ folder, beside the tarball). */
function packOf(dir: string): string {
  const pack = readdirSync(dirname(dir)).find((name) => name.endsWith('.tgz'));
  if (pack === undefined) throw new Error(`no npm pack tarball beside ${dir}`);
  return join(dirname(dir), pack);
}

/** Candidates dpkg may know a path by: /usr-merged systems list /lib/... while realpath gives /usr/lib/... */
function dpkgPaths(path: string): string[] {
  const paths = new Set([path]);
  for (const candidate of [...paths]) {
    if (candidate.startsWith('/usr/lib/')) paths.add(candidate.slice(4));
    if (candidate.startsWith('/lib/')) paths.add(`/usr${candidate}`);
  }
  return [...paths];
}

/** The Debian package (with its architecture) that installed PATH. */
function dpkgOwner(path: string): string {
  for (const candidate of dpkgPaths(path)) {
    try {
      const line =
        execFileSync('dpkg-query', ['-S', candidate], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0] ?? '';
      const owner = line.slice(0, line.indexOf(': '));
      if (owner !== '' && !owner.includes(',')) return owner;
    } catch {
      // not this spelling of the path
    }
  }
  throw new Error(`no Debian package owns ${path} (dpkg-query -S): the bundle may only carry files from Debian packages`);
}

let distro: string | undefined;
function debianRelease(): string {
  distro ??= /^VERSION_ID="?([^"\n]+)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'unknown';
  return distro;
}

/** The Debian package that installed PATH, with its copyright file and the licences that file points at. */
export function debianComponent(path: string): Component {
  const owner = dpkgOwner(path);
  const [name, version, architecture, sourcePackage, sourceVersion] = execFileSync(
    'dpkg-query',
    ['-W', '-f', '${Package}\t${Version}\t${Architecture}\t${source:Package}\t${source:Version}', owner],
    { encoding: 'utf8' },
  ).split('\t');
  if (
    name === undefined ||
    version === undefined ||
    architecture === undefined ||
    sourcePackage === undefined ||
    sourceVersion === undefined
  ) {
    throw new Error(`dpkg-query -W ${owner} gave no version`);
  }
  const copyright = `/usr/share/doc/${name}/copyright`;
  if (!existsSync(copyright)) throw new Error(`${owner} has no ${copyright}`);
  const text = readFileSync(realpathSync(copyright), 'utf8');
  return {
    ref: `deb:${name}:${architecture}@${version}`,
    kind: 'deb',
    name,
    version,
    licence: undefined,
    purl: new PackageURL('deb', 'debian', name, version, { arch: architecture, distro: `debian-${debianRelease()}` }, undefined).toString(),
    source: `Debian's source package ${sourcePackage} ${sourceVersion} (apt-get source ${sourcePackage}=${sourceVersion})`,
    texts: [{ from: copyright, text }, ...commonLicences(text)],
    debian: { package: name, architecture, sourcePackage, sourceVersion },
  };
}

/** Debian's copyright files point at full licence texts in /usr/share/common-licenses/ instead of copying them. */
function commonLicences(copyright: string): LicenceText[] {
  const names = new Set(
    [...copyright.matchAll(/\/usr\/share\/common-licenses\/([A-Za-z0-9.+-]*[A-Za-z0-9+])/g)].map((match) => match[1] ?? ''),
  );
  return [...names]
    .sort()
    .map((name) => join('/usr/share/common-licenses', name))
    .filter((path) => existsSync(path))
    .map((path) => ({ from: path, text: readFileSync(realpathSync(path), 'utf8') }));
}

/** The Debian packages of the files a link read (from ld's --trace), but the objects it compiled itself. */
export function linkedComponents(traced: string, compiledHere: (path: string) => boolean): Component[] {
  const files = new Set(
    traced
      .split('\n')
      .map((line) => line.trim().replace(/^\((.*)\).*$/, '$1'))
      .filter((line) => line.startsWith('/') && !compiledHere(line)),
  );
  return uniqueComponents([...files].map((file) => debianComponent(realpathSync(file))));
}

export function uniqueComponents(components: readonly Component[]): Component[] {
  const byRef = new Map<string, Component>();
  for (const component of components) byRef.set(component.ref, component);
  return [...byRef.values()].sort((a, b) => a.ref.localeCompare(b.ref));
}
