// --admission-policy: what --inject does, as a MutatingAdmissionPolicy and its binding
// (admissionregistration.k8s.io/v1, or v1beta1), for the API server to apply to every Job, CronJob and bare Pod it
// admits. Its CEL is generated from the same facts --inject reads: the sidecar kinds' markers (src/config/kinds.ts),
// the values --inject inserts (inject.ts, image-volume.ts) and the wrapper's flags. Where a pod is one --inject
// would refuse or leave as it is, the policy leaves it alone; it also leaves alone a pod whose containers stop a
// sidecar themselves (a quit in their words or a quit URL in their env, a signal, a wrapper): CEL cannot read a
// script, and such a pod is --inject's to judge. A call to a sidecar's API or a wait for it is no quit: wrapped.
// The patch is JSON Patch (a command is an atomic list, which an apply configuration cannot prefix), built with
// Kubernetes' CEL: the JSONPatch type, jsonpatch.escapeKey, and lists' indexOf (k8s.io/apiserver pkg/cel/library
// jsonpatch.go and lists.go); every map or list literal whose items differ in type has them in dyn(), since
// Kubernetes' CEL takes literals of one type only (cel.HomogeneousAggregateLiterals, pkg/cel/environment/base.go).

import { stringify } from 'yaml';
import { PROGRAM } from '../../bundle/self.ts';
import { flagOnWords, ISTIO, QUIT_WORDS, type Reading, SIDECAR_KINDS, type SidecarKind, switchFlags } from '../../config/kinds.ts';
import { PROXY_CONTAINER, STATUS_ANNOTATION } from '../../config/mode.ts';
import { OPTIONS } from '../../config/options.ts';
import { installForm, type Profile } from '../../config/profile.ts';
import type { PolicyVersion } from '../../config/tool-flags.ts';
import { WRAPPERS } from '../script/commands.ts';
import { SIDECAR_CALLS, SIDECAR_FRONTS, TOMBSTONE_WRAPPERS } from '../script/programs.ts';
import { QUIT_URLS_VARIABLES } from '../script/requests.ts';
import type { InjectedNamespaces } from '../pod/sidecars.ts';
import type { Value } from '../yaml/edits.ts';
import { imageVolume, imageVolumeWrapper } from './image-volume.ts';
import {
  INSTALLER,
  installer,
  MOUNT_PATH,
  NATIVE_ANNOTATION,
  PODINFO_DIR,
  PODINFO_MOUNT,
  PODINFO_VOLUME,
  PODINFO_VOLUME_ITEM,
  STATUS_ENV,
  VOLUME,
  WRAPPER_MOUNT,
  WRAPPER_PATH,
} from './inject.ts';

/** The API versions the policy is printed for: v1 (Kubernetes 1.36+), v1beta1 (1.34 and 1.35, behind a gate). */
const POLICY_NAME = PROGRAM;
/** The variable that names the first of the policy's checks a pod fails, or is empty. */
export const SKIPPED = 'skipped';

/** A label selector as the API writes it (metav1.LabelSelector). */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

export interface PolicySettings {
  readonly image: string;
  readonly native: boolean;
  readonly imageVolume: boolean;
  readonly version: PolicyVersion;
  readonly namespaceSelector?: LabelSelector;
  /** Namespaces whose pods get a kind of sidecar, by name (--injected-namespaces), beside their labels. */
  readonly namespaces: InjectedNamespaces;
  /** The cluster as stated: the form of a sidecar the pod does not choose (none: classic). */
  readonly profile?: Profile;
}

/** A CEL string literal (CEL's double-quoted strings take JSON's escapes). */
const str = (value: string): string => JSON.stringify(value);
const strs = (values: readonly string[]): string => `[${values.map(str).join(', ')}]`;
/** RE2's escape of a literal. */
const re = (value: string): string => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const anyOf = (values: readonly string[]): string => `(${values.map(re).join('|')})`;

