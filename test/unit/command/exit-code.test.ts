import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { constants } from 'node:os';
import {
  EXIT_CANNOT_EXECUTE,
  EXIT_NOT_FOUND,
  EXIT_WRAPPER_FAILED,
  exitCodeFor,
  signalExitCode,
  type Outcome,
} from '../../../src/command/exit-code.ts';

const exited = (code: number): Outcome => ({ kind: 'exited', code });
const signaled = (signal: NodeJS.Signals | number): Outcome => ({
  kind: 'signaled',
  signal: typeof signal === 'number' ? signal : constants.signals[signal],
});
const spawnFailed = (errno: string): Outcome => ({ kind: 'spawn-failed', errno, message: `spawn failed: ${errno}` });

describe('exit codes of the wrapper itself', () => {
  test('125, 126, 127 as in the shell and in env(1)', () => {
    assert.deepEqual([EXIT_WRAPPER_FAILED, EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND], [125, 126, 127]);
  });
});

describe('exitCodeFor', () => {
  const rows: [outcome: Outcome, code: number][] = [
    [exited(0), 0],
    [exited(1), 1],
    [exited(2), 2],
    [exited(125), 125],
    [exited(255), 255],
    [signaled('SIGKILL'), 137],
    [signaled('SIGTERM'), 143],
    [signaled('SIGSEGV'), 139],
    [signaled('SIGINT'), 130],
    [signaled('SIGHUP'), 129],
    [signaled('SIGABRT'), 134],
    [signaled('SIGPIPE'), 141],
    [signaled(34), 162],
    [signaled(40), 168],
    [signaled(64), 192],
    [spawnFailed('ENOENT'), 127],
    [spawnFailed('ENOTDIR'), 127],
    [spawnFailed('EACCES'), 126],
    [spawnFailed('ENOEXEC'), 126],
    [spawnFailed('EISDIR'), 126],
    [spawnFailed('EUNKNOWN'), 126],
  ];
  for (const [outcome, code] of rows) {
    test(`${JSON.stringify(outcome)} -> ${code}`, () => {
      assert.equal(exitCodeFor(outcome), code);
    });
  }
});

describe('signalExitCode', () => {
  const rows: [signal: NodeJS.Signals, code: number][] = [
    ['SIGHUP', 129],
    ['SIGINT', 130],
    ['SIGQUIT', 131],
    ['SIGKILL', 137],
    ['SIGUSR1', 138],
    ['SIGTERM', 143],
  ];
  for (const [signal, code] of rows) {
    test(`${signal} -> ${code}`, () => {
      assert.equal(signalExitCode(constants.signals[signal]), code);
    });
  }
});
