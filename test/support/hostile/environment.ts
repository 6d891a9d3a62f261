// The environment and the arguments meant for the job: a broken LD_PRELOAD, Node's own NODE_* variables,
// and environment entries and arguments that are not UTF-8, passed on byte for byte.

import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WRAPPER } from '../process.ts';
import type { Sidecar } from '../sidecar.ts';
import { acknowledged, BUSYBOX, CLASSIC, defineCase, describeStatus, pid1Argv, type Verdict, where } from './common.ts';
import { type Spawned, spawnHow } from './tools.ts';

/** stderr lines that are not the wrapper's (`istio-job-run: ...` or its JSON). */
const foreignLines = (stderr: string): string[] =>
  stderr.split('\n').filter((line) => line !== '' && !line.startsWith('istio-job-run:') && !line.startsWith('{"'));

/** Runs the job `busybox env` through the wrapper with `env` added, in classic mode; returns what it saw. */
async function envJob(
  env: Record<string, string>,
  pid1: boolean,
  sidecar: Sidecar,
): Promise<{ status: Awaited<Spawned['status']>; seen: Map<string, string>; quits: number; ready: boolean }> {
  const argv = [WRAPPER, ...CLASSIC, '--', BUSYBOX, 'env'];
  // As PID 1 the variables are set past unshare, by env(1): unshare is dynamically linked and would read LD_PRELOAD itself.
  const status = pid1
    ? await spawnHow(pid1Argv(true, ['/usr/bin/env', ...Object.entries(env).map(([name, value]) => `${name}=${value}`), ...argv]), {
        timeoutMs: 10_000,
      }).status
    : await spawnHow(argv, { env, timeoutMs: 10_000 }).status;
  const seen = new Map<string, string>();
  for (const line of status.stdout.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) seen.set(line.slice(0, at), line.slice(at + 1));
  }
  return { status, seen, quits: acknowledged(sidecar), ready: sidecar.readyRequests.some((r) => r.status === 200) };
}

function judgeEnv(env: Record<string, string>, result: Awaited<ReturnType<typeof envJob>>, dirs: readonly string[] = []): Verdict {
  const changed = Object.entries(env)
    .filter(([name, value]) => result.seen.get(name) !== value)
    .map(([name]) => name);
  const foreign = foreignLines(result.status.stderr);
  const written = dirs.flatMap((dir) => readdirSync(dir).map((name) => join(dir.split('/').at(-1) ?? '', name)));
  const ok =
    result.status.code === 0 && result.ready && result.quits === 1 && changed.length === 0 && foreign.length === 0 && written.length === 0;
  return {
    ok,
    got: [
      describeStatus(result.status),
      result.ready ? 'ready' : 'no readiness',
      `${result.quits} quit(s)`,
      changed.length > 0 ? `changed for the job: ${changed.join(' ')}` : 'the job sees them unchanged',
      foreign.length > 0 && `${foreign.length} unprefixed stderr line(s), e.g. ${JSON.stringify(foreign[0]?.slice(0, 80))}`,
      written.length > 0 && `written: ${written.slice(0, 3).join(' ')}`,
    ],
  };
}

export const brokenPreload = defineCase({
  name: 'broken LD_PRELOAD',
  about:
    'LD_PRELOAD naming a missing file, or a file that is not ELF: the command runs, readiness and quit happen, the job sees LD_PRELOAD unchanged, ' +
    'no loader errors on stderr',
  tries: { short: 2, long: 20 },
  variant: (i) => ({ missing: i % 2 === 0, pid1: i % 4 >= 2 }),
  sent: ({ missing, pid1 }) => `LD_PRELOAD=${missing ? 'a missing file' : 'a text file'}, ${where(pid1)}`,
  scratch: true,
  standIn: {},
  async judge({ missing, pid1 }, { scratch, sidecar }) {
    const notElf = join(scratch, 'not-elf.so');
    writeFileSync(notElf, '#!/bin/sh\nnot a library\n');
    const env = { LD_PRELOAD: missing ? '/no/such/preload.so' : notElf };
    return judgeEnv(env, await envJob(env, pid1, sidecar));
  },
});

