// The cases of the profile theme for test/unit/manifest/check/profile.test.ts: manifests that trip each rule and manifests
// that must not. A rule's cases live in one theme's file.

import { parseKubernetes, parseMesh, type Profile } from '../../../../src/config/profile.ts';
import type { CheckSettings } from '../../../../src/manifest/check/rules.ts';
import { type Case, job, pod, TRAP } from './cases.ts';

/** The settings of a profile stated as the flags state it. */
export function stated(kubernetes: string | undefined, ...meshes: string[]): CheckSettings {
  const version = kubernetes === undefined ? undefined : parseKubernetes(kubernetes);
  const profile: Profile = {
    ...(typeof version === 'object' ? { kubernetes: version } : {}),
    meshes: meshes.map((text) => parseMesh(text)).filter((mesh) => typeof mesh !== 'string'),
  };
  return { namespaces: new Map(), profile };
}

export const LINKERD = 'annotations:\n  linkerd.io/inject: enabled';
export const ISTIO = 'annotations:\n  sidecar.istio.io/inject: "true"';
const HOLD = `annotations:\n  sidecar.istio.io/inject: "true"\n  proxy.istio.io/config: '{ "holdApplicationUntilProxyStarts": true }'`;
export const QUIT = `command: ["sh", "-c", "${TRAP('http://127.0.0.1:4191/shutdown')} ./task.sh"]`;

export const CASES: readonly Case[] = [
  {
    name: "Linkerd's beta key under a profile",
    rule: 'deprecated-native-key',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: `${LINKERD}\n  config.beta.linkerd.io/proxy-enable-native-sidecar: "true"` }),
    settings: stated('1.31', 'linkerd=2.20'),
    expect: { at: 'config.beta.linkerd.io', level: 'info' },
  },
  {
    name: "Linkerd's alpha key with no profile: today's findings",
    rule: 'deprecated-native-key',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: `${LINKERD}\n  config.alpha.linkerd.io/proxy-enable-native-sidecar: "true"` }),
  },
  {
    name: "Linkerd's GA key",
    rule: 'deprecated-native-key',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: `${LINKERD}\n  config.linkerd.io/proxy-enable-native-sidecar: "true"` }),
    settings: stated('1.31', 'linkerd=2.20'),
  },
  {
    name: 'holdApplicationUntilProxyStarts where Istio runs native by the profile',
    rule: 'hold-native',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: HOLD }),
    settings: stated('1.33', 'istio=1.28'),
    expect: { at: 'proxy.istio.io/config', level: 'info' },
  },
  {
    name: 'holdApplicationUntilProxyStarts where Istio stays classic (a 1.32 node)',
    rule: 'hold-native',
    yaml: job(pod('command: ["./task.sh"]'), { podMeta: HOLD }),
    settings: stated('1.32', 'istio=1.28'),
  },
];
