// A simulated pod, run inside `unshare -n` (its network namespace is the pod's shared loopback).
// Usage: node pod-main.ts SPEC_JSON (a PodSpec of kubelet.ts); prints the PodResult as JSON on stdout.

import { execFileSync } from 'node:child_process';
import { runPod, type PodSpec } from './kubelet.ts';

execFileSync('ip', ['link', 'set', 'lo', 'up']);
const result = await runPod(JSON.parse(process.argv[2] ?? '{}') as PodSpec);
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