/** A value as a CEL literal; the items of a list or map that are not all strings (or all booleans) each in dyn(). */
export function literal(value: Value): string {
  if (typeof value === 'string') return str(value);
  if (typeof value !== 'object') return String(value);
  const items: readonly Value[] = Array.isArray(value) ? value : Object.values(value);
  const plain = items.every((item) => typeof item === 'string') || items.every((item) => typeof item === 'boolean');
  const item = (inner: Value): string => (plain ? literal(inner) : `dyn(${literal(inner)})`);
  if (Array.isArray(value)) return `[${(value as readonly Value[]).map(item).join(', ')}]`;
  return `{${Object.entries(value)
    .map(([key, inner]) => `${str(key)}: ${item(inner)}`)
    .join(', ')}}`;
}

/**
 * CEL for what an injector reading this way makes of VALUE (a string): 'on', 'off', 'unset' or 'refused', as
 * readSetting reads it (src/config/kinds.ts): trimmed only where the reading trims (CEL's trim takes off Unicode's
 * white space, as Go's strings.TrimSpace does), lower-cased only where it folds (lowerAscii: no value of a reading
 * that folds has a letter that a non-ASCII one lower-cases to, the Kelvin sign's k or the dotted capital I's i).
 */
function setting(reading: Reading, value: string): string {
  const trimmed = reading.trims === true ? `${value}.trim()` : value;
  const key = reading.folds === true ? `${trimmed}.lowerAscii()` : trimmed;
  const cases: [readonly string[], string][] = [
    [reading.on, 'on'],
    [reading.off, 'off'],
    [reading.unset ?? [], 'unset'],
  ];
  return cases
    .filter(([values]) => values.length > 0)
    .reduceRight((rest, [values, name]) => `(${key} in ${strs(values)} ? '${name}' : ${rest})`, str(reading.otherwise));
}

/** The setting of KEY in the map MAP ('unset' when absent). */
const settingOf = (reading: Reading, map: string, key: string): string =>
  `(${str(key)} in ${map} ? ${setting(reading, `${map}[${str(key)}]`)} : 'unset')`;

/** A variable's name for a kind: istio, linkerd, cloudSqlProxy... */
const nameOf = (kind: SidecarKind): string => kind.name.replace(/-(.)/g, (_, letter: string) => letter.toUpperCase());

const WORDS = (c: string): string => `((has(${c}.command) ? ${c}.command : []) + (has(${c}.args) ? ${c}.args : []))`;
const basenameIn = (names: readonly string[]): string => `^(.*/)?${anyOf(names)}$`;

/** Whether container C is a declared sidecar of KIND (src/manifest/pod/sidecars.ts, declared()). */
function declares(kind: SidecarKind, c: string): string | undefined {
  const markers = kind.template.container;
  if (markers === undefined) return undefined;
  const image = `^(.*/)?[^/@:]*${anyOf(markers.images)}[^/@:]*([@:][^/]*)?$`;
  const program = basenameIn(markers.programs);
  const words = WORDS(c);
  const init = basenameIn([...SIDECAR_FRONTS]);
  return (
    `((has(${c}.image) && ${c}.image.matches(${str(image)})) || (size(${words}) > 0 && (${words}[0].matches(${str(program)}) || ` +
    `(${words}[0].matches(${str(init)}) && ${words}.exists(w, w.matches(${str(program)}))))))`
  );
}

/** The flag of a declared proxy that moves its quit port. */
const portFlag = (kind: SidecarKind): string | undefined => {
  const port = kind.template.quitPort;
  return port !== undefined && 'flag' in port ? port.flag : undefined;
};

const DECLARED = (SIDECAR_KINDS as readonly SidecarKind[]).filter((kind) => kind.template.container !== undefined);
const INJECTED = (SIDECAR_KINDS as readonly SidecarKind[]).filter((kind) => kind.template.container === undefined);

const LOOPBACK = '(localhost|127\\.0\\.0\\.1|\\[::1\\]|0\\.0\\.0\\.0)';

/**
 * A quit's URL, as --check and --inject read one (the kinds' quit paths, and a loopback path that says quit): in a
 * container's words or the value of a variable of its env. A call to a sidecar's own API (Dapr's
 * /v1.0/publish/...) or a wait for its readiness is no quit: the wrapper in front leaves those as they are.
 */
