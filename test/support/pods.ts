// Running simulated pods from the host: each in a network namespace of its own, so many can use the
// real ports 15020/15021 at once. Needs root and unshare.

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { KindPodResult, KindPodSpec } from './kind-pod-main.ts';
import type { PodResult, PodSpec } from './kubelet.ts';
import { NODE, root, start } from './process.ts';

/** Why pods cannot be simulated here, or undefined when they can. */
export function podsUnavailable(): string | undefined {
  try {
    execFileSync('unshare', ['--net', '--pid', '--fork', '--mount-proc', 'ip', 'link', 'set', 'lo', 'up'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'needs root, unshare and ip (network and PID namespaces)';
  }
}

/** Runs one pod to completion (or to its hang bound), with a hard timeout beyond that. */
export async function simulatePod(spec: PodSpec): Promise<PodResult> {
  const running = start('unshare', ['--net', '--', NODE, join(root, 'test/support/pod-main.ts'), JSON.stringify(spec)], {
    timeoutMs: spec.hangAfterMs + 20_000,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  });
  running.process.stdin?.end();
  const finished = await running.finished;
  if (finished.code !== 0) throw new Error(`the pod simulator failed (${finished.code}): ${finished.stderr}`);
  return JSON.parse(finished.stdout) as PodResult;
}

/** Runs many pods, `parallel` at a time, in order of the list. */
export async function simulatePods<T>(items: readonly T[], parallel: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await run(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
}

/** Runs a pod of several sidecars (test/support/kind-pod-main.ts) in network and mount namespaces of its own. */
export async function simulateKindPod(spec: KindPodSpec): Promise<KindPodResult> {
  const running = start('unshare', ['--net', '--mount', '--', NODE, join(root, 'test/support/kind-pod-main.ts'), JSON.stringify(spec)], {
    timeoutMs: 40_000,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  });
  running.process.stdin?.end();
  const finished = await running.finished;
  if (finished.code !== 0) throw new Error(`the pod failed (${finished.code}): ${finished.stderr}`);
  return JSON.parse(finished.stdout) as KindPodResult;
}
