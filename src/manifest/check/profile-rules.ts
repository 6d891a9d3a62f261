// What --check says only under a cluster profile (rules.ts holds the rows): Linkerd's deprecated native keys,
// holdApplicationUntilProxyStarts where istio-proxy runs native, and the findings a pod whose every sidecar runs
// native makes moot.

import type { Node, Pair } from 'yaml';
import { ISTIO, kindNamed } from '../../config/kinds.ts';
import { PROXY_CONTAINER } from '../../config/mode.ts';
import type { Pod } from '../pod/pod.ts';
import type { Source } from '../yaml/source.ts';
import type { Report } from './finding.ts';
import type { RuleId } from './rules.ts';

/**
 * The rules whose finding is moot in a pod whose every sidecar runs native (as the profile has it): each says the
 * pod hangs for want of a quit, or that the sidecar is not ready yet, and kubelet does both for a native sidecar;
 * a quit sent anyway is native-quit's finding.
 */
export const NATIVE_MOOT: readonly RuleId[] = [
  'quit-skipped-on-failure',
  'onfailure-quit-always',
  'quit-only-on-signal',
  'quit-not-enabled',
  'quit-wrong-method',
  'quit-program-missing',
  'quit-unheard',
  'wait-after-work',
];

/** The lines of each pod whose every sidecar runs native. */
export function nativeOnlyLines(source: Source, pods: readonly Pod[]): Set<number> {
  const lines = new Set<number>();
  for (const pod of pods) {
    const known = pod.sidecars.filter((sidecar) => sidecar.known);
    if (known.length === 0 || known.some((sidecar) => sidecar.form !== 'native')) continue;
    const [start = 0, , end = start] = pod.workload.object.range ?? [];
    const last = source.lines.linePos(end).line;
    for (let line = source.lines.linePos(start).line; line <= last; line++) lines.add(line);
  }
  return lines;
}

/** Linkerd's deprecated keys of a native sidecar on the pod: the GA key is read first from 2.20. */
export function deprecatedNativeKeys(pod: Pod, report: Report): void {
  const native = kindNamed('linkerd').template.native;
  const [current, ...deprecated] = native?.keys ?? [];
  for (const key of deprecated) {
    const found = pod.annotations.get(key);
    if (found === undefined) continue;
    const beaten = pod.annotations.has(current ?? '') ? `, and ${current} beats it here` : '';
    report(found.pair, `${key} is deprecated: Linkerd ${native?.since}+ reads ${current} first${beaten}`, `write ${current} instead`);
  }
}

const HOLD = 'holdApplicationUntilProxyStarts';
const NATIVE_KEY = ISTIO.template.native?.keys[0] ?? '';

/** holdApplicationUntilProxyStarts in a pod annotation (ANNOTATIONS: those whose value is YAML) where istio-proxy runs native. */
export function holdNative(
  pod: Pod,
  annotations: readonly { key: string; pair: Pair<Node, Node | null>; value: unknown }[],
  report: Report,
): void {
  const istio = pod.sidecars.find((sidecar) => sidecar.kind === ISTIO);
  if (istio?.form !== 'native') return;
  for (const { key, pair, value } of annotations) {
    if (!valuesOf(value, HOLD).some((held) => held === true || held === 'true')) continue;
    report(
      pair,
      `${key} sets ${HOLD}, which does nothing for a native ${PROXY_CONTAINER} (${istio.formBy ?? `${NATIVE_KEY}: "true"`}): kubelet starts the job's ` +
        "containers only after the proxy's startup probe passed (istio/istio issue 59690)",
      'remove it',
    );
  }
}

/** Every value (a string, a boolean...) under the keys named KEY of a parsed value, at any depth. */
function valuesOf(value: unknown, key: string, depth = 0): unknown[] {
  if (depth > 50 || typeof value !== 'object' || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item) => valuesOf(item, key, depth + 1));
  return Object.entries(value).flatMap(([name, item]) =>
    name === key && typeof item !== 'object' ? [item] : valuesOf(item, key, depth + 1),
  );
}