function quitUrlPattern(): string {
  const paths = [...new Set((SIDECAR_KINDS as readonly SidecarKind[]).map((kind) => kind.quit.path))];
  return [`${LOOPBACK}(:[0-9]+)?${anyOf(paths)}`, `${LOOPBACK}(:[0-9]+)?/[^ ]*${anyOf([...QUIT_WORDS])}`, 'quitquitquit'].join('|');
}

/**
 * What in a container's command shows it stops a sidecar itself: a quit's URL, a process signal, a wrapper, a
 * variable of quit URLs, a sidecar's own program with a subcommand that may quit it (within a script's word; a
 * command of separate words is sidecarCall's). The policy leaves such a pod to --inject and --check.
 */
function speaksPattern(): string {
  const kinds = SIDECAR_KINDS as readonly SidecarKind[];
  const processes = [...new Set(kinds.flatMap((kind) => kind.template.processes))];
  return [
    quitUrlPattern(),
    `\\b(pkill|killall)\\b`,
    `\\bkill\\b.*${anyOf(processes)}`,
    `\\b${anyOf([...WRAPPERS, ...QUIT_URLS_VARIABLES])}\\b`,
    ...[...SIDECAR_CALLS].map(([program, subcommands]) => `\\b${re(program)}\\b[^;&|]*\\b${anyOf(subcommands)}\\b`),
  ].join('|');
}

/** CEL: whether WORDS (a list) are a sidecar's own program with a subcommand that may quit it, as separate words. */
const sidecarCall = (words: string): string =>
  [...SIDECAR_CALLS]
    .map(
      ([program, subcommands]) =>
        `(${words}.exists(w, w.matches(${str(basenameIn([program]))})) && ${words}.exists(w, w in ${strs(subcommands)}))`,
    )
    .join(' || ');

interface Variable {
  readonly name: string;
  readonly expression: string;
}

/** The policy's variables: the pod template, its markers, each kind's sidecar, the job container. */
function variables(settings: PolicySettings): Variable[] {
  const v = (name: string, expression: string): Variable => ({ name, expression });
  const orEmpty = (path: string, field: string, empty = '{}'): string => `has(${path}.${field}) ? ${path}.${field} : ${empty}`;
  const template = (object: string): string =>
    `${object}.kind == 'CronJob' ? ${object}.spec.jobTemplate.spec.template : ${object}.kind == 'Job' ? ${object}.spec.template : ${object}`;
  const list: Variable[] = [
    v('tmpl', template('object')),
    v('at', `object.kind == 'CronJob' ? '/spec/jobTemplate/spec/template' : object.kind == 'Job' ? '/spec/template' : ''`),
    v('metadata', orEmpty('variables.tmpl', 'metadata')),
    v('labels', orEmpty('variables.metadata', 'labels')),
    v('annotations', orEmpty('variables.metadata', 'annotations')),
    // namespaceObject is typed (kubernetes.Namespace, pkg/admission/plugin/cel/compile.go), and null without a namespace.
    v('nsLabels', `namespaceObject != null && ${orEmpty('namespaceObject.metadata', 'labels')}`),
    v('nsAnnotations', `namespaceObject != null && ${orEmpty('namespaceObject.metadata', 'annotations')}`),
    v('nsName', `namespaceObject != null ? namespaceObject.metadata.name : request.namespace`),
    v('spec', 'variables.tmpl.spec'),
    v('restartPolicy', `has(variables.spec.restartPolicy) ? variables.spec.restartPolicy : ''`),
    v('containers', 'variables.spec.containers'),
    v('initContainers', orEmpty('variables.spec', 'initContainers', '[]')),
    v('volumes', orEmpty('variables.spec', 'volumes', '[]')),
  ];
  for (const kind of DECLARED) {
    const name = nameOf(kind);
    list.push(v(name, `variables.containers.filter(c, ${declares(kind, 'c')})`));
    const flag = portFlag(kind);
    if (flag !== undefined) {
      // The quit port's flag: the first word that is it or starts with it and =; its value there or in the next word.
      const words = WORDS(`variables.${name}[0]`);
      const at = `variables.${name}PortAt`;
      list.push(
        v(
          `${name}PortAt`,
          `size(variables.${name}) == 0 ? -1 : ${words}.map(w, w == ${str(flag)} || w.startsWith(${str(`${flag}=`)})).indexOf(true)`,
        ),
      );
      list.push(
        v(
          `${name}Port`,
          `${at} < 0 ? '' : ${words}[${at}].startsWith(${str(`${flag}=`)}) ? ${words}[${at}].split('=')[1] : ${at} + 1 < size(${words}) ? ${words}[${at} + 1] : ''`,
        ),
      );
    }
    list.push(
      v(
        `${name}Native`,
        `variables.initContainers.filter(c, has(c.restartPolicy) && c.restartPolicy == 'Always' && ${declares(kind, 'c')})`,
      ),
    );
  }
  const sidecarContainer = (c: string): string =>
    [`${c}.name == ${str(PROXY_CONTAINER)}`, ...DECLARED.map((kind) => declares(kind, c))].join(' || ');
  list.push(v('jobs', `variables.containers.filter(c, !(${sidecarContainer('c')}))`));
  list.push(v('job', `variables.jobs[0]`));
  list.push(v('jobIndex', `variables.containers.map(c, c.name).indexOf(variables.job.name)`));
  list.push(
    v(
      'speaks',
      `(variables.jobs + variables.initContainers.filter(c, !(${sidecarContainer('c')}))).exists(c, ${sidecarCall(WORDS('c'))} || ${WORDS('c')}.exists(w, w.matches(${str(speaksPattern())})) || ` +
        `(has(c.env) && c.env.exists(e, has(e.value) && e.value.matches(${str(quitUrlPattern())}))))`,
    ),
  );
  for (const kind of INJECTED) list.push(...injectedForm(kind, settings));
  return list;
}

