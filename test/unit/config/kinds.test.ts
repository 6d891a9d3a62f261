// Each kind's settings read as its own injector reads them: every value the injector takes as on and as off,
// and what it makes of the rest (its default, or a pod it refuses), through the one function of the table.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  flagOnWords,
  type KindName,
  kindNamed,
  type Reading,
  readBoolFlag,
  readSetting,
  SIDECAR_KINDS,
  type Setting,
  type SidecarKind,
  switchFlags,
} from '../../../src/config/kinds.ts';

/** A kind's setting by what it does: asks for injection, makes it native, switches its quit on, leaves only an init container. */
function reading(kind: KindName, setting: 'inject' | 'native' | 'quit' | 'initOnly'): Reading {
  const markers = kindNamed(kind).template;
  const quitSwitch = markers.quitSwitch;
  const found =
    setting === 'inject'
      ? markers.inject?.reading
      : setting === 'native'
        ? markers.native?.reading
        : setting === 'initOnly'
          ? markers.initOnly?.reading
          : typeof quitSwitch === 'object' && 'reading' in quitSwitch
            ? quitSwitch.reading
            : undefined;
  if (found === undefined) assert.fail(`${kind} has no ${setting} setting`);
  return found;
}

const PARSE_BOOL_ON = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const PARSE_BOOL_OFF = ['0', 'f', 'F', 'FALSE', 'false', 'False'];

type Row = readonly [
  kind: KindName,
  setting: 'inject' | 'native' | 'quit' | 'initOnly',
  values: readonly (string | undefined)[],
  read: Setting,
];

const ROWS: readonly Row[] = [
  // Istio's injectRequired: lower-cased, not trimmed; "y", "yes", "true", "on" inject, "" is the namespace's policy,
  // any other value means no injection. The template makes every nativeSidecar value but "false" native.
  ['istio', 'inject', ['true', 'y', 'yes', 'on', 'True', 'TRUE', 'Y', 'Yes', 'ON'], 'on'],
  ['istio', 'inject', ['false', 'no', 'n', 'off', '1', 'enabled', ' true', 'true '], 'off'],
  ['istio', 'inject', [undefined, ''], 'unset'],
  ['istio', 'native', ['true', 'yes', 'False', '1'], 'on'],
  ['istio', 'native', ['false'], 'off'],
  ['istio', 'native', [undefined, ''], 'unset'],
  // Linkerd: "enabled"/"ingress" inject, an invalid value skips; proxy-admin-shutdown "enabled"/"disabled", else
  // ignored; the native keys by strconv.ParseBool, an invalid value ignored.
  ['linkerd', 'inject', ['enabled', 'ingress'], 'on'],
  ['linkerd', 'inject', ['disabled', 'Enabled', 'true', ' enabled'], 'off'],
  ['linkerd', 'inject', [undefined, ''], 'unset'],
  ['linkerd', 'quit', ['enabled'], 'on'],
  ['linkerd', 'quit', ['disabled'], 'off'],
  ['linkerd', 'quit', [undefined, 'Enabled', 'true'], 'unset'],
  ['linkerd', 'native', PARSE_BOOL_ON, 'on'],
  ['linkerd', 'native', PARSE_BOOL_OFF, 'off'],
  ['linkerd', 'native', ['yes', 'tRUE', ''], 'unset'],
  // vault-k8s: parseutil.ParseBool (strconv.ParseBool, "" false); another value fails the admission.
  ...(['inject', 'quit', 'initOnly'] as const).flatMap((setting): Row[] => [
    ['vault-agent', setting, PARSE_BOOL_ON, 'on'],
    ['vault-agent', setting, [...PARSE_BOOL_OFF, ''], 'off'],
    ['vault-agent', setting, ['yes', 'on', 'tRUE', ' true'], 'refused'],
  ]),
  // Dapr: IsTruthy, trimmed (strings.TrimSpace: Unicode's white space, U+0085 too, U+FEFF not) and any case;
  // everything else is false.
  ['dapr', 'inject', ['y', 'yes', 'true', 't', 'on', '1', 'YES', ' On ', 'T', '\u0085true', '\u00a0on\u3000'], 'on'],
  ['dapr', 'inject', ['false', 'no', '0', 'off', '', 'enabled', '\ufefftrue'], 'off'],
  // consul-k8s: strconv.ParseBool; another value fails the admission; an empty lifecycle keeps the default.
  ['consul-dataplane', 'inject', PARSE_BOOL_ON, 'on'],
  ['consul-dataplane', 'inject', PARSE_BOOL_OFF, 'off'],
  ['consul-dataplane', 'inject', ['', 'yes', 'tRUE'], 'refused'],
  ['consul-dataplane', 'quit', PARSE_BOOL_ON, 'on'],
  ['consul-dataplane', 'quit', PARSE_BOOL_OFF, 'off'],
  ['consul-dataplane', 'quit', [undefined, ''], 'unset'],
  ['consul-dataplane', 'quit', ['yes', 'on', 'tRUE'], 'refused'],
];

describe("each kind's settings as its injector reads them", () => {
  for (const [kind, setting, values, read] of ROWS) {
    test(`${kind} ${setting}: ${values.map((value) => JSON.stringify(value ?? 'absent')).join(' ')} read as ${read}`, () => {
      for (const value of values) assert.equal(readSetting(reading(kind, setting), value), read, JSON.stringify(value));
    });
  }
});

test('no value of a reading that folds has a letter a non-ASCII one lower-cases to (the policy folds ASCII only)', () => {
  // Go's strings.ToLower makes U+212A (the Kelvin sign) k and U+0130 (I with a dot) i; CEL's lowerAscii leaves both.
  const readings = (SIDECAR_KINDS as readonly SidecarKind[]).flatMap(({ template: m }) => [
    m.inject?.reading,
    m.native?.reading,
    m.initOnly?.reading,
    typeof m.quitSwitch === 'object' && 'reading' in m.quitSwitch ? m.quitSwitch.reading : undefined,
  ]);
  const folding = readings.filter((each): each is Reading => each?.folds === true);
  assert.ok(folding.length > 0);
  for (const each of folding) for (const value of [...each.on, ...each.off, ...(each.unset ?? [])]) assert.doesNotMatch(value, /[ki]/i);
});

test("a declared proxy's switch flags, and the words that leave one on, as readBoolFlag reads them", () => {
  assert.deepEqual(switchFlags(kindNamed('cloud-sql-proxy')), ['--quitquitquit', '--health-check']);
  assert.deepEqual(switchFlags(kindNamed('istio')), []);
  for (const word of flagOnWords('--health-check'))
    assert.equal(readBoolFlag(['--health-check=false', word], '--health-check'), 'on', word);
  assert.equal(readBoolFlag(['--health-check', '--health-check=0'], '--health-check'), 'off');
});
