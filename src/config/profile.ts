// The cluster profile: what the manifest tools know of the cluster beyond the manifest: the oldest kubelet's minor
// version, and each install that injects a sidecar (a mesh, an operator) with its release and install-wide setting.
// From it, the form (native or classic) each kind's sidecar takes in a pod that does not say, by the rule of the
// kind's install (src/config/kinds.ts, `install`, which names the source each rule follows). --check, --inject and
// --admission-policy read one Profile; `--kubernetes`, `--mesh` and the config file state it (src/manifest/cli/).

import { NATIVE_SIDECARS_FROM, SIDECAR_KINDS, type SidecarKind } from './kinds.ts';

/** A release as MAJOR.MINOR (a patch level is read and dropped: the rules go by minor releases). */
export type Version = readonly [major: number, minor: number];

/** An install-wide setting that beats the release's default: Istio's ENABLE_NATIVE_SIDECARS, Linkerd's proxy.nativeSidecar. */
export type MeshSetting = 'native' | 'classic';

/** One install of the profile: `--mesh NAME=VERSION[:native|classic]`. */
export interface Mesh {
  /** One of MESH_NAMES. */
  readonly name: string;
  readonly version: Version;
  readonly setting?: MeshSetting;
}

/** What is stated of the cluster; a Profile with nothing in it is never made (undefined stands for none stated). */
export interface Profile {
  /** The oldest kubelet's minor version (`--kubernetes X.Y`); undefined: not stated. */
  readonly kubernetes?: Version;
  /** The installs that inject sidecars, one per name. */
  readonly meshes: readonly Mesh[];
}

/** The kinds with an install, in the order of the kinds table. */
const INSTALLED = (SIDECAR_KINDS as readonly SidecarKind[]).filter((kind) => kind.install !== undefined);

/** The NAMEs `--mesh` takes: each kind's install, from the kinds table. */
export const MESH_NAMES: readonly string[] = INSTALLED.map((kind) => kind.install?.name ?? '');

/** The settings a `--mesh` suffix takes. */
const MESH_SETTINGS: readonly MeshSetting[] = ['native', 'classic'];

/** `--mesh`'s argument as usage lines and errors write it. */
export const MESH_ARGUMENT = 'NAME=VERSION[:native|classic]';

/** MAJOR.MINOR, MAJOR.MINOR.PATCH, with or without a leading v; undefined for anything else. */
export function parseVersion(text: string): Version | undefined {
  const match = /^v?(\d{1,4})\.(\d{1,4})(?:\.\d{1,6})?$/.exec(text.trim());
  return match === null ? undefined : [Number(match[1]), Number(match[2])];
}

export const versionText = (version: Version): string => `${version[0]}.${version[1]}`;

/** Whether VERSION is FLOOR (X.Y) or newer. */
function atLeast(version: Version, floor: string): boolean {
  const [major, minor] = parseVersion(floor) ?? [0, 0];
  return version[0] > major || (version[0] === major && version[1] >= minor);
}

/** `--kubernetes X.Y`: the version, or one line saying what is allowed. */
export function parseKubernetes(text: string): Version | string {
  const version = parseVersion(text);
  if (version === undefined || version[0] !== 1)
    return `${JSON.stringify(text)} is not a Kubernetes minor version (X.Y, the oldest kubelet's: 1.31)`;
  return version;
}

/** `--mesh NAME=VERSION[:native|classic]`: the install, or one line saying what is allowed. */
export function parseMesh(text: string): Mesh | string {
  const match = /^([^=]*)=([^:]*)(?::(.*))?$/.exec(text.trim());
  if (match === null) return `${JSON.stringify(text)} is not ${MESH_ARGUMENT} (linkerd=2.20, istio=1.28:native)`;
  const [, name = '', versionPart = '', setting] = match;
  const kind = INSTALLED.find((candidate) => candidate.install?.name === name);
  if (kind?.install === undefined) return `${JSON.stringify(name)} is not a NAME of ${MESH_ARGUMENT} (${MESH_NAMES.join(', ')})`;
  const version = parseVersion(versionPart);
  if (version === undefined) return `${JSON.stringify(versionPart)} is not a release of ${name} (X.Y or X.Y.Z)`;
  if (setting === undefined) return { name, version };
  if (!(MESH_SETTINGS as readonly string[]).includes(setting))
    return `${JSON.stringify(setting)} is not a setting of ${name} (${MESH_SETTINGS.join(' or ')})`;
  if (setting === 'native' && kind.install.from === undefined) return `${name} has no native mode (${kind.install.source})`;
  return { name, version, setting: setting as MeshSetting };
}

