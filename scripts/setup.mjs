// npm run setup: what the build (and, with --tests, the test suite) needs on a Debian or Ubuntu machine, then
// npm ci. It checks first that Node and npm are the versions package.json's `engines` asks for, so it is plain
// JavaScript that any Node since 12 can read: an old Node must be told so, not die on a .ts file. The Debian
// packages are the ones scripts/debian-packages.txt lists; missing ones are installed with apt-get, as root.
//
//   npm run setup [-- --tests]   check, install what is missing, npm ci
//   npm run setup -- --check     check only (npm runs it before build, demo and test): nothing is installed
//
// Every way it stops is one line on stderr and exit 1.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const tests = args.indexOf('--tests') >= 0;
const checkOnly = args.indexOf('--check') >= 0;
const unknown = args.filter((arg) => arg !== '--tests' && arg !== '--check');

function stop(message) {
  process.stderr.write(`setup: ${message}\n`);
  process.exit(1);
}

if (unknown.length > 0) stop(`unknown argument ${JSON.stringify(unknown[0])} (allowed: --tests, --check)`);

// Node and npm: the ones running this script under npm (npm_config_user_agent says "npm/11.1.0 node/v20.19.0 ..."),
// else the ones on PATH. Under npm run, the `node` on PATH is the pinned one of node_modules/.bin, not the host's.
const engines = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines;
const agent = process.env.npm_config_user_agent || '';
const npmVersion = (/\bnpm\/(\d[^ ]*)/.exec(agent) || [])[1] || run('npm', ['--version']).stdout.trim();
const nodeVersion = ((/\bnode\/v(\d[^ ]*)/.exec(agent) || [])[1] || process.version.slice(1)).trim();
requireVersion('Node', nodeVersion, engines.node, "https://nodejs.org/en/download (or your distribution's nodejs from NodeSource)");
requireVersion('npm', npmVersion, engines.npm, 'npm install -g npm@latest');

if (process.platform !== 'linux') stop(`this is ${process.platform}: the build and the tests need Linux (x64 or arm64)`);
if (process.arch !== 'x64' && process.arch !== 'arm64') stop(`this machine is ${process.arch}: the build needs x64 or arm64`);

const os = osRelease();
const debian = /\b(debian|ubuntu)\b/.test(`${os.ID || ''} ${os.ID_LIKE || ''}`);
const listFile = 'scripts/debian-packages.txt';
const wanted = packages().filter((p) => p.for === 'build' || tests);

if (!debian) {
  if (!checkOnly) {
    stop(
      `this is ${os.PRETTY_NAME || 'not Debian or Ubuntu'}, not Debian or Ubuntu: install the equivalents of ` +
        `${wanted.map((p) => p.name).join(' ')} (${listFile} says what each is for), then run npm ci`,
    );
  }
} else {
  if (tests && process.arch !== 'x64') stop(`the test suite's packages (${listFile}) are for an x64 machine; this one is ${process.arch}`);
  const missing = wanted.filter((p) => !installed(p.name));
  if (missing.length > 0) {
    const names = missing.map((p) => p.name).join(' ');
    const how = `npm run setup${tests ? ' -- --tests' : ''}`;
    if (checkOnly) stop(`missing Debian packages: ${names}; \`${how}\` installs them (as root)`);
    if (process.getuid() !== 0) {
      stop(
        `missing Debian packages: ${names}; run \`${how}\` as root, or install them as root: apt-get install --no-install-recommends ${names}`,
      );
    }
    aptInstall(missing);
  }
}

if (checkOnly) {
  if (!existsSync(join(root, 'node_modules', `node-linux-${process.arch}`, 'bin', 'node'))) {
    stop('node_modules is not installed: run `npm run setup` first');
  }
  process.exit(0);
}

