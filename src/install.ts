// --install DIR: a working copy of the portable bundle in DIR, for the init-container pattern:
//   DIR/istio-job-run        the launcher (static, mode 0755)
//   DIR/istio-job-run.lib    a symlink to DIR/.istio-job-run.<version>.<id>/, the loader, libraries and executable
// Each step that a user could observe is one rename(2): the libraries' symlink is swapped first, then the
// launcher, so DIR holds a working pair at every moment. A second install replaces the first and removes
// its files; a failed one removes what it wrote.

import {
  accessSync,
  chmodSync,
  constants,
  copyFileSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { EXIT_WRAPPER_FAILED } from './exit-code.ts';
import type { Logger } from './log.ts';
import { LIB_DIR, PROGRAM, type Self } from './self.ts';

const STORE_PREFIX = '.istio-job-run.';

export function install(dir: string, self: Self, version: string, log: Logger): number {
  if (self.bundle === undefined) {
    log.error(
      `--install: ${self.executable} uses the system's C library, so a copy of it would not run in ` +
        'an image without one. Run --install from the portable bundle (dist/bundle/istio-job-run, a release ' +
        'tarball, or the istio-job-run image).',
    );
    return EXIT_WRAPPER_FAILED;
  }
  const problem = checkTarget(dir);
  if (problem !== undefined) {
    log.error(`--install: ${JSON.stringify(dir)} ${problem}`);
    return EXIT_WRAPPER_FAILED;
  }

  // Unique enough for a name in DIR; node:crypto would cost every start-up its load time.
  const id = `${STORE_PREFIX}${version}.${Math.floor(Math.random() * 2 ** 32)
    .toString(16)
    .padStart(8, '0')}`;
  const store = join(dir, id);
  const linkTemp = join(dir, `${id}.link`);
  const launcherTemp = join(dir, `${id}.launcher`);
  const link = join(dir, LIB_DIR);
  const launcher = join(dir, PROGRAM);
  const previous = previousStore(link);
  const before = linkTarget(link);
  let swapped = false;
  try {
    mkdirSync(store);
    for (const name of readdirSync(self.bundle.lib)) copyFileSync(join(self.bundle.lib, name), join(store, name));
    symlinkSync(id, linkTemp);
    copyFileSync(self.bundle.launcher, launcherTemp);
    chmodSync(launcherTemp, 0o755);
    renameSync(linkTemp, link);
    swapped = true;
    renameSync(launcherTemp, launcher);
  } catch (error) {
    // The libraries' link already points at the new store: put back exactly what was there before.
    const restored = swapped ? restoreLink(link, before, linkTemp) : undefined;
    for (const path of [store, linkTemp, launcherTemp]) rmSync(path, { recursive: true, force: true });
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'EISDIR'
        ? `${swapped ? launcher : link} is a directory, not an earlier --install: remove it first`
        : (error as Error).message;
    log.error(`--install: could not install into ${JSON.stringify(dir)}: ${reason}${restored ?? ''}`);
    return EXIT_WRAPPER_FAILED;
  }
  if (previous !== undefined && previous !== id) rmSync(join(dir, previous), { recursive: true, force: true });
  log.info(`installed istio-job-run ${version} as ${launcher}`);
  return 0;
}

/** The link as it was before the install (or none), in one rename; says what could not be put back. */
function restoreLink(link: string, previous: string | undefined, temp: string): string | undefined {
  try {
    rmSync(temp, { force: true });
    if (previous === undefined) {
      rmSync(link, { force: true });
    } else {
      symlinkSync(previous, temp);
      renameSync(temp, link);
    }
    return undefined;
  } catch (error) {
    return `; and ${link} could not be put back: ${(error as Error).message}`;
  }
}

function checkTarget(dir: string): string | undefined {
  if (dir === '') return 'is empty';
  try {
    if (!statSync(dir).isDirectory()) return 'is not a directory';
    accessSync(dir, constants.W_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'does not exist (create it, or mount an emptyDir there)';
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'is not writable';
    return `cannot be used (${code ?? String(error)})`;
  }
}

/** Where a symlink points, or undefined when there is none. */
function linkTarget(link: string): string | undefined {
  try {
    return lstatSync(link).isSymbolicLink() ? readlinkSync(link) : undefined;
  } catch {
    return undefined;
  }
}

/** The store an earlier install's symlink points at, if it is one of ours. */
function previousStore(link: string): string | undefined {
  const target = linkTarget(link);
  return target !== undefined && target.startsWith(STORE_PREFIX) && !target.includes('/') ? target : undefined;
}
