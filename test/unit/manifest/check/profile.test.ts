// --check under a cluster profile: each injected sidecar's form from the profile's install where the pod does not
// say (no unwrapped for a native one, native-quit for a quit sent to it, the node that keeps Istio classic named),
// and the rules that speak only under a profile (Linkerd's deprecated keys, holdApplicationUntilProxyStarts).

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { check, type CheckSettings } from '../../../../src/manifest/check/rules.ts';
import { messageOf } from '../../../../src/manifest/check/finding.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { source } from '../../../support/manifest.ts';
import { job, pod } from './cases.ts';
import { CASES, stated, LINKERD, ISTIO, QUIT } from './profile.cases.ts';
import { checkCases } from './cases.ts';

checkCases('profile', CASES);

describe('the form of each injected sidecar under the profile', () => {
  before(loadShellParser);
  const rules = (yaml: string, settings?: CheckSettings): string[] =>
    check(source(yaml), settings).map((finding) => `${finding.rule}: ${messageOf(finding)}`);
  test('Linkerd 2.20 injects native by default: no unwrapped, unless the pod opts out', () => {
    const yaml = job(pod('command: ["./task.sh"]'), { podMeta: LINKERD });
    assert.match(rules(yaml).join('\n'), /^unwrapped: Job task gets a classic linkerd-proxy/);
    assert.deepEqual(rules(yaml, stated('1.31', 'linkerd=2.20')), []);
    assert.deepEqual(rules(yaml, stated(undefined, 'linkerd=2.20')), []);
    assert.match(
      rules(yaml, stated('1.31', 'linkerd=2.19')).join('\n'),
      /^unwrapped: .*classic: linkerd 2\.19 injects it classic by default/,
    );
    assert.match(rules(yaml, stated('1.31', 'linkerd=2.20:classic')).join('\n'), /^unwrapped: /);
    for (const key of ['config.linkerd.io', 'config.beta.linkerd.io'])
      assert.match(
        rules(
          job(pod('command: ["./task.sh"]'), { podMeta: `${LINKERD}\n  ${key}/proxy-enable-native-sidecar: "false"` }),
          stated('1.31', 'linkerd=2.20'),
        ).join('\n'),
        /^unwrapped: /m,
        key,
      );
    // The GA key beats the deprecated one: false there, true here, classic.
    const both = `${LINKERD}\n  config.linkerd.io/proxy-enable-native-sidecar: "false"\n  config.alpha.linkerd.io/proxy-enable-native-sidecar: "true"`;
    assert.match(rules(job(pod('command: ["./task.sh"]'), { podMeta: both }), stated('1.31', 'linkerd=2.20')).join('\n'), /unwrapped: /);
  });
  test('a quit the script sends a native Linkerd proxy: native-quit, not quit-not-enabled', () => {
    const yaml = job(pod(QUIT), { podMeta: LINKERD });
    assert.match(rules(yaml).join('\n'), /^quit-not-enabled: /m);
    const found = rules(yaml, stated('1.31', 'linkerd=2.20'));
    assert.equal(found.length, 1, found.join('\n'));
    assert.match(
      found[0] ?? '',
      /^native-quit: container job: the linkerd-proxy runs as a native sidecar \(linkerd 2\.20 injects it native by default\)/,
    );
  });
  test("Istio's auto: native where every node is 1.33+; where a node is older, the message names it", () => {
    const yaml = job(pod('command: ["./task.sh"]'), { podMeta: ISTIO });
    assert.deepEqual(rules(yaml, stated('1.33', 'istio=1.28')), []);
    const floor = rules(yaml, stated('1.32', 'istio=1.30')).join('\n');
    assert.match(
      floor,
      /^unwrapped: Job task gets a classic istio-proxy \(annotation sidecar\.istio\.io\/inject: "true"; classic: istio 1\.30 injects it native only where every node is 1\.33\+, and the oldest is 1\.32 \(--kubernetes\)\)/,
    );
    // The pod's annotation beats the install's auto, either way.
    const optOut = job(pod('command: ["./task.sh"]'), { podMeta: `${ISTIO}\n  sidecar.istio.io/nativeSidecar: "false"` });
    assert.match(rules(optOut, stated('1.33', 'istio=1.28')).join('\n'), /^unwrapped: /);
    const optIn = job(pod('command: ["./task.sh"]'), { podMeta: `${ISTIO}\n  sidecar.istio.io/nativeSidecar: "true"` });
    assert.deepEqual(rules(optIn, stated('1.30', 'istio=1.28')), []);
  });
  test("the Cloud SQL proxy operator's sidecar, shown by a loop over its quit URLs: native from 1.6 on 1.29+", () => {
    const loop = 'command: ["sh", "-c", "./task.sh; for url in $CSQL_PROXY_QUIT_URLS; do curl -X POST $url; done"]';
    const yaml = job(pod(loop));
    assert.ok(!rules(yaml).some((line) => line.startsWith('native-quit')));
    assert.match(rules(yaml, stated('1.29', 'cloud-sql-proxy-operator=1.6')).join('\n'), /^native-quit: /m);
    assert.ok(!rules(yaml, stated('1.28', 'cloud-sql-proxy-operator=1.6')).some((line) => line.startsWith('native-quit')));
  });
  test('Vault Agent stays classic on every version', () => {
    const yaml = job(pod('command: ["./task.sh"]'), { podMeta: 'annotations:\n  vault.hashicorp.com/agent-inject: "true"' });
    assert.match(rules(yaml, stated('1.36', 'vault-agent=1.7')).join('\n'), /^unwrapped: .*classic: vault-agent has no native mode/);
  });
});