/** The variables that say whether the pod has KIND, its injector's way: 'classic', 'native' or 'none' (sidecars.ts, injected()). */
function injectedForm(kind: SidecarKind, settings: PolicySettings): Variable[] {
  const name = nameOf(kind);
  const markers = kind.template;
  const labels = 'variables.labels';
  const annotations = 'variables.annotations';
  const inject = markers.inject;
  const found =
    inject === undefined
      ? "'unset'"
      : [
          ...inject.labels.map((key) => [labels, key] as const),
          ...inject.annotations.map((key) => [annotations, key] as const),
        ].reduceRight(
          (rest, [map, key]) => `(${str(key)} in ${map} ? ${setting(inject.reading, `${map}[${str(key)}]`)} : ${rest})`,
          "'unset'",
        );
  const marked = `variables.${name}Marked`;
  const revision = markers.revisionLabel === undefined ? 'false' : `${str(markers.revisionLabel)} in ${labels}`;
  const injected = markers.injectedAnnotation === undefined ? 'false' : `${str(markers.injectedAnnotation)} in ${annotations}`;
  const initOnly =
    markers.initOnly === undefined ? 'false' : `${settingOf(markers.initOnly.reading, annotations, markers.initOnly.annotation)} == 'on'`;
  const sidecarless =
    markers.sidecarless === undefined
      ? 'false'
      : `${str(markers.sidecarless.label)} in ${labels} && ${labels}[${str(markers.sidecarless.label)}] == ${str(markers.sidecarless.value)}`;
  const byNamespace = [
    ...(markers.namespace ?? []).map((rule) => {
      const [map, key] = rule.label !== undefined ? ['variables.nsLabels', rule.label] : ['variables.nsAnnotations', rule.annotation ?? ''];
      return (
        `(${str(key)} in ${map}` +
        (rule.values === undefined ? '' : ` && ${map}[${str(key)}] in ${strs(rule.values)}`) +
        (rule.unless === undefined ? '' : ` && !(${str(rule.unless)} in variables.nsLabels)`) +
        ')'
      );
    }),
    ...[...(settings.namespaces.get(kind.name as never) ?? [])].map((namespace) =>
      namespace === '*' ? 'true' : `variables.nsName == ${str(namespace)}`,
    ),
  ];
  const domains = markers.settings ?? [];
  const ownSetting =
    domains.length === 0
      ? 'false'
      : `${annotations}.exists(k, !(k in ${strs(inject?.annotations ?? [])}) && k.matches(${str(`^([^/]*\\.)?${anyOf(domains)}/`)}))`;
  const native = markers.native;
  // Under a profile, a pod that does not say takes its install's form (sidecars.ts, formOf), a key it ignores too.
  // (Classic by its install, the expression is the one without a profile: an unset key reads as classic either way.)
  const byInstall = settings.profile !== undefined && installForm(kind, settings.profile)?.form === 'native' ? 'true' : undefined;
  const read = (key: string): string => setting(native?.reading as Reading, `${annotations}[${str(key)}]`);
  const nativeOn =
    native === undefined
      ? (byInstall ?? 'false')
      : native.keys.reduceRight(
          (rest, key) =>
            byInstall === undefined
              ? `(${str(key)} in ${annotations} ? ${read(key)} == 'on' : ${rest})`
              : `(${str(key)} in ${annotations} ? (${read(key)} == 'on' ? true : ${read(key)} == 'off' ? false : ${byInstall}) : ${rest})`,
          byInstall ?? 'false',
        );
  const asked = `(${marked} == 'on' || ${revision} || ${injected})`;
  const status =
    kind === ISTIO
      ? `${injected} ? (${annotations}[${str(STATUS_ANNOTATION)}].trim() == '' ? 'none' : ` +
        `${annotations}[${str(STATUS_ANNOTATION)}].matches(${str(`"initContainers"\\s*:\\s*\\[[^\\]]*"${PROXY_CONTAINER}"`)}) ? 'native' : 'classic') : `
      : '';
  const form =
    `${marked} in ['off', 'refused'] ? 'none' : ${status}` +
    `!${asked} && (${initOnly} || ${sidecarless}) ? 'none' : ` +
    `!(${[asked, ...byNamespace, ownSetting].join(' || ')}) ? 'none' : ` +
    `${initOnly} ? 'none' : ${nativeOn} ? 'native' : 'classic'`;
  return [
    { name: `${name}Marked`, expression: found },
    { name, expression: form },
  ];
}

