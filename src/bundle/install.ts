// --install DIR: a working copy of the portable bundle in DIR, for the init-container pattern:
//   DIR/istio-job-run        the launcher (static, mode 0755)
//   DIR/istio-job-run.lib    a symlink to DIR/.istio-job-run.<version>.<digest>/: the loader, libraries and executable
// The store is named by its content, so installs of one bundle share one copy: a repeat install reuses it, and
// racing installs each build a private copy, rename it to the shared name (one rename wins, the others drop
// theirs) and link to that; what a killed install left is removed by a later one. The content's name is the
// identity the build shipped in the bundle (src/bundle/identity.ts), read rather than computed: a bundle
// without one, or whose files' names and sizes differ from it, is refused. Each step a user could observe is
// one rename(2): the libraries' symlink is swapped first, then the launcher, so DIR holds a working pair at
// every moment. Once linked, every other store goes; a failed install removes what it wrote and puts the link
// back. When there is no room for a second copy beside an earlier install of another bundle, the earlier one
// is removed first, and the log line says so.
// Installs of two different bundles racing into one folder are not this design's case: the last to link wins,
// and its clean-up may take the other's store.

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
import { errorCode, errorMessage } from '../errors.ts';
import { EXIT_WRAPPER_FAILED } from '../command/exit-code.ts';
import type { Logger } from '../log.ts';
import { IDENTITY_FILE, readIdentity } from './identity.ts';
import { LIB_DIR, PROGRAM, type Self } from './self.ts';

const STORE_PREFIX = '.istio-job-run.';
/** Work in progress: never a store, never removed by another install. */
const TEMP_PREFIX = `${STORE_PREFIX}tmp-`;

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

  const { lib, launcher: source } = self.bundle;
  const shipped = readIdentity(lib);
  if ('problem' in shipped) {
    log.error(`--install: ${shipped.problem}; install from an unaltered bundle (a release tarball or the image)`);
    return EXIT_WRAPPER_FAILED;
  }
  // The store holds the identity too, so an installed copy can install itself again.
  const files = [...shipped.files, IDENTITY_FILE].sort();
  const id = `${STORE_PREFIX}${version}.${shipped.identity}`;
  // Unique enough among racing installs; no lock, so a killed install never blocks the next one.
  const temp = join(dir, `${TEMP_PREFIX}${Math.floor(Math.random() * 2 ** 32).toString(16)}`);
  const store = join(dir, id);
  const storeTemp = `${temp}.store`;
  const linkTemp = `${temp}.link`;
  const launcherTemp = `${temp}.launcher`;
  const link = join(dir, LIB_DIR);
  const launcher = join(dir, PROGRAM);
  const before = linkTarget(link);
  let swapped = false;
  try {
    const made = isStore(store) ? undefined : makeStore(lib, files, storeTemp, dir, id, log);
    if (made !== undefined) {
      try {
        renameSync(made, store);
      } catch (error) {
        // Another install of this bundle renamed its copy first: use that one.
        if (!isStore(store)) throw error;
        rmSync(made, { recursive: true, force: true });
      }
    }
    symlinkSync(id, linkTemp);
    copyFileSync(source, launcherTemp);
    chmodSync(launcherTemp, 0o755);
    renameSync(linkTemp, link);
    swapped = true;
    renameSync(launcherTemp, launcher);
  } catch (error) {
    // The libraries' link already points at the new store: put back exactly what was there before.
    const restored = swapped ? restoreLink(link, before, linkTemp) : undefined;
    for (const path of [storeTemp, linkTemp, launcherTemp]) rmSync(path, { recursive: true, force: true });
    // The earlier install was removed to make room: nothing half is left, and nothing claims to work.
    const gone = before !== undefined && !isStore(join(dir, before));
    if (gone) for (const path of [link, launcher]) rmSync(path, { force: true });
    const reason =
      errorCode(error) === 'EISDIR'
        ? `${swapped ? launcher : link} is a directory, not an earlier --install: remove it first`
        : errorMessage(error);
    const left = gone ? `; the earlier install was removed to make room, so ${JSON.stringify(dir)} holds none` : '';
    log.error(`--install: could not install into ${JSON.stringify(dir)}: ${reason}${restored ?? ''}${left}`);
    return EXIT_WRAPPER_FAILED;
  }
  removeStores(dir, linkTarget(link));
  log.info(`installed istio-job-run ${version} as ${launcher}`);
  return 0;
}

/**
 * Copies the libraries into `temp` and returns it, or undefined when a racing install of this bundle finished
 * its store meanwhile. Out of room (ENOSPC, EDQUOT) beside another bundle's store: that store is removed,
 * said in one line, and the copy made again.
 */
function makeStore(lib: string, files: readonly string[], temp: string, dir: string, id: string, log: Logger): string | undefined {
  const copy = (): void => {
    mkdirSync(temp);
    for (const name of files) copyFileSync(join(lib, name), join(temp, name), constants.COPYFILE_FICLONE);
  };
  try {
    copy();
    return temp;
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    if (isStore(join(dir, id))) return undefined;
    const others = stores(dir).filter((name) => name !== id);
    const full = errorCode(error) === 'ENOSPC' || errorCode(error) === 'EDQUOT';
    if (!full || others.length === 0) throw error;
    log.warn(
      `--install: no room in ${JSON.stringify(dir)} for a second copy beside the earlier install: removing it ` +
        'first (until this install ends, DIR has no working istio-job-run)',
    );
    for (const name of others) rmSync(join(dir, name), { recursive: true, force: true });
    copy();
    return temp;
  }
}

/** A store under its final name is complete: only a finished copy is renamed to it. */
function isStore(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Every complete store in DIR (an earlier install's, or a racing one's of another bundle). */
function stores(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.startsWith(STORE_PREFIX) && !name.startsWith(TEMP_PREFIX));
}

/** Work in progress untouched this long was left by an install that was killed: no copy takes an hour. */
const ABANDONED_MS = 3_600_000;

/** Every store but the one linked, and abandoned work; racing installs' work in progress stays theirs. */
function removeStores(dir: string, linked: string | undefined): void {
  for (const name of stores(dir)) {
    if (name !== linked) rmSync(join(dir, name), { recursive: true, force: true });
  }
  for (const name of readdirSync(dir).filter((entry) => entry.startsWith(TEMP_PREFIX))) {
    const path = join(dir, name);
    try {
      if (Date.now() - lstatSync(path).mtimeMs > ABANDONED_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // Gone meanwhile: its install finished or failed.
    }
  }
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
    return `; and ${link} could not be put back: ${errorMessage(error)}`;
  }
}

function checkTarget(dir: string): string | undefined {
  if (dir === '') return 'is empty';
  try {
    if (!statSync(dir).isDirectory()) return 'is not a directory';
    accessSync(dir, constants.W_OK);
    return undefined;
  } catch (error) {
    const code = errorCode(error);
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
