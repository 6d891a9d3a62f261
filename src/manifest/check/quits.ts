// How the rules read a container's own quits outside the shell model: a quit's path in any text (a preStop hook,
// a folded script), a quit written as exec items after a program that takes them as arguments, and the quits and
// waits sent with a program the container's image does not have; a quit that works, and what it lacks.

import type { Node } from 'yaml';
import { argvOf, type ContainerFacts, type RequestTarget } from '../pod/containers.ts';
import type { Pod } from '../pod/pod.ts';
import { basename, innerCommand, shellScript, WRAPPERS } from '../script/commands.ts';
import { installs, type QuitProgram, quitProgramsMissing, shellMissing } from '../script/images.ts';
import { requestOf } from '../script/requests.ts';
import { scalars } from '../yaml/source.ts';
import { PROGRAM } from '../../bundle/self.ts';
import { nameOf } from './messages.ts';
import { statusLost } from './paths.ts';

/** Whether a string names a quit path of any kind (/quitquitquit, /shutdown, ...). */
export function quitPathIn(value: string): boolean {
  return /quitquitquit|\/shutdown\b|graceful_shutdown|agent\/v1\/quit/.test(value);
}

export const quitPath = (node: unknown): boolean => scalars(node).some(({ value }) => quitPathIn(value));

/**
 * A quit among a container's command and args after a program that no shell runs: the exec form passes `&&`,
 * `curl` and the rest to the program as arguments (after `sh -c SCRIPT`, as the script's $0 and parameters). The
 * word that starts it, its node and what takes it. Under a wrapper there is none to find: the wrapper quits.
 */
export function quitInArgs(container: ContainerFacts): { word: string; node: Node; program: string; shell: boolean } | undefined {
  const { words, nodes } = argvOf(container.node);
  const inner = innerCommand(
    words.map((word, at) => ({ word, at })),
    (entry) => entry.word,
  ).words;
  const start = inner[0]?.at ?? 0;
  const program = basename(words[start] ?? '');
  // A wrapper quits the sidecar itself, whatever its command makes of the rest.
  if ((WRAPPERS as readonly string[]).includes(program)) return undefined;
  const shell = shellScript(words.slice(start));
  // A shell's words after its script are the script's parameters ($0, $1, ...); anything else's are its arguments.
  const from = shell === undefined ? start + 1 : start + shell.at + 1;
  for (let at = from; at < words.length; at++) {
    const rest = words.slice(at).flatMap((word) => word.trim().split(/\s+/));
    const request = requestOf(rest, { row: 0, column: 0 }, new Map());
    if (request === undefined || !(request.method === 'SIGNAL' || quitPathIn(rest.join(' ')))) continue;
    return { word: words[at] as string, node: nodes[at] as Node, program: words[start] ?? '', shell: shell !== undefined };
  }
  return undefined;
}

/** A quit, or a wait retried in a loop, sent with a program the container's image lacks. */
export interface MissingProgram {
  readonly aimed: RequestTarget;
  readonly program: QuitProgram;
  /** What the image is, which says why it lacks the program. */
  readonly image: string;
  readonly what: string;
}

/**
 * The quits (sent on some way through the script) and the retried waits of a container's script that run curl or
 * wget where its image is known to lack it (and the script does not install it first): each fails with 127, so the
 * quit is never sent and the wait never ends.
 */
export function missingPrograms(container: ContainerFacts): MissingProgram[] {
  const script = container.script;
  const lacks = script === undefined ? undefined : quitProgramsMissing(script.shell.image);
  if (script === undefined || lacks === undefined) return [];
  const text = String(script.node.value);
  return container.aimed.flatMap((aimed): MissingProgram[] => {
    const program = aimed.request.via as QuitProgram;
    const { runs } = aimed.request;
    const counts = aimed.what === 'quit' ? runs.effective : aimed.what === 'wait' && runs.repeated;
    if (!counts || !lacks.missing.includes(program) || installs(text, program)) return [];
    return [{ aimed, program, image: script.shell.image, what: lacks.what }];
  });
}

/**
 * The advice of hand-rolled-quit for POD: each quit a job's script sends itself that works, without a retried wait
 * for readiness before the job (--inject reads it too, where a problem on the same line hides the advice); the rule's
 * remedy is the wrapper.
 */
export function handRolledAdvice(pod: Pod): { line: number; problem: string }[] {
  const advice: { line: number; problem: string }[] = [];
  for (const container of pod.jobs) {
    const shell = container.script?.shell;
    // A container that never starts (shell-missing) sends no quit at all.
    if (statusLost(container) !== undefined || (shell !== undefined && shellMissing(shell.image, shell.program) !== undefined)) continue;
    const waits = container.aimed.filter((aimed) => aimed.what === 'wait' && !aimed.request.runs.afterWork);
    for (const quit of container.aimed) {
      const { runs, via } = quit.request;
      const sidecar = pod.sidecars.find((found) => found.kind === quit.kind);
      // A quit that does not work is another rule's error, on its line (check() then drops this advice).
      if (quit.what !== 'quit' || quit.envoyAdmin === true || !runs.onSuccess || sidecar?.form !== 'classic' || sidecar.quitOn === false)
        continue;
      const wait = waits.find((aimed) => aimed.kind === quit.kind);
      if (wait?.request.runs.repeated === true) continue;
      const lacks = [
        wait === undefined ? `no wait for the ${nameOf(sidecar.kind)}'s readiness before the job` : 'a wait that is not retried',
        ...(via === 'curl' || via === 'wget' ? [`${via}, which the image may not have`] : []),
      ];
      advice.push({
        line: quit.line,
        problem: `container ${container.name}: this quit works, but has ${lacks.join(' and needs ')}; ${PROGRAM} replaces it`,
      });
    }
  }
  return advice;
}