/** Where the pod template is in the object, as CEL: '' for a Pod, Job's and CronJob's paths to their template. */
const AT = 'variables.at';
/** The stored object's pod template, on UPDATE. */
const OLD_TEMPLATE = `(oldObject.kind == 'Job' ? oldObject.spec.template : oldObject)`;

/** JSON Patch operations that add the pod template's annotations of LIST (CEL: a list of [key, value]), its maps first. */
function annotationsPatch(list: string): string {
  const pairs = `(${list})`;
  return (
    `(size(${pairs}) == 0 ? [] : ` +
    `(has(variables.tmpl.metadata) ? [] : [JSONPatch{op: 'add', path: ${AT} + '/metadata', value: {}}]) + ` +
    `(has(variables.tmpl.metadata) && has(variables.tmpl.metadata.annotations) ? [] : [JSONPatch{op: 'add', path: ${AT} + '/metadata/annotations', value: {}}]) + ` +
    `${pairs}.map(p, JSONPatch{op: 'add', path: ${AT} + '/metadata/annotations/' + jsonpatch.escapeKey(p[0]), value: p[1]}))`
  );
}

/** Whether the pod has a classic sidecar of KIND: injected so, or a declared container. */
const classic = (kind: SidecarKind): string =>
  kind.template.container === undefined ? `variables.${nameOf(kind)} == 'classic'` : `size(variables.${nameOf(kind)}) > 0`;

/** The match condition of an UPDATE: the stored object passes TEST (a CREATE, and a CronJob's, always match). */
const oldWrapped = (test: string): Variable => ({
  name: 'stored-object-was-admitted-so',
  expression: `request.operation != 'UPDATE' || object.kind == 'CronJob' || (oldObject != null && (${test}))`,
});

