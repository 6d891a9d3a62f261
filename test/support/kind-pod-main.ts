// A pod with several sidecars on this machine, run inside `unshare -n -m` (the pod's shared loopback, and
// mounts of its own): the stand-ins of test/support/sidecar.ts and sidecar-kinds.ts on their real default
// ports, an annotations file in Kubernetes' format if asked (or files where a pod's volumes put them), and the
// wrapper as the job. Prints a KindPodResult as JSON on stdout.
// Usage: node kind-pod-main.ts SPEC_JSON

import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Sidecar } from './sidecar.ts';
import { KindStandIn, type StandInOptions, type StandInRequest } from './sidecar-kinds.ts';

export interface KindPodSpec {
  readonly istio?: boolean;
  readonly standIns: readonly StandInOptions[];
  /** Lines of the annotations file (key="value"), written to a file whose path replaces ANNOTATIONS in args and env. */
  readonly annotations?: string;
  /**
   * A stand-in to crash once the job says so (it prints "crash" on stdout) and the stand-in has accepted a
   * connection (the wrapper's connect when the command started): it dies while the job runs.
   */
  readonly crashOnJobLine?: number;
  /** Files by absolute path, as a pod's volumes show them to its container (seen by this pod only). */
  readonly files?: Readonly<Record<string, string>>;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

export interface KindPodResult {
  readonly code: number | null;
  readonly stderr: string;
  readonly stdout: string;
  readonly istio: { method: string; path: string; status: number | string }[];
  readonly standIns: { kind: string; exited: boolean; requests: StandInRequest[] }[];
}

execFileSync('ip', ['link', 'set', 'lo', 'up']);
const spec = JSON.parse(process.argv[2] ?? '{}') as KindPodSpec;
const dir = mkdtempSync(join(tmpdir(), 'kind-pod-'));
const file = join(dir, 'annotations');
if (spec.annotations !== undefined) writeFileSync(file, spec.annotations);
const fill = (text: string): string => text.replaceAll('ANNOTATIONS', file);
// Each file's folder: a writable layer over its nearest existing ancestor, in this pod's own mounts.
const layered: string[] = [];
for (const [path, content] of Object.entries(spec.files ?? {})) {
  let ancestor = dirname(path);
  while (!existsSync(ancestor)) ancestor = dirname(ancestor);
  if (!layered.includes(ancestor)) {
    const layer = join(dir, `layer${layered.length}`);
    mkdirSync(join(layer, 'upper'), { recursive: true });
    mkdirSync(join(layer, 'work'));
    const options = `lowerdir=${ancestor},upperdir=${join(layer, 'upper')},workdir=${join(layer, 'work')}`;
    execFileSync('mount', ['-t', 'overlay', 'overlay', '-o', options, ancestor]);
    layered.push(ancestor);
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

const istio = spec.istio === true ? await Sidecar.start({ agentPort: 15020, envoyPort: 15021 }) : undefined;
const standIns = await Promise.all(spec.standIns.map((options) => KindStandIn.start(options)));
const env = Object.fromEntries(Object.entries(spec.env).map(([key, value]) => [key, fill(value)]));
const job = spawn(spec.args[0] ?? 'false', spec.args.slice(1).map(fill), {
  env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
  stdio: ['pipe', 'pipe', 'pipe'],
});
if (spec.crashOnJobLine === undefined) job.stdin?.end();
let stdout = '';
let stderr = '';
job.stdout?.on('data', (chunk: Buffer) => {
  stdout += String(chunk);
  const victim = spec.crashOnJobLine === undefined ? undefined : standIns[spec.crashOnJobLine];
  if (victim !== undefined && stdout.includes('crash\n')) {
    void (async () => {
      while (victim.connections === 0) await once(victim, 'change');
      await victim.crash();
      job.stdin?.end();
    })();
  }
});
job.stderr?.on('data', (chunk: Buffer) => {
  stderr += String(chunk);
});
const [code] = (await once(job, 'close')) as [number | null];
const result: KindPodResult = {
  code,
  stderr,
  stdout,
  istio: (istio?.requests ?? []).map(({ method, path, status }) => ({ method, path, status })),
  standIns: standIns.map((standIn) => ({ kind: standIn.kind, exited: standIn.exited, requests: standIn.requests })),
};
await istio?.close();
await Promise.all(standIns.map((standIn) => standIn.close()));
for (const ancestor of layered) execFileSync('umount', [ancestor]);
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
