// --check's readings of a pod's annotations and labels: the keys each kind's injector reads, and where (the pod
// template's metadata only; some only as annotations), and the annotations whose value is YAML of their own.

import type { Node, Pair } from 'yaml';
import { parse as parseYaml } from 'yaml';
import { readSetting, SIDECAR_KINDS, type SidecarKind } from '../../config/kinds.ts';
import type { Pod } from '../pod/pod.ts';
import { entries, get, getIn, text } from '../yaml/source.ts';
import { nameOf } from './messages.ts';
import type { Report } from './finding.ts';

/** The Istio keys that only a pod's metadata is read for. */
const ISTIO_KEY = /(^|\.)istio\.io\//;
const KINDS = SIDECAR_KINDS as readonly SidecarKind[];

/** The kind whose injector reads KEY only as an annotation: its inject switch (where no label is), native, quit, init-only keys. */
function annotationOnly(key: string): SidecarKind | undefined {
  return KINDS.find((kind) => {
    const markers = kind.template;
    if (markers.inject?.labels.includes(key) === true) return false;
    const quitSwitch =
      typeof markers.quitSwitch === 'object' && 'annotation' in markers.quitSwitch ? markers.quitSwitch.annotation : undefined;
    return [...(markers.inject?.annotations ?? []), ...(markers.native?.keys ?? []), quitSwitch, markers.initOnly?.annotation].includes(
      key,
    );
  });
}

/** The keys of every kind's injector, which only the pod template's metadata is read for. */
function injectionKey(key: string): boolean {
  if (ISTIO_KEY.test(key)) return true;
  return KINDS.some((kind) => {
    const markers = kind.template;
    return [...(markers.inject?.labels ?? []), ...(markers.inject?.annotations ?? []), ...(markers.native?.keys ?? [])].includes(key);
  });
}

/** Injection keys on a Job's or CronJob's own metadata (and a CronJob's Job template) that the pod template lacks. */
export function misplaced(pod: Pod, report: Report): void {
  const { workload } = pod;
  if (workload.kind === 'Pod') return;
  const places: [unknown, string][] = [[workload.object, `the ${workload.kind}'s own metadata`]];
  if (workload.kind === 'CronJob') places.push([getIn(workload.object, ['spec', 'jobTemplate']), "the Job template's metadata"]);
  for (const [owner, where] of places) {
    for (const field of ['annotations', 'labels']) {
      for (const [key, , pair] of entries(getIn(owner, ['metadata', field]))) {
        if (!injectionKey(key) || get(getIn(workload.template, ['metadata', field]), key) !== undefined) continue;
        report(pair, `${key} is on ${where}, which the injector never reads: move it to ${workload.templatePath}.metadata.${field}`);
      }
    }
  }
}

/** The pod template's annotations whose value is YAML (or JSON) of a map or list, parsed. */
export function yamlAnnotations(pod: Pod): { key: string; pair: Pair<Node, Node | null>; value: unknown }[] {
  const found: { key: string; pair: Pair<Node, Node | null>; value: unknown }[] = [];
  for (const [key, { value, pair }] of pod.annotations) {
    if (!/[:{[]/.test(value) || !/[\n{[]|: /.test(value)) continue;
    try {
      const parsed: unknown = parseYaml(value, { version: '1.1', maxAliasCount: 100 });
      if (typeof parsed === 'object' && parsed !== null) found.push({ key, pair, value: parsed });
    } catch {
      // Not YAML: a plain annotation.
    }
  }
  return found;
}

/** Every string under the keys named KEY of a parsed value. */
export function scalarsUnder(value: unknown, key: string, inside = false, depth = 0): string[] {
  if (depth > 50) return [];
  if (typeof value === 'string') return inside ? [value] : [];
  if (Array.isArray(value)) return value.flatMap((item) => scalarsUnder(item, key, inside, depth + 1));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([name, item]) => scalarsUnder(item, key, inside || name === key, depth + 1));
  }
  return [];
}

/** The pod template's labels that a kind's injector reads only as annotations: the label has no effect. */
export function annotationsAsLabels(pod: Pod, report: Report): void {
  const labels = getIn(pod.workload.template, ['metadata', 'labels']);
  for (const [key, value, pair] of entries(labels)) {
    const kind = annotationOnly(key);
    if (kind === undefined) continue;
    const switch_ = kind.template.inject?.annotations.includes(key) === true;
    const off = switch_ && kind.template.inject !== undefined && readSetting(kind.template.inject.reading, text(value) ?? '') !== 'on';
    report(
      pair,
      `${key} is a label here, but ${nameOf(kind)}'s injector reads it only as an annotation, so it has no effect` +
        `${off ? ': in a namespace that injects, the pod still gets the sidecar' : switch_ ? ': the pod gets no sidecar from it' : ''}` +
        `: move it to ${pod.workload.templatePath}.metadata.annotations`,
    );
  }
}
