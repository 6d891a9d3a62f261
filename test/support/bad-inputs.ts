// Bad input, as a pod would get it: every option, as a flag and as its variable, with a wrong, an empty and
// a huge value; unknown flags; commands that are missing or a directory; a quit URL that is not loopback.
// Each must end with a message naming what is wrong, a documented exit code, and the sidecar told to quit.

import { OPTIONS } from '../../src/config/options.ts';
import type { PodResult, PodSpec } from './kubelet.ts';
import { WRAPPER } from './process.ts';

export interface BadInput {
  readonly name: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly code: number;
  /** What the wrapper's stderr must say. */
  readonly message: RegExp;
}

const CLASSIC = JSON.stringify({ initContainers: ['istio-init'], containers: ['istio-proxy'] });

/** A wrong, an empty and a huge value for each kind of option. */
function badValues(kind: string, sample: unknown): [string, string][] {
  if (typeof sample === 'number')
    return [
      ['wrong', 'soon'],
      ['empty', ''],
      ['huge', `${'9'.repeat(30)}h`],
    ];
  if (typeof sample === 'boolean')
    return [
      ['wrong', 'maybe'],
      ['empty', ''],
      ['huge', 'y'.repeat(10_000)],
    ];
  if (sample instanceof URL || kind === 'list')
    return [
      ['wrong', 'ftp://127.0.0.1/x'],
      ['empty', ''],
      ['huge', `ftp://${'x'.repeat(10_000)}`],
    ];
  return [
    ['wrong', 'sometimes'],
    ['empty', ''],
    ['huge', 'x'.repeat(10_000)],
  ];
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function badInputs(): BadInput[] {
  const list: BadInput[] = [];
  for (const spec of Object.values(OPTIONS)) {
    const sample: unknown = Array.isArray(spec.default) ? spec.default[0] : spec.default;
    for (const [what, value] of badValues(spec.kind, sample)) {
      const variable = {
        name: `${spec.env}: ${what}`,
        args: ['true'],
        env: { [spec.env]: value },
        code: 125,
        message: new RegExp(`^istio-job-run: ${escape(spec.env)}: `, 'm'),
      };
      list.push(variable);
      // A switch takes no value on the command line: --NAME=value is its wrong use.
      const args = spec.kind === 'switch' ? [`--${spec.flag}=${value}`] : [`--${spec.flag}`, value];
      list.push({
        name: `--${spec.flag}: ${what}`,
        args: [...args, 'true'],
        env: {},
        code: 125,
        message: new RegExp(`^istio-job-run: --${escape(spec.flag)}: `, 'm'),
      });
    }
  }
  list.push(
    { name: 'an unknown flag', args: ['--frobnicate', 'true'], env: {}, code: 125, message: /unknown option --frobnicate/ },
    { name: 'an unknown short flag', args: ['-x', 'true'], env: {}, code: 125, message: /unknown option -x/ },
    { name: 'an unknown one-letter long flag', args: ['--x', 'true'], env: {}, code: 125, message: /unknown option --x / },
    { name: 'no command', args: [], env: {}, code: 125, message: /no command given/ },
    { name: 'a missing command', args: ['/no/such/job'], env: {}, code: 127, message: /\/no\/such\/job: not found/ },
    { name: 'a command that is a directory', args: ['/tmp'], env: {}, code: 126, message: /\/tmp: cannot be executed/ },
    {
      name: 'a quit URL that is not loopback (allowed, with a warning)',
      args: [
        '--quit-url',
        'http://10.11.12.13:15020/quitquitquit',
        '--quit-url',
        'http://127.0.0.1:15020/quitquitquit',
        '--quit-timeout',
        '1s',
        'true',
      ],
      env: {},
      code: 0,
      message: /warning: quit URL http:\/\/10\.11\.12\.13:15020\/quitquitquit is not a loopback address/,
    },
  );
  return list;
}

/** The pod for one bad input: a classic sidecar on the real ports, the wrapper with its defaults otherwise. */
export function badInputPod(input: BadInput): PodSpec {
  return {
    sidecar: { kind: 'classic', flags: ['--ready-after-ms', '50'] },
    job: {
      argv: [WRAPPER, ...input.args],
      env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', ISTIO_JOB_RUN_SIDECAR_STATUS: CLASSIC, ...input.env },
    },
    restartPolicy: 'Never',
    backoffLimit: 0,
    graceMs: 1_000,
    hangAfterMs: 8_000,
  };
}

export interface BadInputOutcome {
  readonly code: number | undefined;
  /** The line of the wrapper's stderr that says what was wrong ('' when none did). */
  readonly message: string;
  /** Quits the sidecar acknowledged. */
  readonly quits: number;
  readonly phase: PodResult['phase'];
  /** What went against the expectation; empty when all held. */
  readonly violations: string[];
}

/** What a pod did with a bad input, and whether it is what the input must get. */
export function judgeBadInput(input: BadInput, result: PodResult): BadInputOutcome {
  const code = result.job.runs.at(-1)?.code;
  const message = result.job.stderr.split('\n').find((line) => input.message.test(line)) ?? '';
  const quits = result.sidecar.events.filter((e) => e.path === '/quitquitquit' && e.status === 200).length;
  const violations: string[] = [];
  if (code !== input.code) violations.push(`exit ${code}, expected ${input.code}`);
  if (message === '') violations.push(`stderr lacks ${input.message}: ${JSON.stringify(result.job.stderr.slice(0, 300))}`);
  if (quits !== 1) violations.push(`${quits} quits acknowledged, expected 1`);
  if (result.phase === 'Running') violations.push('the pod hangs');
  return { code, message, quits, phase: result.phase, violations };
}