// Match conditions read no variables (the API server's validation of a policy refuses one that does).
const BARE: Variable = {
  name: 'bare-pod',
  expression:
    `object.kind != 'Pod' || (!has(object.metadata.ownerReferences) && has(object.spec.restartPolicy) && ` +
    `object.spec.restartPolicy in ['Never', 'OnFailure'])`,
};
const SPEAKS: Variable = { name: 'no-container-speaks-to-a-sidecar', expression: '!variables.speaks' };

interface Rewrite {
  readonly conditions: Variable[];
  readonly checks: Variable[];
  readonly patch: string;
}

/** --inject --native as a policy: Istio's native annotation on a pod with a classic Istio sidecar. */
function nativeRewrite(): Rewrite {
  const present = `has(${OLD_TEMPLATE}.metadata) && has(${OLD_TEMPLATE}.metadata.annotations) && ${str(NATIVE_ANNOTATION)} in ${OLD_TEMPLATE}.metadata.annotations`;
  return {
    conditions: [BARE, oldWrapped(present)],
    checks: [
      SPEAKS,
      { name: 'classic-istio-sidecar', expression: classic(ISTIO) },
      { name: 'no-native-annotation', expression: `!(${str(NATIVE_ANNOTATION)} in variables.annotations)` },
    ],
    patch: annotationsPatch(`[${strs([NATIVE_ANNOTATION, 'true'])}]`),
  };
}

/** An edit --inject makes where a pod allows it (ADD, CEL: a list), and the pod it refuses for it (REFUSE, CEL: a bool). */
interface Edit {
  readonly add: string;
  readonly refuse: string;
}

/** The kinds --inject finds through the annotations file, whose quit it switches on where the pod leaves it unset. */
const VIA_ANNOTATIONS = INJECTED.filter((kind) => kind !== ISTIO && kind.fromAnnotations !== undefined);

/** The quit switches --inject sets: each kind's annotation where the pod leaves it unset; a pod that sets it off is refused. */
function quitSwitches(): Edit[] {
  return VIA_ANNOTATIONS.flatMap((kind) => {
    const quitSwitch = kind.template.quitSwitch;
    if (typeof quitSwitch !== 'object' || !('annotation' in quitSwitch)) return [];
    const { annotation, reading, byDefault } = quitSwitch;
    const value = settingOf(reading, 'variables.annotations', annotation);
    const on = `(${value} == 'on'${byDefault ? ` || ${value} == 'unset'` : ''})`;
    return [
      {
        add: `(${classic(kind)} && !(${str(annotation)} in variables.annotations) && !${on} ? [${strs([annotation, reading.on[0] ?? 'true'])}] : [])`,
        refuse: `(${classic(kind)} && ${str(annotation)} in variables.annotations && !${on})`,
      },
    ];
  });
}

/**
 * The flags --inject switches on in a declared proxy where it leaves them unset (its quit's, --health-check); a
 * proxy whose last word of such a flag leaves it off is refused (kinds.ts, readBoolFlag).
 */
function proxyFlags(): Edit[] {
  return DECLARED.flatMap((kind) => {
    const list = `variables.${nameOf(kind)}`;
    const proxy = `${list}[0]`;
    const one = `size(${list}) == 1 && has(${proxy}.args)`;
    return switchFlags(kind).map((flag) => {
      const words = `${proxy}.args.filter(w, w == ${str(flag)} || w.startsWith(${str(`${flag}=`)}))`;
      return {
        add:
          `(${one} && size(${words}) == 0 ? ` +
          `[JSONPatch{op: 'add', path: ${AT} + '/spec/containers/' + string(variables.containers.map(c, c.name).indexOf(${proxy}.name)) + '/args/-', value: ${str(flag)}}] : [])`,
        refuse: `(${one} && size(${words}) > 0 && !(${words}[size(${words}) - 1] in ${strs(flagOnWords(flag))}))`,
      };
    });
  });
}

/** The declared proxies --inject refuses: two of one kind, a release without a quit, one under a tombstone wrapper. */
const declaredProblems = (): string[] =>
  DECLARED.map((kind) => {
    const list = `variables.${nameOf(kind)}`;
    const noQuit = kind.template.noQuitPrograms ?? [];
    const programs = [
      ...(noQuit.length === 0 ? [] : [`w.matches(${str(basenameIn(noQuit))})`]),
      `w.matches(${str(basenameIn(TOMBSTONE_WRAPPERS))})`,
    ];
    return `(size(${list}) > 1 || ${list}.exists(c, ${WORDS('c')}.exists(w, ${programs.join(' || ')})))`;
  });

