// Every signal sent to the launcher while the command runs reaches the command once, passed on by the launcher
// itself, and the wrapper is told of it once; the launcher sends nothing of its own.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FORWARDED } from '../../../src/command/signals.ts';
import { buildLauncher, launch, LAUNCHER_LIVES } from './support.ts';

const launcher = buildLauncher();
const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-launcher-signals-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const SIGNALS = [...FORWARDED.map((name) => constants.signals[name]), 34, 50, 64];

test('each forwarded signal, real-time ones too, reaches the command once, and the wrapper hears of it once', async () => {
  const stop = join(scratch, 'stop');
  const traps = SIGNALS.map((signal) => `trap 'echo signal ${signal}' ${signal};`).join(' ');
  const script = `${traps} echo ready; while [ ! -e '${stop}' ] && ${LAUNCHER_LIVES}; do sleep 0.01; done; exit 3`;
  const running = launch(launcher, ['run'], ['/bin/sh', '-c', script]);
  await running.line(/^ready$/, 'stdout');
  for (const signal of SIGNALS) {
    process.kill(running.pid, signal);
    await running.line(new RegExp(`^signal ${signal}$`), 'stdout');
  }
  writeFileSync(stop, '');
  const result = await running.finished;
  assert.equal(result.code, 3, result.stderr);
  assert.doesNotMatch(result.stderr, /^fake: signal /m, 'none left to the wrapper to forward');
  for (const signal of SIGNALS) {
    assert.equal(result.stdout.split('\n').filter((line) => line === `signal ${signal}`).length, 1, `${signal} once to the command`);
    assert.equal(
      result.stderr.split('\n').filter((line) => line === `fake: passed ${signal}`).length,
      1,
      `${signal} told once to the wrapper`,
    );
  }
});
