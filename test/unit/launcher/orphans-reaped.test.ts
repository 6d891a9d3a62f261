// Orphans of the job are the launcher's children (it is their subreaper), and each is reaped when it ends,
// while the command still runs: none is left a zombie.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { buildLauncher, launch } from './support.ts';

const launcher = buildLauncher();
const ORPHANS = 20;

/** The state letter and parent of a process, or undefined once it is gone (reaped). */
function stat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ');
    return { state: fields[0] ?? '', ppid: Number(fields[1]) };
  } catch {
    return undefined;
  }
}

async function until(what: string, predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs}ms`);
    await sleep(10);
  }
}

test(`${ORPHANS} orphans become the launcher's and are reaped as each ends, while the command runs`, async () => {
  // Each subshell starts a sleep and exits at once: the sleep is orphaned. The command then waits on stdin.
  const script = `for i in $(seq ${ORPHANS}); do (sleep 0.3 & echo orphan $!); done; echo started; read line; exit 5`;
  const running = launch(launcher, ['run'], ['/bin/sh', '-c', script]);
  await running.line(/^started$/, 'stdout');
  const orphans = running
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('orphan '))
    .map((line) => Number(line.split(' ')[1]));
  assert.equal(orphans.length, ORPHANS);
  const adopted = orphans.filter((pid) => stat(pid)?.ppid === running.pid);
  assert.ok(adopted.length > 0, 'the orphans still running have the launcher as parent');
  await until('every orphan reaped', () => orphans.every((pid) => stat(pid) === undefined));
  running.process.stdin?.end('\n');
  const result = await running.finished;
  assert.equal(result.code, 5, result.stderr);
});
