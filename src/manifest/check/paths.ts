// The queries of --check's rules over a container's script: which of its paths they judge, the quit each path sends
// and where it is, and where the job's status is lost; --inject's proof asks the same. Each reads the paths the
// script model walked (script/outcome.ts), never the script's text.

import { kindNamed, type SidecarKind } from '../../config/kinds.ts';
import type { ContainerFacts } from '../pod/containers.ts';
import type { Pod } from '../pod/pod.ts';
import { quitsOf } from '../pod/stop.ts';
import { basename } from '../script/commands.ts';
import { wrapperKind } from '../script/programs.ts';
import type { Event, Path } from '../script/state.ts';

/** Programs that are no job: a wrapper that runs one of these wraps nothing. */
export const TRIVIAL = new Set(['echo', 'printf', 'true', ':', 'sleep', 'exit', 'date']);

/** The file's line of a place in a container's script. */
export function scriptLine(container: ContainerFacts, row: number, column: number): number {
  const script = container.script;
  if (script === undefined) return 0;
  return script.lines.lineAt(row, column) ?? 0;
}

export const eventLine = (container: ContainerFacts, event: Event): number => scriptLine(container, event.place.row, event.place.column);

/**
 * The paths of a container's script that rules judge, in each world the outcome knows on every path (none in a
 * world it does not): those where the job ran, and failed in the failing world.
 */
export function judged(container: ContainerFacts): { success: Path[]; failure: Path[] } | undefined {
  const outcome = container.script?.facts.outcome;
  if (outcome === undefined) return undefined;
  const known = (paths: readonly Path[], unknown: string | undefined): boolean =>
    unknown === undefined && paths.every((path) => path.unknown === undefined);
  return {
    success: known(outcome.success, outcome.unknown.success) ? outcome.success.filter((path) => path.worked) : [],
    failure: known(outcome.failure, outcome.unknown.failure) ? outcome.failure.filter((path) => path.failed) : [],
  };
}

/** Whether the request or wrapper of this id tells a sidecar (of KIND, or any) to quit. */
export function quitsById(container: ContainerFacts, id: number, kind?: SidecarKind): boolean {
  const aimed = container.aimed.find((found) => found.request.id === id);
  if (aimed !== undefined)
    return (
      aimed.what === 'quit' &&
      aimed.request.rejected === undefined &&
      (kind === undefined || aimed.kind === undefined || aimed.kind === kind)
    );
  const wrapper = container.scriptWrappers.find((found) => found.id === id);
  return wrapper?.quits === true && wrapper.child !== undefined && !TRIVIAL.has(basename(wrapper.child));
}

/** The first quit of a path that is sent (not left in the background); AFTER_WORK: only one after a command of the job. */
export function quitIn(container: ContainerFacts, path: Path, kind?: SidecarKind, afterWork = false): Event | undefined {
  let worked = false;
  for (const event of path.events) {
    if (event.what === 'work') worked = true;
    else if (event.said !== undefined && event.background !== true && (worked || !afterWork) && quitsById(container, event.said, kind))
      return event;
  }
  return undefined;
}

export function kindSaid(container: ContainerFacts, id: number): SidecarKind | undefined {
  const aimed = container.aimed.find((found) => found.request.id === id);
  if (aimed !== undefined) return aimed.kind;
  const kind = wrapperKind(container.scriptWrappers.find((found) => found.id === id)?.program ?? '');
  return kind === undefined ? undefined : kindNamed(kind);
}

/** Whether a wrapper of the script at this line runs a command that is not the job. */
export function wrongWrapper(container: ContainerFacts, line: number): boolean {
  return container.scriptWrappers.some(
    (wrapper) => wrapper.line === line && wrapper.quits && (wrapper.child === undefined || TRIVIAL.has(basename(wrapper.child))),
  );
}

/**
 * The quit of a watcher (a container that only waits for another, in a pod with more than one job container) that
 * looks for the job's process where the pod does not share its processes: found on every way through it, it runs at once.
 */
export function blindWatcher(pod: Pod, container: ContainerFacts): Event | undefined {
  const facts = container.script?.facts;
  if (facts === undefined || !facts.blind || !facts.watches || pod.jobs.length < 2) return undefined;
  if (facts.outcome.unknown.success !== undefined || facts.outcome.success.some((path) => path.unknown !== undefined)) return undefined;
  const quits = facts.outcome.success.map((path) => quitIn(container, path));
  return quits.every((quit) => quit !== undefined) ? quits[0] : undefined;
}

/** Where a script that quits ends with 0 after the job failed, on every path the model knows: the status is lost. */
export function statusLost(container: ContainerFacts): Path | undefined {
  const paths = judged(container);
  if (paths === undefined || paths.failure.length === 0 || quitsOf(container).length === 0) return undefined;
  return paths.failure.every((path) => path.status === 0) ? paths.failure[0] : undefined;
}

/**
 * Where a script known to its end in the failing world ends with 0 after the job failed (a pipeline without
 * pipefail, an echo after the job), whether it quits or not: a wrapper in front would report a success.
 */
export function statusLostToWrapper(container: ContainerFacts): Path | undefined {
  const outcome = container.script?.facts.outcome;
  if (outcome === undefined || outcome.unknown.failure !== undefined) return undefined;
  if (outcome.failure.some((path) => path.unknown !== undefined)) return undefined;
  return outcome.failure.find((path) => path.failed && path.status === 0);
}