/** The profile's mesh of KIND's install, where stated. */
const meshOf = (kind: SidecarKind, profile: Profile): Mesh | undefined => profile.meshes.find((mesh) => mesh.name === kind.install?.name);

/** The form a sidecar takes and why (said in messages); FLOOR: an old node alone keeps it classic. */
export interface Form {
  readonly form: 'native' | 'classic';
  readonly why: string;
  readonly floor?: boolean;
}

/**
 * The form KIND's install gives a pod that says nothing of it, under PROFILE (the pod's own annotation beats it:
 * src/manifest/pod/sidecars.ts reads that first); undefined when the profile does not name the install.
 */
export function installForm(kind: SidecarKind, profile: Profile): Form | undefined {
  const install = kind.install;
  const mesh = meshOf(kind, profile);
  if (install === undefined || mesh === undefined) return undefined;
  const release = `${mesh.name} ${versionText(mesh.version)}`;
  if (mesh.setting !== undefined)
    return { form: mesh.setting, why: `${release} is set to inject it ${mesh.setting} (--mesh ${meshText(mesh)})` };
  if (install.from === undefined) return { form: 'classic', why: `${mesh.name} has no native mode` };
  if (!atLeast(mesh.version, install.from))
    return { form: 'classic', why: `${release} injects it classic by default (native by default from ${install.from})` };
  if (install.nodes === undefined) return { form: 'native', why: `${release} injects it native by default` };
  if (profile.kubernetes === undefined)
    return {
      form: 'classic',
      why: `${release} injects it native only where every node is ${install.nodes}+, and --kubernetes does not say the oldest: taken as classic`,
    };
  if (!atLeast(profile.kubernetes, install.nodes))
    return {
      form: 'classic',
      floor: true,
      why: `${release} injects it native only where every node is ${install.nodes}+, and the oldest is ${versionText(profile.kubernetes)} (--kubernetes)`,
    };
  return { form: 'native', why: `${release} injects it native: every node is ${install.nodes}+` };
}

/**
 * Whether a classic sidecar of KIND can be made native in this cluster: every node runs native sidecars (1.29+),
 * and the kind has a native switch its stated release reads (unstated: the newest), or is a container the user
 * declares (moved to initContainers). Undefined when it can; else why not.
 */
export function whyNotNative(kind: SidecarKind, profile: Profile | undefined): string | undefined {
  if (profile?.kubernetes === undefined) return `--kubernetes does not say that every node is ${NATIVE_SIDECARS_FROM}+`;
  if (!atLeast(profile.kubernetes, NATIVE_SIDECARS_FROM))
    return `the oldest node is ${versionText(profile.kubernetes)}, and native sidecars need ${NATIVE_SIDECARS_FROM}+`;
  if (kind.template.container !== undefined) return undefined;
  const native = kind.template.native;
  if (native === undefined) return `the ${kind.label} has no native mode (${kind.install?.source ?? 'no native switch'})`;
  const mesh = meshOf(kind, profile);
  if (mesh !== undefined && !atLeast(mesh.version, native.since))
    return `${mesh.name} ${versionText(mesh.version)} does not read ${native.keys[0]} (${native.since}+)`;
  return undefined;
}

/** A mesh as `--mesh` writes it. */
const meshText = (mesh: Mesh): string => `${mesh.name}=${versionText(mesh.version)}${mesh.setting === undefined ? '' : `:${mesh.setting}`}`;

/**
 * The profile as the config file writes it (kubernetes, then mesh as a list), each value quoted as YAML needs a
 * release written: "1.30" is not the number 1.3.
 */
export function configText(profile: Profile): string {
  const lines = profile.kubernetes === undefined ? [] : [`kubernetes: "${versionText(profile.kubernetes)}"`];
  if (profile.meshes.length > 0) lines.push('mesh:', ...profile.meshes.map((mesh) => `  - "${meshText(mesh)}"`));
  return lines.map((line) => `${line}\n`).join('');
}

/** The line said once per run when no profile is stated: what is assumed, and how to state the cluster. */
export const NO_PROFILE =
  'info: no cluster profile: a sidecar is taken as classic unless the manifest makes it native, and --inject adds the ' +
  'wrapper; state the cluster with --kubernetes X.Y (the oldest kubelet) and --mesh NAME=VERSION, or in .istio-job-run.yaml';
