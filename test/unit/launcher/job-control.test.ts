// On a terminal, under a job-control shell (test/support/fixtures/pty-shell.py), the launcher behaves as the
// command alone: Ctrl-Z stops the whole job and the shell gets its prompt, `fg` resumes it on the terminal, a
// read from the background stops it until `fg`, and `stty tostop` never stops the wrapper's own output.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { constants } from 'node:os';
import { FIXTURES, start } from '../../support/process.ts';
import { buildLauncher } from './support.ts';

const launcher = buildLauncher();
const SHELL = join(FIXTURES, 'pty-shell.py');
const READS = ['/bin/sh', '-c', 'echo ready; read line; echo "got $line"; exit 3'];
/** Busy with builtins only for a moment: no fork for a stop to race with. */
const BUSY = ['/bin/sh', '-c', 'echo ready; i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done; echo done; exit 4'];

async function underShell(scenario: string, modes: readonly string[], command: readonly string[]): Promise<string[]> {
  const running = start('/usr/bin/python3', [SHELL, scenario, launcher, ...modes, '--', ...command], { timeoutMs: 15_000 });
  running.process.stdin?.end();
  const result = await running.finished;
  assert.equal(result.code, 0, result.stdout + result.stderr);
  return result.stdout.split('\n').filter((line) => line !== '' && !line.startsWith('tty: fake: '));
}

test('Ctrl-Z stops the job and gives the shell its prompt; fg resumes the command on the terminal', async () => {
  const steps = await underShell('ctrl-z', ['run'], READS);
  assert.deepEqual(steps.slice(0, 3), [`stopped ${constants.signals.SIGTSTP}`, 'prompt', 'fg']);
  assert.ok(steps.includes('tty: got hello'), steps.join('\n'));
  assert.equal(steps.at(-1), 'exit 3');
});

test('Ctrl-Z, then bg: the command goes on in the background to its end', async () => {
  const steps = await underShell('ctrl-z-bg', ['run'], BUSY);
  assert.deepEqual(steps.slice(0, 3), [`stopped ${constants.signals.SIGTSTP}`, 'prompt', 'bg']);
  assert.ok(steps.includes('tty: done'), steps.join('\n'));
  assert.equal(steps.at(-1), 'exit 4');
});

test('a background job that reads the terminal stops; fg gives it the terminal and the read succeeds', async () => {
  const steps = await underShell('bg-read', ['run'], READS);
  assert.deepEqual(steps.slice(0, 3), [`stopped ${constants.signals.SIGTTIN}`, 'prompt', 'fg']);
  assert.ok(steps.includes('tty: got hello'), steps.join('\n'));
  assert.equal(steps.at(-1), 'exit 3');
});

test('stty tostop: the wrapper writes its --version in the foreground and never stops', async () => {
  const steps = await underShell('tostop', ['version'], ['true']);
  assert.deepEqual(steps, ['tty: fake 1.0', 'exit 0']);
});

test('Ctrl-C typed before the wrapper has its handlers: the job is interrupted, 130, not blamed on a limit', async () => {
  const steps = await underShell('ctrl-c', ['silent'], ['true']);
  assert.equal(steps.at(-1), `exit ${128 + constants.signals.SIGINT}`);
  const line =
    'istio-job-run: the wrapper died of signal 2 (Interrupt) from the terminal before it knew the sidecars; none was told to quit';
  assert.ok(
    steps.some((step) => step.startsWith('tty: ') && step.endsWith(line)),
    steps.join('\n'),
  );
});