export const nodeVariables = defineCase({
  name: 'NODE_* variables meant for the job',
  about:
    'NODE_DEBUG=*, NODE_V8_COVERAGE=DIR, NODE_COMPILE_CACHE=DIR, NODE_OPTIONS, NODE_TLS_REJECT_UNAUTHORIZED=0, UV_THREADPOOL_SIZE=1: ' +
    'no unprefixed stderr line, nothing written into DIR, the job sees each unchanged',
  tries: { short: 2, long: 20 },
  variant: (i) => i % 2 === 1,
  sent: (pid1) => `all of them, ${where(pid1)}`,
  scratch: true,
  standIn: {},
  async judge(pid1, { scratch, sidecar }) {
    const coverage = join(scratch, 'coverage');
    const cache = join(scratch, 'cache');
    mkdirSync(coverage);
    mkdirSync(cache);
    const env = {
      NODE_DEBUG: '*',
      NODE_V8_COVERAGE: coverage,
      NODE_COMPILE_CACHE: cache,
      NODE_OPTIONS: '--trace-exit --trace-warnings --pending-deprecation',
      NODE_TLS_REJECT_UNAUTHORIZED: '0',
      UV_THREADPOOL_SIZE: '1',
    };
    return judgeEnv(env, await envJob(env, pid1, sidecar), [coverage, cache]);
  },
});

/** The raw bytes of the environment the job sees, compared as a multiset of entries. */
const rawEntries = (environ: Buffer): string[] => {
  const entries: string[] = [];
  let start = 0;
  for (let at = environ.indexOf(0); at >= 0; at = environ.indexOf(0, start)) {
    entries.push(environ.subarray(start, at).toString('hex'));
    start = at + 1;
  }
  return entries.sort();
};

export const environmentBytes = defineCase({
  name: 'environment bytes',
  about:
    'an environment set with execve(2): a value and a name that are not UTF-8, a value with a newline and "=", an empty value; the job ' +
    '(cat /proc/self/environ) sees exactly those entries, byte for byte',
  tries: { short: 2, long: 20 },
  variant: (i) => i % 2 === 1,
  sent: (pid1) => where(pid1),
  async judge(pid1) {
    const raw = [
      Buffer.from('PATH=/usr/bin:/bin'),
      Buffer.from('ISTIO_JOB_RUN_SIDECAR=none'),
      Buffer.concat([Buffer.from('SECRET_BYTES='), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x80, 0x41])]),
      Buffer.concat([Buffer.from('NAME_'), Buffer.from([0xe9, 0xff]), Buffer.from('=latin1 name')]),
      Buffer.from('MULTI=line one\nline=two'),
      Buffer.from('EMPTY='),
    ];
    const argv = pid1Argv(pid1, [WRAPPER, '--', '/bin/cat', '/proc/self/environ']);
    const spawned = spawnHow(argv, { rawEnv: raw, timeoutMs: 8_000 });
    const status = await spawned.status;
    const seen = rawEntries(status.stdoutBytes);
    const given = raw.map((entry) => entry.toString('hex')).sort();
    const missing = given.filter((entry) => !seen.includes(entry)).map((hex) => Buffer.from(hex, 'hex').toString('latin1').split('=')[0]);
    const extra = seen.filter((entry) => !given.includes(entry)).map((hex) => Buffer.from(hex, 'hex').toString('latin1').split('=')[0]);
    return {
      ok: status.code === 0 && missing.length === 0 && extra.length === 0,
      got: [
        describeStatus(status),
        missing.length > 0 ? `not as given: ${missing.map((n) => JSON.stringify(n)).join(' ')}` : 'every entry byte for byte',
        extra.length > 0 && `added: ${extra.join(' ')}`,
      ],
    };
  },
});

export const argumentBytes = defineCase({
  name: 'argument bytes',
  about:
    "the command's arguments set with execve(2), one not UTF-8 and one with a newline: the job (sh printing each argument) gets " +
    'them byte for byte',
  tries: { short: 2, long: 20 },
  variant: (i) => i % 2 === 1,
  sent: (pid1) => where(pid1),
  async judge(pid1) {
    const args = [Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x80, 0x41]), Buffer.from('line one\nline two'), Buffer.from('')];
    const command = [WRAPPER, '--sidecar', 'none', '--', BUSYBOX, 'sh', '-c', 'for a in "$@"; do printf "%s\\0" "$a"; done', 'sh'];
    const rawArgv = [...pid1Argv(pid1, command).map((arg) => Buffer.from(arg)), ...args];
    const status = await spawnHow([], { rawArgv, timeoutMs: 8_000 }).status;
    const seen = status.stdoutBytes.toString('hex');
    const given = Buffer.concat(args.flatMap((arg) => [arg, Buffer.from([0])])).toString('hex');
    return {
      ok: status.code === 0 && seen === given,
      got: [describeStatus(status), seen === given ? 'every argument byte for byte' : `got ${seen}, not ${given}`],
    };
  },
});
