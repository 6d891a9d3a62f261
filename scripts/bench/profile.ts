// node scripts/bench/profile.ts [--flags "--v8-flag ..."] [OUT]: where the wrapper's start-up time and memory
// go, with the pinned Node's own profilers on a build of the same bundle. The executable's execArgv is fixed
// when it is built (execArgvExtension 'none'), so this builds a profiling variant: the same main script with
// --cpu-prof and --heapsnapshot-signal added (and the --flags given), in a copy of dist/bundle/, and runs it
// behind the real launcher in --sidecar none and in classic mode (a stand-in proxy ready at once). A footer
// appended to the main script writes process.moduleLoadList when the process exits.
// It prints a summary; the .cpuprofile and .heapsnapshot files stay in OUT (default a temp dir) for DevTools.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Sidecar } from '../../test/support/sidecar.ts';
import { cleanEnv } from '../../test/support/process.ts';
import { type Arch, buildExecutable, bundleJs, target } from '../build.ts';
import { DIST_BUNDLE, TIMEOUT_MS } from './settings.ts';

const PROFILE_ENV = 'ISTIO_JOB_RUN_PROFILE_DIR';
/** A command that says it started and waits for a line on stdin. */
const WAITING = ['sh', '-c', 'echo started; read line'];

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

/** Self time per bucket: our bundle, the HTTP client, Node's built-in JS, V8's own (GC, compile, idle). */
function buckets(profile: CpuProfile): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)?.callFrame;
    const url = frame?.url ?? '';
    const bucket =
      url === ''
        ? `(${(frame?.functionName ?? '').replace(/[()]/g, '') || 'native'})`
        : url.includes('http.cjs')
          ? 'HTTP client (undici)'
          : url.startsWith('node:')
            ? `node built-ins`
            : url.includes('istio-job-run')
              ? 'main script'
              : url;
    out.set(bucket, (out.get(bucket) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return out;
}

/** Self time per built-in module, the largest first. */
function topUrls(profile: CpuProfile, count = 8): [string, number][] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const url = byId.get(id)?.callFrame.url ?? '';
    if (url.startsWith('node:')) out.set(url, (out.get(url) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return [...out].sort((a, b) => b[1] - a[1]).slice(0, count);
}

interface HeapSnapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: string[]; readonly node_types: [string[], ...unknown[]] } };
  readonly nodes: number[];
  readonly strings: string[];
}

/** A heap snapshot's self sizes by node type, and the largest constructors by name. */
function heapSummary(file: string): string[] {
  const heap = JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshot;
  const fields = heap.snapshot.meta.node_fields;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const types = heap.snapshot.meta.node_types[0];
  const byType = new Map<string, number>();
  const byName = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < heap.nodes.length; i += fields.length) {
    const type = types[heap.nodes[i + typeAt] ?? 0] ?? '?';
    const size = heap.nodes[i + sizeAt] ?? 0;
    total += size;
    byType.set(type, (byType.get(type) ?? 0) + size);
    if (type === 'object' || type === 'closure' || type === 'code') {
      const name = `${type} ${heap.strings[heap.nodes[i + nameAt] ?? 0] ?? '?'}`.slice(0, 60);
      byName.set(name, (byName.get(name) ?? 0) + size);
    }
  }
  const mib = (n: number): string => `${(n / 2 ** 20).toFixed(2)} MiB`;
  const top = (map: Map<string, number>, count: number): string =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([k, v]) => `${k} ${mib(v)}`)
      .join('; ');
  return [`heap: ${mib(total)} of live objects; by type: ${top(byType, 8)}`, `  the largest kinds: ${top(byName, 8)}`];
}

async function runOnce(launcher: string, args: readonly string[], dir: string, snapshot: boolean): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const child = spawn(launcher, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: cleanEnv({ [PROFILE_ENV]: dir }),
    timeout: TIMEOUT_MS.memory,
    killSignal: 'SIGKILL',
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const firstLine = once(child.stdout, 'data');
  const exited = once(child, 'exit') as Promise<[number | null]>;
  if (snapshot) {
    await Promise.race([
      firstLine,
      exited.then(() => Promise.reject(new Error(`${args.join(' ')}: ended before its command wrote: ${stderr}`))),
    ]);
    // The Node wrapper is the launcher's only child until the command starts; the command is its second.
    const node = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]);
    const status = readFileSync(`/proc/${node}/status`, 'utf8');
    const memory = [...status.matchAll(/^(VmHWM|VmRSS|RssAnon|RssFile):\s+(\d+) kB$/gm)].map(
      ([, k, v]) => `${k} ${(Number(v) / 1024).toFixed(1)} MiB`,
    );
    writeFileSync(join(dir, 'status.txt'), memory.join(', '));
    process.kill(node, 'SIGUSR2');
    // The snapshot is written synchronously by the Node process: wait until the file is complete.
    for (let i = 0; i < 200 && !readdirSync(dir).some((f) => f.endsWith('.heapsnapshot')); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
  }
  child.stdin.end('\n');
  const [code] = await exited;
  // The wrapper's router forwards the USR2 it was sent to the command too: the command ends of it (128 + 12).
  if (code !== (snapshot ? 140 : 0)) throw new Error(`${args.join(' ')}: exit ${code}: ${stderr}`);
  return stderr;
}

