// The images job containers run, as far as their contents are documented and stable: what their sh is (busybox's
// ash, bash as sh, dash), which shells they have at all, whether their wget is busybox's, and which of curl and wget
// they leave out.

import type { Dialect } from './dialect.ts';

/** Images whose sh is busybox's ash: Alpine and busybox, the images built on Alpine, distroless's debug images. */
const ASH_IMAGES = ['alpine', 'busybox', 'curlimages/curl'];
/** Images whose sh is bash: Red Hat's (UBI, CentOS, Fedora, Rocky, Alma, Oracle), Amazon Linux, Iron Bank's (built on UBI). */
const BASH_IMAGES =
  /(^|\/)(ubi\d*(-\w+)?|rhel\d*|centos|fedora|rockylinux|almalinux|oraclelinux|amazonlinux)$|^registry1\.dso\.mil\/ironbank\//;
/** Images whose sh is dash: Debian's and Ubuntu's, and the official images built on them. */
const DASH_IMAGES =
  /(^|\/)(debian|ubuntu|python|node|golang|ruby|perl|php|openjdk|eclipse-temurin|amazoncorretto|postgres|mysql|mariadb|redis|nginx|httpd|buildpack-deps|rust|gcc|bitnami\/[\w.-]+)$/;

/** An image reference's repository (without Docker Hub's prefixes) and tag. */
function imageName(image: string): { readonly repository: string; readonly tag: string } {
  const [name = '', tag = ''] = image.replace(/@.*$/, '').split(/:(?=[^/]*$)/);
  return { repository: name.replace(/^(docker\.io\/)?(library\/)?/, ''), tag };
}

/** What `sh` is in an image, and whether the image said so (false: an image not known, dash assumed). */
export function shOfImage(image: string): { readonly dialect: Dialect; readonly known: boolean } {
  const { repository, tag } = imageName(image);
  if (ASH_IMAGES.includes(repository) || /(^|[-.])alpine/.test(tag) || (repository.includes('distroless') && /debug/.test(tag))) {
    return { dialect: 'ash', known: true };
  }
  if (BASH_IMAGES.test(repository)) return { dialect: 'bash-posix', known: true };
  if (DASH_IMAGES.test(repository)) return { dialect: 'dash', known: true };
  return { dialect: 'dash', known: false };
}

/** A program a script may quit its sidecar with, which some images leave out. */
export type QuitProgram = 'curl' | 'wget';

/**
 * The quit programs an image is known to leave out, and what the image is: only images whose contents are
 * documented and stable. Debian's and Ubuntu's official images have neither curl nor wget, nor do python's and
 * node's slim variants (Debian slim with the runtime added); Alpine's and busybox's have busybox's wget and no
 * curl, as do python's and node's alpine variants; distroless images (gcr.io/distroless) have no shell and no
 * tools, their :debug tags busybox's. Undefined: an image not known to lack either.
 */
export function quitProgramsMissing(image: string): { readonly missing: readonly QuitProgram[]; readonly what: string } | undefined {
  const { repository, tag } = imageName(image);
  if (repository.startsWith('gcr.io/distroless/')) {
    return /debug/.test(tag)
      ? { missing: ['curl'], what: "a distroless debug image (busybox's tools)" }
      : { missing: ['curl', 'wget'], what: 'a distroless image (no shell, no tools)' };
  }
  if (repository === 'debian' || repository === 'ubuntu') return { missing: ['curl', 'wget'], what: `${repository}'s official image` };
  if (repository === 'alpine' || repository === 'busybox')
    return { missing: ['curl'], what: `${repository}'s image (busybox's wget only)` };
  if (repository === 'python' || repository === 'node') {
    if (/(^|-)slim/.test(tag)) return { missing: ['curl', 'wget'], what: `the ${repository} slim image` };
    if (/(^|-)alpine/.test(tag)) return { missing: ['curl'], what: `the ${repository} alpine image (busybox's wget only)` };
  }
  return undefined;
}

/** The official images whose alpine tags have busybox's ash as their only shell (postgres's, which add bash, are not). */
const ALPINE_ONLY_ASH = ['python', 'node', 'golang', 'nginx', 'redis'];

/**
 * What an image is when it is known to have no shell of PROGRAM's (bash, dash, ksh, zsh: none but busybox's sh,
 * or none at all), so that a container whose command starts with it never starts; undefined: not known to lack it.
 * Alpine's, busybox's and curlimages/curl have busybox's ash only, as do the alpine tags of ALPINE_ONLY_ASH;
 * distroless images have no shell, their :debug tags busybox's.
 */
export function shellMissing(image: string, program: string): string | undefined {
  if (!['bash', 'dash', 'ksh', 'zsh'].includes(program)) return undefined;
  const { repository, tag } = imageName(image);
  if (repository.startsWith('gcr.io/distroless/'))
    return /debug/.test(tag) ? "a distroless debug image (busybox's sh only)" : 'a distroless image (no shell)';
  if (ASH_IMAGES.includes(repository)) return `${repository}'s image (busybox's sh only)`;
  if (ALPINE_ONLY_ASH.includes(repository) && /(^|-)alpine/.test(tag)) return `the ${repository} alpine image (busybox's sh only)`;
  return undefined;
}

/** Whether a script installs PROGRAM with a package manager (`apt-get install -y curl`, `apk add curl`). */
export function installs(script: string, program: string): boolean {
  return new RegExp(`\\b(apt-get|apt|apk|yum|dnf|microdnf)\\b[^;&|\\n]*\\b(install|add)\\b[^;&|\\n]*\\b${program}\\b`).test(script);
}

/** Whether an image's wget is busybox's (its sh is busybox's ash: Alpine and the images built on it), where SCRIPT does not install GNU wget. */
export const busyboxWget = (image: string, script: string): boolean => shOfImage(image).dialect === 'ash' && !installs(script, 'wget');