// npm ci, after a look at the registry: offline, npm's own failure is a page of retries and a log file.
const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
const registry = run(npm[0], [...npm.slice(1), 'config', 'get', 'registry']).stdout.trim() || 'https://registry.npmjs.org/';
const ping = run(npm[0], [...npm.slice(1), 'ping', '--fetch-timeout=20000', '--fetch-retries=0'], 60_000);
if (ping.status !== 0) stop(`cannot reach the npm registry ${registry} (npm ping failed): check the network or npm's proxy settings`);
// Only npm's errors: its expected warnings are said below in one line of ours (packages that ask for a newer Node
// than the host's, which only runs npm and this script), or are none of a newcomer's concern.
const ci = spawnSync(npm[0], [...npm.slice(1), 'ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: root, stdio: 'inherit' });
if (ci.status !== 0) stop('npm ci failed (its output is above)');
const pinned = join(root, 'node_modules', `node-linux-${process.arch}`, 'bin', 'node');
const pinnedRuns = run(pinned, ['--version']);
if (pinnedRuns.status !== 0) stop(`the pinned Node ${pinned} does not start: ${lastLine(pinnedRuns.stderr)}`);
const newer = needNewerNode(process.versions.node);
if (newer.length > 0) {
  process.stderr.write(
    `setup: ${newer.join(', ')} ask for a newer Node than this machine's ${process.version}: they run on the pinned Node ${pinnedRuns.stdout.trim()}, as everything here does\n`,
  );
}
process.stderr.write(
  `setup: ready: Debian packages${tests ? ' for the build and the tests' : ' for the build'}, npm ci (Node ${pinnedRuns.stdout.trim()} pinned)\n`,
);
// With --tests: the engines of test/engines (Kubernetes' admission code, Helm 4), built with the machine's Go from
// the Go module proxy and cached; without Go, one line says the tests that need them are skipped.
if (tests) {
  const engines = spawnSync(pinned, [join(root, 'scripts', 'engines.ts'), '--prepare'], {
    cwd: root,
    stdio: 'inherit',
    timeout: 60 * 60_000,
  });
  if (engines.status !== 0) stop('the engines of test/engines did not build (the line above says why)');
}

/** The installed packages whose engines.node is a ">=MAJOR" floor above the host's major version (npm's EBADENGINE). */
function needNewerNode(version) {
  const major = Number(version.split('.')[0]);
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const names = new Set();
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    const floor = /^>=\s*(\d+)/.exec(entry?.engines?.node ?? '');
    if (path !== '' && floor && Number(floor[1]) > major && existsSync(join(root, path)))
      names.add(path.slice(path.lastIndexOf('node_modules/') + 13));
  }
  return [...names].sort();
}

/** Exits when VERSION does not satisfy RANGE, which package.json writes as ">=MAJOR[.MINOR[.PATCH]]". */
function requireVersion(name, version, range, how) {
  const floor = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(range || '');
  if (!floor) stop(`package.json's engines.${name.toLowerCase()} is ${JSON.stringify(range)}: setup reads only ">=X.Y.Z"`);
  if (!/^\d+(\.\d+)*/.test(version)) stop(`cannot tell the version of ${name} (${JSON.stringify(version)}): is it installed?`);
  const have = version.split(/[.-]/).map(Number);
  const need = floor[1].split('.').map(Number);
  for (let i = 0; i < need.length; i++) {
    if ((have[i] || 0) > need[i]) return;
    if ((have[i] || 0) < need[i])
      stop(`${name} ${version} is too old: this project needs ${name} ${range} (package.json engines); get one: ${how}`);
  }
}

/** The list: one package a line, `name for provides why...`. */
function packages() {
  return readFileSync(join(root, listFile), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const [name, group] = line.trim().split(/\s+/);
      if (group !== 'build' && group !== 'tests') stop(`${listFile}: ${JSON.stringify(line)}: the second column must be build or tests`);
      return { name, for: group };
    });
}

function osRelease() {
  const fields = {};
  for (const file of ['/etc/os-release', '/usr/lib/os-release']) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const match = /^([A-Z_]+)=("?)(.*)\2$/.exec(line);
      if (match) fields[match[1]] = match[3];
    }
    break;
  }
  return fields;
}

function installed(name) {
  return /install ok installed/.test(run('dpkg-query', ['-W', '-f=${Status}', name]).stdout);
}

function aptInstall(missing) {
  const names = missing.map((p) => p.name);
  // A package of another architecture (musl-dev:arm64): dpkg must know that architecture too.
  for (const arch of new Set(names.filter((n) => n.includes(':')).map((n) => n.split(':')[1]))) {
    if (!run('dpkg', ['--print-foreign-architectures']).stdout.split('\n').includes(arch)) {
      const added = run('dpkg', ['--add-architecture', arch]);
      if (added.status !== 0) stop(`dpkg --add-architecture ${arch} failed: ${lastLine(added.stderr)}`);
    }
  }
  process.stderr.write(`setup: installing ${names.join(' ')}\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = run('apt-get', ['update', '-qq'], 600_000, env);
  const fetchFailed = /^[WE]: Failed to fetch .*$/m.exec(update.stderr);
  if (update.status !== 0 || fetchFailed) {
    const why = fetchFailed ? fetchFailed[0].replace(/^[WE]: /, '').replace(/\s+/g, ' ') : lastLine(update.stderr);
    stop(`apt-get update cannot reach the package mirrors (${why}): check the network or apt's proxy settings`);
  }
  const install = run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...names], 1_800_000, env);
  if (install.status !== 0) stop(`apt-get install ${names.join(' ')} failed: ${lastLine(install.stderr)}`);
  const still = missing.filter((p) => !installed(p.name));
  if (still.length > 0) stop(`apt-get did not install ${still.map((p) => p.name).join(' ')}`);
}

function run(command, argv, timeout = 60_000, env = process.env) {
  const result = spawnSync(command, argv, { cwd: root, encoding: 'utf8', timeout, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return { status: result.error ? -1 : result.status, stdout: result.stdout || '', stderr: result.stderr || String(result.error || '') };
}

function lastLine(text) {
  return (
    text
      .trim()
      .split('\n')
      .filter((line) => line.trim() !== '')
      .pop() || ''
  );
}