/** Whether the job container gets the downward API's annotations file: a kind read through it, or no Istio status. */
const PODINFO = `(${[...VIA_ANNOTATIONS.map(classic), `variables.istio == 'none'`].join(' || ')})`;
const MOUNTS_PODINFO = `(has(variables.job.volumeMounts) && variables.job.volumeMounts.exists(m, m.mountPath == ${str(PODINFO_DIR)}))`;
const ADD_PODINFO = `(${PODINFO} && !${MOUNTS_PODINFO})`;

/** Whether an item of the list LIST has KEY equal to VALUE. */
const named = (list: string, key: string, value: string): string => `${list}.exists(x, has(x.${key}) && x.${key} == ${str(value)})`;

/** What --inject refuses: no command, names and paths of its own already taken, a switch or flag set off, a proxy it cannot stop. */
const refusals = (settings: PolicySettings, edits: readonly Edit[]): string[] => [
  `!has(variables.job.command)`,
  named('variables.volumes', 'name', VOLUME),
  ...(settings.imageVolume ? [] : [named('variables.initContainers', 'name', INSTALLER)]),
  `(has(variables.job.volumeMounts) && ${named('variables.job.volumeMounts', 'mountPath', MOUNT_PATH)})`,
  `(${ADD_PODINFO} && ${named('variables.volumes', 'name', PODINFO_VOLUME)})`,
  ...edits.map((entry) => entry.refuse),
  ...declaredProblems(),
];

/** The wrapper's --also for each declared proxy, with its ports where the pod moves its quit port (sidecars.ts, declared()). */
function alsoFlags(): string {
  return DECLARED.map((kind) => {
    const name = nameOf(kind);
    const entry = `[${str(`--${OPTIONS.also.flag}`)}, ${str(kind.name)}]`;
    if (portFlag(kind) === undefined) return `(size(variables.${name}) > 0 ? ${entry} : [])`;
    const port = `variables.${name}Port`;
    const fallback = String(kind.listeners[kind.quit.listener]?.port ?? 0);
    const ports = kind.listeners.map((listener, index) =>
      index === kind.quit.listener ? `' + string(int(${port})) + '` : String(listener.port),
    );
    const moved = `${port}.matches('^[0-9]+$') && int(${port}) > 0 && int(${port}) != ${fallback}`;
    // A list of a literal and a computed string: both in dyn(), so that its items have one type.
    const computed = `[dyn(${str(`--${OPTIONS.also.flag}`)}), dyn('${[kind.name, ...ports].join(':')}')]`;
    return `(size(variables.${name}) > 0 ? (${moved} ? ${computed} : ${entry}) : [])`;
  }).join(' + ');
}

/** Operations that add ITEMS (CEL: a list) to the list at PATH, the list first where PRESENT is false. */
const addItems = (path: string, present: string, items: string): string =>
  `(size(${items}) == 0 ? [] : (${present} ? [] : [JSONPatch{op: 'add', path: ${path}, value: []}]) + ` +
  `(${items}).map(x, JSONPatch{op: 'add', path: ${path} + '/-', value: x}))`;

