// How each sidecar of a pod stops: the quits its containers send or have a wrapper send, and the classic
// sidecars that nothing stops (what --check reports and --inject rewrites).

import { type KindName, kindNamed, type SidecarKind } from '../../config/kinds.ts';
import { wrapperKind } from '../script/programs.ts';
import type { ContainerFacts, RequestTarget } from './containers.ts';
import type { Pod } from './pod.ts';
import type { PodSidecar } from './sidecars.ts';

/** Every quit a container's script sends or has a wrapper send, with how it runs. */
export function quitsOf(
  container: ContainerFacts,
): { line: number; kind?: SidecarKind | undefined; runs: RequestTarget['request']['runs']; signal: boolean; rejected: boolean }[] {
  return [
    ...container.aimed
      .filter((aimed) => aimed.what === 'quit')
      .map((aimed) => ({
        line: aimed.line,
        ...(aimed.kind === undefined ? {} : { kind: aimed.kind }),
        runs: aimed.request.runs,
        signal: aimed.request.method === 'SIGNAL',
        rejected: aimed.request.rejected !== undefined,
      })),
    ...container.scriptWrappers
      .filter((wrapper) => wrapper.quits)
      .map((wrapper) => ({
        line: wrapper.line,
        ...(wrapperKind(wrapper.program) === undefined ? {} : { kind: kindNamed(wrapperKind(wrapper.program) as KindName) }),
        runs: wrapper.runs,
        signal: false,
        rejected: false,
      })),
  ];
}

/**
 * The classic sidecars the manifest shows that nothing in the pod tells to quit. A script YAML folded or the
 * shell rejects counts as stopping them for --check (its own rule says why its quit never runs), not for --inject.
 */
export function unstopped(pod: Pod, { brokenScriptsCount } = { brokenScriptsCount: true }): PodSidecar[] {
  return pod.sidecars.filter((sidecar) => {
    if (sidecar.form !== 'classic' || !sidecar.known || sidecar.kubexit === true) return false;
    for (const container of pod.jobs) {
      const broken = (container.script?.joined.length ?? 0) > 0 || container.script?.facts.syntaxError !== undefined;
      if (broken && brokenScriptsCount) return false;
      if (broken) continue;
      const stops = container.wrapper?.stops;
      if (stops === 'all' || stops?.includes(sidecar.kind.name as never)) return false;
      for (const quit of quitsOf(container)) {
        // A quit counts where it is sent, or where only a signal's trap holds it (its own rule says so).
        const sent = quit.runs.effective || (quit.runs.trap !== undefined && quit.runs.trap !== 'EXIT' && quit.runs.trap !== 'ERR');
        if (quit.rejected || !sent) continue;
        if (quit.kind === undefined || quit.kind === sidecar.kind) return false;
      }
    }
    return true;
  });
}