function summarize(dir: string, label: string): string[] {
  const lines = [`## ${label}`];
  const prof = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (prof !== undefined) {
    const profile = JSON.parse(readFileSync(join(dir, prof), 'utf8')) as CpuProfile;
    const total = (profile.endTime - profile.startTime) / 1000;
    lines.push(`cpu profile: ${total.toFixed(1)} ms from V8's start of profiling to exit`);
    for (const [bucket, msSelf] of [...buckets(profile)].sort((a, b) => b[1] - a[1])) {
      if (msSelf >= 0.3) lines.push(`  ${msSelf.toFixed(1).padStart(6)} ms  ${bucket}`);
    }
    lines.push('  built-ins with the most self time:');
    for (const [url, msSelf] of topUrls(profile)) lines.push(`  ${msSelf.toFixed(1).padStart(6)} ms  ${url}`);
  }
  try {
    lines.push(`memory while the command runs (Node process): ${readFileSync(join(dir, 'status.txt'), 'utf8')}`);
  } catch {
    // no snapshot in this run
  }
  const snap = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
  if (snap !== undefined) lines.push(...heapSummary(join(dir, snap)));
  try {
    const modules = readFileSync(join(dir, 'modules.txt'), 'utf8').split('\n');
    const builtins = modules.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
    lines.push(
      `built-in modules loaded by exit: ${builtins.length}; public ones: ${builtins.filter((m) => !m.startsWith('internal/')).join(' ')}`,
    );
  } catch {
    // the process did not exit through its exit handlers
  }
  return lines;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { flags: { type: 'string', default: '' } } });
  const out = positionals[0] ?? mkdtempSync(join(tmpdir(), 'istio-job-run-profile-'));
  const work = mkdtempSync(join(tmpdir(), 'istio-job-run-profile-build-'));
  try {
    const scripts = await bundleJs(work);
    appendFileSync(
      scripts.main,
      `\n;process.on('exit',()=>{const d=process.env.${PROFILE_ENV};if(d)require('node:fs').writeFileSync(d+'/modules.txt',process.moduleLoadList.join('\\n'))});\n`,
    );
    const flags = values.flags.split(' ').filter((f) => f !== '');
    const bundle = join(work, 'bundle');
    cpSync(DIST_BUNDLE, bundle, { recursive: true });
    const profiling = ['--cpu-prof', `--cpu-prof-dir=.`, '--cpu-prof-interval=50', '--heapsnapshot-signal=SIGUSR2', ...flags];
    // Relative --cpu-prof-dir: the wrapper's cwd, which runOnce sets per run.
    await buildExecutable(target(process.arch as Arch), scripts, join(bundle, 'istio-job-run.lib', 'istio-job-run'), work, profiling);
    const launcher = join(bundle, 'istio-job-run');
    const report: string[] = [`flags added: ${profiling.join(' ')}`];
    const runs: [string, string[], boolean][] = [
      ['--version', ['--version'], false],
      ['--sidecar none -- true', ['--sidecar', 'none', '--', 'true'], false],
      ['--sidecar none, command waiting (heap snapshot taken while it waits)', ['--sidecar', 'none', '--', ...WAITING], true],
    ];
    for (const [label, args, snapshot] of runs) {
      const dir = join(out, label.replace(/[^a-z]+/g, '-').slice(0, 40));
      await runIn(dir, () => runOnce(launcher, args, dir, snapshot));
      report.push(...summarize(dir, label));
    }
    for (const [label, command, snapshot] of [
      ['classic, proxy ready, -- true', ['true'], false],
      ['classic, proxy ready, command waiting (heap snapshot taken while it waits)', WAITING, true],
    ] as const) {
      // A stand-in of its own per run: a quit ends it, as it ends Istio 1.26+.
      const sidecar = await Sidecar.start({ readyAfter: 0 });
      try {
        const args = ['--sidecar', 'classic', '--ready-url', sidecar.readyUrl, '--quit-url', sidecar.quitUrl, '--', ...command];
        const dir = join(out, label.replace(/[^a-z]+/g, '-').slice(0, 40));
        await runIn(dir, () => runOnce(launcher, args, dir, snapshot));
        report.push(...summarize(dir, label));
      } finally {
        await sidecar.close();
      }
    }
    process.stdout.write(`${report.join('\n')}\nfiles in ${out}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Runs body with the bench's cwd at dir (the wrapper inherits it: its --cpu-prof-dir is relative). */
async function runIn<T>(dir: string, body: () => Promise<T>): Promise<T> {
  mkdirSync(dir, { recursive: true });
  const before = process.cwd();
  process.chdir(dir);
  try {
    return await body();
  } finally {
    process.chdir(before);
  }
}

await main();