/** The JSON Patch of --inject's wrapper: the command, mounts, env, volumes, the installer, the proxies' flags, the switches. */
function wrapperPatch(settings: PolicySettings, wrapper: string, switches: readonly Edit[], flags: readonly Edit[]): string {
  const prefix =
    `[${str(wrapper)}] + (variables.restartPolicy == 'OnFailure' ? ${strs([`--${OPTIONS.quit.flag}`, 'on-success'])} : []) + ` +
    `${alsoFlags()} + ['--']`;
  const container = `${AT} + '/spec/containers/' + string(variables.jobIndex)`;
  const volume = settings.imageVolume ? imageVolume(VOLUME, settings.image) : { name: VOLUME, emptyDir: {} };
  return [
    `[JSONPatch{op: 'replace', path: ${container} + '/command', value: ${prefix} + variables.job.command}]`,
    addItems(
      `${container} + '/volumeMounts'`,
      'has(variables.job.volumeMounts)',
      `[${literal(WRAPPER_MOUNT)}] + (${ADD_PODINFO} ? [${literal(PODINFO_MOUNT)}] : [])`,
    ),
    addItems(`${container} + '/env'`, 'has(variables.job.env)', `variables.istio != 'none' ? [${literal(STATUS_ENV)}] : []`),
    addItems(
      `${AT} + '/spec/volumes'`,
      'has(variables.spec.volumes)',
      `[${literal(volume)}] + (${ADD_PODINFO} ? [${literal(PODINFO_VOLUME_ITEM)}] : [])`,
    ),
    ...(settings.imageVolume
      ? []
      : [addItems(`${AT} + '/spec/initContainers'`, 'has(variables.spec.initContainers)', `[${literal(installer(settings.image))}]`)]),
    ...flags.map((entry) => entry.add),
    annotationsPatch(switches.length === 0 ? '[]' : switches.map((entry) => entry.add).join(' + ')),
  ].join(' +\n');
}

/**
 * The policy's match conditions, the checks on what its variables read (each a condition --inject's rewrite needs,
 * named), and its JSON Patch, for --inject's wrapper or for --inject --native.
 */
function rewrite(settings: PolicySettings): Rewrite {
  if (settings.native) return nativeRewrite();
  const wrapper = settings.imageVolume ? imageVolumeWrapper(MOUNT_PATH) : WRAPPER_PATH;
  const switches = quitSwitches();
  const flags = proxyFlags();
  const wrappedBefore = `${OLD_TEMPLATE}.spec.containers.exists(c, has(c.command) && size(c.command) > 0 && c.command[0] == ${str(wrapper)})`;
  return {
    conditions: [BARE, oldWrapped(wrappedBefore)],
    checks: [
      SPEAKS,
      { name: 'one-job-container', expression: 'size(variables.jobs) == 1' },
      { name: 'a-classic-sidecar-nothing-stops', expression: (SIDECAR_KINDS as readonly SidecarKind[]).map(classic).join(' || ') },
      { name: 'nothing-inject-refuses', expression: `!(${refusals(settings, [...switches, ...flags]).join(' ||\n  ')})` },
    ],
    patch: wrapperPatch(settings, wrapper, switches, flags),
  };
}

/** The policy and its binding, as two YAML documents. */
export function admissionPolicy(settings: PolicySettings): string {
  const apiVersion = `admissionregistration.k8s.io/${settings.version}`;
  const { conditions, checks, patch } = rewrite(settings);
  // The first check that fails, by name, or '': the patch is empty unless every check holds.
  const skipped = checks.reduceRight((rest, check) => `!(${check.expression}) ? ${str(check.name)} : ${rest}`, "''");
  const rules = [
    { apiGroups: ['batch'], apiVersions: ['v1'], resources: ['jobs', 'cronjobs'], operations: ['CREATE', 'UPDATE'] },
    { apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE', 'UPDATE'] },
  ];
  const policy = {
    apiVersion,
    kind: 'MutatingAdmissionPolicy',
    metadata: { name: POLICY_NAME },
    spec: {
      matchConstraints: {
        resourceRules: rules,
        ...(settings.namespaceSelector === undefined ? {} : { namespaceSelector: settings.namespaceSelector }),
      },
      failurePolicy: 'Ignore',
      reinvocationPolicy: 'IfNeeded',
      variables: [...variables(settings), { name: SKIPPED, expression: skipped }],
      matchConditions: conditions,
      mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: `variables.${SKIPPED} != '' ? [] :\n${patch}` } }],
    },
  };
  const binding = {
    apiVersion,
    kind: 'MutatingAdmissionPolicyBinding',
    metadata: { name: POLICY_NAME },
    spec: { policyName: POLICY_NAME },
  };
  const options = { lineWidth: 0, blockQuote: 'literal' } as const;
  return `${stringify(policy, options)}---\n${stringify(binding, options)}`;
}
