// --check's rules of a pod's settings outside its scripts: the keys each kind's injector reads, and where (the pod
// template's metadata only; some only as annotations), the annotations whose value is YAML of their own (a preStop
// hook, the proxy's config), the Istio settings that end no Job, and the Job's failure policy.

import type { Node, Pair } from 'yaml';
import { parse as parseYaml } from 'yaml';
import { readSetting, SIDECAR_KINDS, type SidecarKind } from '../../config/kinds.ts';
import type { Pod } from '../pod/pod.ts';
import { entries, get, getIn, items, pairOf, scalars, type Source, text } from '../yaml/source.ts';
import { quitPathIn } from './quits.ts';
import { nameOf } from './messages.ts';
import { type Report, WRAP } from './finding.ts';

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
        report(pair, `${key} is on ${where}, which the injector never reads`, `move it to ${workload.templatePath}.metadata.${field}`);
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
function scalarsUnder(value: unknown, key: string, inside = false, depth = 0): string[] {
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
        `${off ? ': in a namespace that injects, the pod still gets the sidecar' : switch_ ? ': the pod gets no sidecar from it' : ''}`,
      `move it to ${pod.workload.templatePath}.metadata.annotations`,
    );
  }
}

/** A preStop hook that quits the sidecar, declared in an annotation whose value is YAML (a sidecar's own config). */
export function preStopAnnotations(pod: Pod, report: Report): void {
  for (const { key, pair, value } of yamlAnnotations(pod)) {
    if (scalarsUnder(value, 'preStop').some((string) => quitPathIn(string))) {
      report(
        pair,
        `${key} declares a preStop hook that quits the sidecar, which runs only when the pod is being stopped`,
        `remove it and ${WRAP}`,
      );
    }
  }
}

const EXIT_ON_JOB_COMPLETION = /exitOnJobCompletion/i;
const EXIT_ON_ZERO = 'EXIT_ON_ZERO_ACTIVE_CONNECTIONS';

/** exitOnJobCompletion anywhere in the file: no Istio setting. */
export function exitOnJobCompletion(source: Source, report: Report): void {
  const problem = 'exitOnJobCompletion is no Istio setting (unknown proxy config keys are dropped silently)';
  // Only a file that writes the word, or escapes something (a double-quoted "\x65xit..."), can have it.
  if (!EXIT_ON_JOB_COMPLETION.test(source.text) && !source.text.includes('\\')) return;
  for (const document of source.documents) {
    for (const { value, node } of scalars(document.contents))
      if (EXIT_ON_JOB_COMPLETION.test(value)) report(node, problem, `remove it and ${WRAP}`);
  }
}

/** EXIT_ON_ZERO_ACTIVE_CONNECTIONS in a container's command, args or env, or in an annotation's YAML: no TERM comes. */
export function exitOnZero(pod: Pod, report: Report): void {
  const problem = `${EXIT_ON_ZERO} only shortens the proxy's drain after a TERM, and nothing sends it a TERM when the job ends`;
  for (const container of pod.containers) {
    for (const key of ['command', 'args', 'env']) {
      for (const { value, node } of scalars(get(container.node, key))) if (value.includes(EXIT_ON_ZERO)) report(node, problem, WRAP);
    }
  }
  for (const { pair, value } of yamlAnnotations(pod)) {
    if (JSON.stringify(value ?? null).includes(EXIT_ON_ZERO)) report(pair, problem, WRAP);
  }
}

/** A podFailurePolicy rule on exit codes that names no container, in a pod that gets a sidecar. */
export function podFailurePolicy(pod: Pod, report: Report): void {
  const { workload } = pod;
  const policy = get(workload.jobSpec, 'podFailurePolicy');
  if (workload.restartPolicy !== 'Never') {
    for (const field of ['podFailurePolicy', 'backoffLimitPerIndex']) {
      const pair = pairOf(workload.jobSpec, field);
      if (pair !== undefined)
        report(pair, `${field} needs restartPolicy: Never (this pod template has ${workload.restartPolicy ?? 'none'})`, undefined);
    }
  }
  const jobs = pod.jobs.map((container) => container.name);
  for (const rule of items(get(policy, 'rules'))) {
    const onExitCodes = pairOf(rule, 'onExitCodes');
    if (onExitCodes === undefined || get(onExitCodes.value, 'containerName') !== undefined) continue;
    const name = jobs.length === 1 && jobs[0] !== undefined ? jobs[0] : 'the job container';
    report(
      onExitCodes,
      "an onExitCodes rule without containerName is matched against every container, so the sidecar's own exit codes (137, 143, 255) can trip or hide it",
      `set containerName: ${name}`,
    );
  }
}
