// node scripts/bench/profile.ts [OUT]: where a job's CPU goes, with V8's own profiler, on a build of the same
// bundle. The shipped executable takes no flags and the launcher kills Node once it has said its exit code
// (before --cpu-prof would write), so this builds a variant whose main script starts the profiler through
// node:inspector and, when the wrapper writes its `exit` line to the launcher, writes the profile and each
// thread's CPU time (/proc/self/task/*/schedstat). It runs the variant behind the real launcher in
// `--sidecar none` and in classic mode against a stand-in proxy ready after 0 ms, 300 ms and 3 s, and prints
// per thread, per 100 ms of the run and per function; the .cpuprofile files stay in OUT for DevTools.

import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Arch, buildExecutable, bundleJs, target } from '../build.ts';
import { root } from '../root.ts';
import { classicArgs, launch, Proxy } from './run.ts';

const out = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'istio-job-run-profile-'));
// Not ISTIO_JOB_RUN_*: the bench's processes get an environment without those.
const OUT_ENV = 'PROFILE_OUT';

/** Prepended to the variant's main script: the profiler from the first line, written at the `exit` line. */
const header = `;(()=>{const fs=require('node:fs');const s=new (require('node:inspector').Session)();s.connect();
s.post('Profiler.enable');s.post('Profiler.setSamplingInterval',{interval:100});s.post('Profiler.start');
const write=fs.writeSync;let done=false;fs.writeSync=function(fd,text,...rest){
const line=typeof text==='string'?text:ArrayBuffer.isView(text)?Buffer.from(text.buffer,text.byteOffset,text.byteLength).toString('latin1'):'';
if(!done&&line.startsWith('exit ')&&process.env.${OUT_ENV}){done=true;const o=process.env.${OUT_ENV};
const threads=fs.readdirSync('/proc/self/task').map((t)=>fs.readFileSync('/proc/self/task/'+t+'/comm','utf8').trim()+' '+
fs.readFileSync('/proc/self/task/'+t+'/schedstat','utf8').split(' ')[0]).join('\\n');fs.writeFileSync(o+'.threads',threads);
s.post('Profiler.stop',(e,r)=>fs.writeFileSync(o+'.cpuprofile',JSON.stringify(r.profile)));}
return write.call(this,fd,text,...rest);};})();\n`;

interface Profile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

function summarize(file: string): string[] {
  const profile = JSON.parse(readFileSync(`${file}.cpuprofile`, 'utf8')) as Profile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const windows = new Map<number, number>();
  const self = new Map<string, number>();
  let at = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    at += ms;
    const frame = frames.get(id);
    if (frame === undefined || frame.functionName === '(idle)') return;
    windows.set(Math.floor(at / 100), (windows.get(Math.floor(at / 100)) ?? 0) + ms);
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\//, '')}:${frame.lineNumber}`;
    self.set(name, (self.get(name) ?? 0) + ms);
  });
  const threads = readFileSync(`${file}.threads`, 'utf8')
    .split('\n')
    .map((line) => {
      const [name, ns] = line.split(' ');
      return `${name} ${(Number(ns) / 1e6).toFixed(1)} ms`;
    });
  return [
    `  threads: ${threads.join(', ')}`,
    `  main thread busy per 100 ms: ${[...windows].map(([w, ms]) => `${w * 100}:${ms.toFixed(1)}`).join(' ')}`,
    '  most self time (the profiler itself starts in node:inspector):',
    ...[...self]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(([name, ms]) => `  ${ms.toFixed(2).padStart(8)} ms  ${name}`),
  ];
}

const work = mkdtempSync(join(tmpdir(), 'istio-job-run-profile-build-'));
try {
  const scripts = await bundleJs(work);
  writeFileSync(scripts.main, header + readFileSync(scripts.main, 'utf8'));
  const bundle = join(work, 'bundle');
  cpSync(join(root, 'dist', 'bundle'), bundle, { recursive: true });
  await buildExecutable(target(process.arch as Arch), scripts, join(bundle, 'istio-job-run.lib', 'istio-job-run'), work);
  mkdirSync(out, { recursive: true });
  const report: string[] = [];
  const runs: [string, number | undefined][] = [
    ['--sidecar none -- true', undefined],
    ...[0, 300, 3_000].map((ms): [string, number] => [`classic, proxy ready after ${ms} ms, -- true`, ms]),
  ];
  for (const [label, readyMs] of runs) {
    const proxy = await Proxy.start();
    try {
      proxy.readyIn(readyMs ?? 0);
      const file = join(out, label.replace(/[^a-z0-9]+/g, '-'));
      const args = readyMs === undefined ? ['--sidecar', 'none', '--', 'true'] : classicArgs(proxy, ['true']);
      process.env[OUT_ENV] = file;
      await launch(join(bundle, 'istio-job-run'), args, 30_000).ended;
      report.push(`${label} (${proxy.readyRequests} readiness requests)`, ...summarize(file));
    } finally {
      await proxy.close();
    }
  }
  process.stdout.write(`${report.join('\n')}\nfiles in ${out}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
