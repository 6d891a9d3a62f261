// What the launcher's parent left behind: an ignored SIGCHLD does not stop it from learning the command's end
// (the kernel would reap the command itself), and the command gets the other ignored signals and the mask back.

import assert from 'node:assert/strict';
import { constants } from 'node:os';
import { test } from 'node:test';
import { type Finished, start } from '../../support/process.ts';
import { buildLauncher } from './support.ts';

const launcher = buildLauncher();
const bit = (name: NodeJS.Signals): bigint => 1n << BigInt(constants.signals[name] - 1);

/** The launcher started by a Perl parent that first runs `setup`; the command prints one line of its status. */
async function underPerl(setup: string, field: string, code: number): Promise<bigint> {
  const perl = `use POSIX; ${setup}; exec @ARGV or die "exec: $!"`;
  // grep alone when the code is 0: dash clears its own signal mask at start.
  const grep = ['grep', `^${field}:`, '/proc/self/status'];
  const command = code === 0 ? grep : ['/bin/sh', '-c', `${grep.join(' ')}; exit ${code}`];
  const running = start('perl', ['-e', perl, launcher, 'run', '--', ...command], { timeoutMs: 5_000 });
  running.process.stdin?.end();
  const result: Finished = await running.finished;
  assert.equal(result.code, code, result.stderr);
  return BigInt(`0x${new RegExp(`${field}:\\s*([0-9a-f]+)`).exec(result.stdout)?.[1] ?? 'x'}`);
}

test('a parent that ignores SIGCHLD and SIGHUP: the exit code arrives; the command ignores SIGHUP, not SIGCHLD', async () => {
  const ignored = await underPerl('$SIG{CHLD} = "IGNORE"; $SIG{HUP} = "IGNORE"', 'SigIgn', 4);
  assert.equal(ignored & bit('SIGCHLD'), 0n, 'SIGCHLD back to its default');
  assert.equal(ignored & bit('SIGHUP'), bit('SIGHUP'), 'SIGHUP still ignored, as the command alone would have it');
});

test('the command gets the signal mask the launcher was given', async () => {
  const blocked = await underPerl('sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGUSR2)) or die', 'SigBlk', 0);
  assert.equal(blocked, bit('SIGUSR2'));
});
