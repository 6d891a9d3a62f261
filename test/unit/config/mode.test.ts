import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { modeInputs, resolveMode as resolveFrom, type ResolvedMode } from '../../../src/config/mode.ts';
import { STATUS_VARIABLE, type SidecarSetting } from '../../../src/config/options.ts';
import { readScuttle } from '../../../src/config/scuttle.ts';

/** mode.ts takes what configuration.ts and scuttle.ts read from the environment. */
const resolveMode = (setting: SidecarSetting, env: Readonly<Record<string, string>>): ResolvedMode =>
  resolveFrom(setting, modeInputs(env, readScuttle(env, []).envoyAdmin));

type Env = Record<string, string>;

/** The annotation sidecar.istio.io/status as Istio writes it, with istio-proxy where the pod has it. */
const status = (lists: Readonly<Record<'initContainers' | 'containers', string[] | null>>): string =>
  JSON.stringify({ ...lists, volumes: ['workload-socket', 'istio-envoy'], imagePullSecrets: null, revision: 'default' });

const NATIVE = status({ initContainers: ['istio-validation', 'istio-proxy'], containers: ['app'] });
const CLASSIC = status({ initContainers: ['istio-init'], containers: ['istio-proxy'] });
const IN_POD = { KUBERNETES_SERVICE_HOST: '10.96.0.1' };
const ADMIN = { ENVOY_ADMIN_API: 'http://127.0.0.1:15000' };

interface Row {
  readonly name: string;
  readonly setting: SidecarSetting;
  readonly env: Env;
  readonly mode: ResolvedMode['mode'];
  readonly level: ResolvedMode['level'];
  /** A piece of the reason the log shows. */
  readonly says: string;
}

