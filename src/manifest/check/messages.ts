// How --check's messages name what they speak of: a kind of sidecar, the sidecars a quit goes to, a quit endpoint
// the pod leaves off, the sidecar's own setting that ends a Job without a wrapper (unwrapped's message), what a shell
// makes of bash's constructs.

import { ISTIO, type SidecarKind } from '../../config/kinds.ts';
import { PROXY_CONTAINER } from '../../config/mode.ts';
import type { ContainerFacts } from '../pod/containers.ts';
import { type Pod, reached } from '../pod/pod.ts';
import type { PodSidecar } from '../pod/sidecars.ts';
import { WRAP } from './finding.ts';
import { behaviourOf, CONSTRUCTS, type ConstructId, DIALECT_NAMES } from '../script/dialect.ts';

/** How messages name a kind of sidecar: its container's name for Istio, its process's for the others. */
export const nameOf = (kind: SidecarKind | undefined): string =>
  kind === undefined ? 'sidecar' : kind === ISTIO ? PROXY_CONTAINER : kind.label;

/** How messages name the sidecar a quit goes to: its kind, or every classic one of the pod. */
export function sidecarNames(pod: Pod, kind: SidecarKind | undefined): string {
  if (kind !== undefined) return nameOf(kind);
  const names = pod.sidecars.filter((sidecar) => sidecar.form === 'classic').map((sidecar) => nameOf(sidecar.kind));
  return names.length === 0 ? 'sidecar' : names.join(' and ');
}

export function notEnabled(sidecar: PodSidecar): { problem: string; instead: string } {
  if (sidecar.noQuit === true) {
    return {
      problem: `the ${nameOf(sidecar.kind)} of ${sidecar.why} is a release without a quit endpoint`,
      instead: 'use its v2 image with --quitquitquit, or run it as a native sidecar',
    };
  }
  return {
    problem: `this quits the ${nameOf(sidecar.kind)}, but the pod does not switch its quit endpoint on, so it refuses and the pod never completes`,
    instead: `set ${sidecar.kind.enableQuit}`,
  };
}

/** The setting of the sidecar's own that lets a Job end without a wrapper, when there is one. */
function fixFor(sidecar: PodSidecar, templatePath: string): string {
  const native = sidecar.kind.template.native?.keys[0];
  if (native !== undefined) return `set ${native}: "true" on ${templatePath} (a native sidecar, Kubernetes 1.29+)`;
  if (sidecar.container !== undefined)
    return `move ${sidecar.why} to initContainers with restartPolicy: Always (a native sidecar, Kubernetes 1.29+)`;
  return '';
}

/** What the shell running a script makes of construct ID, and which shell that is (and why: the image, or assumed). */
export function constructMessage(id: ConstructId, shell: NonNullable<ContainerFacts['script']>['shell'], text: string): string {
  const name = DIALECT_NAMES[shell.dialect];
  const which =
    shell.program !== 'sh'
      ? `${shell.program} is ${name}`
      : shell.imageKnown
        ? `sh in ${shell.image} is ${name}`
        : `sh here is taken to be ${name} (Debian's and Ubuntu's; the image ${shell.image || '(none)'} does not say which sh it has)`;
  const hashBang = /^\s*#!\S*bash/.test(text) ? " (the script's #! line is a comment to a shell run with -c)" : '';
  const behaviour = behaviourOf(shell.dialect, id);
  const does =
    behaviour === 'syntax'
      ? 'which it cannot parse: the shell ends with status 2 before this line runs'
      : behaviour === 'fatal'
        ? 'which ends the shell with status 2 here'
        : behaviour === 'exit'
          ? 'where it ends the whole shell, as exit does'
          : behaviour === 'misread'
            ? 'which it reads as commands in subshells, with a status bash would not give'
            : behaviour === 'background'
              ? 'which it reads as `cmd &` then `> FILE`: the command runs in the background, and its status is lost'
              : `which fails there with status ${behaviour}${behaviour === 127 ? ' (command not found)' : ''}`;
  return `${CONSTRUCTS[id].written} is bash's, and ${which}${hashBang}, ${does}`;
}

/** What unwrapped says of a pod whose classic sidecars LEFT nothing stops: what they are, and each way to end the Job. */
export function unwrappedMessage(pod: Pod, left: readonly PodSidecar[]): { problem: string; instead: string } {
  const { kind, name, templatePath } = pod.workload;
  const what = left
    .map((sidecar) => `${nameOf(sidecar.kind)} (${sidecar.why}${sidecar.formBy === undefined ? '' : `; classic: ${sidecar.formBy}`})`)
    .join(' and ');
  const also = left.filter((sidecar) => sidecar.kind !== ISTIO).map((sidecar) => sidecar.kind.name);
  const fixes = left.map((sidecar) => fixFor(sidecar, templatePath)).filter((fix) => fix !== '');
  const unreached = pod.jobs
    .flatMap((container) => container.aimed)
    .find(
      (aimed) =>
        aimed.what === 'quit' && !reached(aimed) && left.some((sidecar) => aimed.kind === undefined || aimed.kind === sidecar.kind),
    );
  const never = unreached === undefined ? '' : ` (the quit on line ${unreached.line} runs on no way through the script)`;
  return {
    problem: `${kind} ${name} gets a classic ${what} that nothing tells to quit${never}, so the pod never completes`,
    instead: `${WRAP}${also.length > 0 ? ` with --also ${also.join(',')}` : ''}${fixes.length > 0 ? `, or ${fixes.join('; or ')}` : ''}`,
  };
}