const rows: Row[] = [
  { name: 'classic set explicitly', setting: 'classic', env: {}, mode: 'classic', level: 'debug', says: 'set explicitly' },
  {
    name: 'native set explicitly',
    setting: 'native',
    env: { [STATUS_VARIABLE]: CLASSIC },
    mode: 'native',
    level: 'debug',
    says: 'set explicitly',
  },
  { name: 'none set explicitly, even in a pod', setting: 'none', env: IN_POD, mode: 'none', level: 'debug', says: 'set explicitly' },
  {
    name: 'classic set explicitly beats an empty status',
    setting: 'classic',
    env: { [STATUS_VARIABLE]: '' },
    mode: 'classic',
    level: 'debug',
    says: 'set explicitly',
  },
  { name: 'empty status: no sidecar', setting: 'auto', env: { [STATUS_VARIABLE]: '' }, mode: 'none', level: 'debug', says: 'is empty' },
  {
    name: 'blank status: no sidecar',
    setting: 'auto',
    env: { [STATUS_VARIABLE]: ' \n\t' },
    mode: 'none',
    level: 'debug',
    says: 'is empty',
  },
  {
    name: 'istio-proxy under initContainers: native',
    setting: 'auto',
    env: { [STATUS_VARIABLE]: NATIVE },
    mode: 'native',
    level: 'debug',
    says: 'initContainers',
  },
  {
    name: 'istio-proxy under containers: classic',
    setting: 'auto',
    env: { [STATUS_VARIABLE]: CLASSIC },
    mode: 'classic',
    level: 'debug',
    says: 'listed under containers',
  },
  {
    name: 'istio-proxy under both: native wins',
    setting: 'auto',
    env: { [STATUS_VARIABLE]: status({ initContainers: ['istio-proxy'], containers: ['istio-proxy'] }) },
    mode: 'native',
    level: 'debug',
    says: 'initContainers',
  },
  {
    name: 'garbage status: classic, with a warning',
    setting: 'auto',
    env: { [STATUS_VARIABLE]: '{not json' },
    mode: 'classic',
    level: 'warn',
    says: 'not JSON',
  },
  {
    name: 'status without istio-proxy: classic, with a warning',
    setting: 'auto',
    env: { [STATUS_VARIABLE]: status({ initContainers: ['istio-init'], containers: ['app'] }) },
    mode: 'classic',
    level: 'warn',
    says: 'lists no istio-proxy',
  },
  {
    name: 'status JSON null: classic, with a warning',
    setting: 'auto',
    env: { [STATUS_VARIABLE]: 'null' },
    mode: 'classic',
    level: 'warn',
    says: 'lists no istio-proxy',
  },
  {
    name: 'istio-proxy as a string, not a list: classic, with a warning',
    setting: 'auto',
    env: { [STATUS_VARIABLE]: '{"containers":"istio-proxy"}' },
    mode: 'classic',
    level: 'warn',
    says: 'lists no istio-proxy',
  },
  {
    name: 'no status, not in a pod: none',
    setting: 'auto',
    env: {},
    mode: 'none',
    level: 'info',
    says: 'KUBERNETES_SERVICE_HOST is unset',
  },
  {
    name: 'no status, in a pod: classic',
    setting: 'auto',
    env: IN_POD,
    mode: 'classic',
    level: 'debug',
    says: `without ${STATUS_VARIABLE}`,
  },
  {
    name: 'status beats KUBERNETES_SERVICE_HOST (empty)',
    setting: 'auto',
    env: { ...IN_POD, [STATUS_VARIABLE]: '' },
    mode: 'none',
    level: 'debug',
    says: 'is empty',
  },
  {
    name: 'status beats KUBERNETES_SERVICE_HOST (native)',
    setting: 'auto',
    env: { ...IN_POD, [STATUS_VARIABLE]: NATIVE },
    mode: 'native',
    level: 'debug',
    says: 'initContainers',
  },
  // scuttle's ENVOY_ADMIN_API: an Envoy to wait for and quit, so classic, even outside Kubernetes...
  {
    name: 'ENVOY_ADMIN_API, not in a pod: classic',
    setting: 'auto',
    env: ADMIN,
    mode: 'classic',
    level: 'info',
    says: 'ENVOY_ADMIN_API is set (scuttle), though not in a Kubernetes pod',
  },
  {
    name: 'ENVOY_ADMIN_API in a pod: classic',
    setting: 'auto',
    env: { ...IN_POD, ...ADMIN },
    mode: 'classic',
    level: 'debug',
    says: 'ENVOY_ADMIN_API is set (scuttle): assuming a classic sidecar',
  },
  {
    name: 'ENVOY_ADMIN_API empty is unset, as in scuttle',
    setting: 'auto',
    env: { ENVOY_ADMIN_API: ' ' },
    mode: 'none',
    level: 'info',
    says: 'KUBERNETES_SERVICE_HOST is unset',
  },
  {
    name: 'ENVOY_ADMIN_API with a bad value still says classic (the quit of a usage error)',
    setting: 'auto',
    env: { ENVOY_ADMIN_API: 'localhost:15000' },
    mode: 'classic',
    level: 'info',
    says: 'ENVOY_ADMIN_API is set',
  },
  // ...but what the pod really has wins: quitting a native sidecar harms the job.
  {
    name: 'native status beats ENVOY_ADMIN_API',
    setting: 'auto',
    env: { ...ADMIN, [STATUS_VARIABLE]: NATIVE },
    mode: 'native',
    level: 'info',
    says: 'initContainers); ENVOY_ADMIN_API (scuttle) does not make it classic',
  },
  {
    name: 'empty status beats ENVOY_ADMIN_API',
    setting: 'auto',
    env: { ...IN_POD, ...ADMIN, [STATUS_VARIABLE]: '' },
    mode: 'none',
    level: 'info',
    says: 'is empty: the pod has no injected sidecar; ENVOY_ADMIN_API (scuttle) does not make it classic',
  },
  {
    name: 'classic status with ENVOY_ADMIN_API: classic, said quietly',
    setting: 'auto',
    env: { ...ADMIN, [STATUS_VARIABLE]: CLASSIC },
    mode: 'classic',
    level: 'debug',
    says: 'listed under containers',
  },
  {
    name: 'unreadable status with ENVOY_ADMIN_API: classic, with the warning',
    setting: 'auto',
    env: { ...ADMIN, [STATUS_VARIABLE]: '{' },
    mode: 'classic',
    level: 'warn',
    says: 'not JSON',
  },
  {
    name: '--sidecar none beats ENVOY_ADMIN_API',
    setting: 'none',
    env: { ...IN_POD, ...ADMIN },
    mode: 'none',
    level: 'debug',
    says: 'set explicitly',
  },
  { name: '--sidecar native beats ENVOY_ADMIN_API', setting: 'native', env: ADMIN, mode: 'native', level: 'debug', says: 'set explicitly' },
];

describe('resolveMode', () => {
  for (const row of rows) {
    test(`${row.name} -> ${row.mode} (${row.level})`, () => {
      const resolved = resolveMode(row.setting, row.env);
      assert.deepEqual({ mode: resolved.mode, level: resolved.level }, { mode: row.mode, level: row.level });
      assert.ok(resolved.reason.includes(row.says), `reason ${JSON.stringify(resolved.reason)} lacks ${JSON.stringify(row.says)}`);
    });
  }

  test('an unreadable status is quoted in the warning, shortened when long', () => {
    const long = `x${'y'.repeat(300)}`;
    const { reason } = resolveMode('auto', { [STATUS_VARIABLE]: long });
    assert.ok(reason.includes(JSON.stringify(`${long.slice(0, 117)}...`)), reason);
    assert.ok(!reason.includes(long.slice(0, 118)), 'the status is not shortened');
  });
});
