// main() with every outside part faked: the invariant on the paths a real process can hardly reach
// (an internal error, an HTTP client that fails to load), and the order of the steps.

import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, test } from 'node:test';
import type { Child } from '../../src/command/child.ts';
import type { Outcome } from '../../src/command/exit-code.ts';
import { main, type System } from '../../src/main.ts';
import { createSignalRouter } from '../../src/command/signals.ts';
import { RecordingLogger, ScriptedHttp, VirtualClock, response, type Step } from './fakes.ts';

const READY = 'http://127.0.0.1:15021/healthz/ready';
const QUIT = 'http://127.0.0.1:15020/quitquitquit';

interface Harness {
  readonly sys: System;
  readonly http: ScriptedHttp;
  readonly log: RecordingLogger;
  readonly signals: EventEmitter;
  readonly started: (readonly string[])[];
  readonly stdout: string[];
}

function harness(
  argv: string[],
  options: {
    ready?: Step[];
    outcome?: Outcome;
    startChild?: (command: readonly string[]) => Child;
    loadHttp?: () => Promise<ScriptedHttp>;
    env?: Readonly<Record<string, string>>;
  } = {},
): Harness {
  const clock = new VirtualClock();
  const http = new ScriptedHttp(clock, { [READY]: options.ready ?? [response(200)], [QUIT]: [response(200, 'OK')] });
  const log = new RecordingLogger();
  const signals = new EventEmitter();
  const started: (readonly string[])[] = [];
  const stdout: string[] = [];
  const sys: System = {
    argv,
    env: options.env ?? { KUBERNETES_SERVICE_HOST: '10.0.0.1' },
    version: '1.2.3',
    log,
    signals: createSignalRouter(signals, log, () => false),
    clock,
    writeStdout: (text) => void stdout.push(text),
    loadHttp: options.loadHttp ?? (async () => http),
    install: () => 0,
    startChild:
      options.startChild ??
      ((command) => {
        started.push(command);
        return { pid: 42, outcome: Promise.resolve(options.outcome ?? { kind: 'exited', code: 0 }), kill: () => true };
      }),
  };
  return { sys, http, log, signals, started, stdout };
}

const posts = (h: Harness): number => h.http.calls.filter((call) => call.method === 'POST').length;

describe('main', () => {
  test('the steps in order: wait until ready, run, quit, exit with the command code', async () => {
    const h = harness(['--', 'job', '--flag'], { ready: [response(503), response(200)], outcome: { kind: 'exited', code: 4 } });
    assert.equal(await main(h.sys), 4);
    assert.deepEqual(h.started, [['job', '--flag']]);
    assert.deepEqual(
      h.http.calls.map((call) => `${call.method} ${call.url}`),
      [`GET ${READY}`, `GET ${READY}`, `POST ${QUIT}`],
    );
    assert.deepEqual(h.stdout, []);
  });

  test('an internal error before the command ran: exit 125, logged, and the quit still attempted', async () => {
    const h = harness(['job'], {
      startChild: () => {
        throw new Error('spawn exploded');
      },
    });
    assert.equal(await main(h.sys), 125);
    assert.ok(h.log.at('error').some((line) => line.includes('internal error') && line.includes('spawn exploded')));
    assert.equal(posts(h), 1);
  });

  test('an HTTP client that fails to load: exit 125, no command, and a warning instead of a crash', async () => {
    const h = harness(['job'], { loadHttp: () => Promise.reject(new Error('no undici')) });
    assert.equal(await main(h.sys), 125);
    assert.deepEqual(h.started, []);
    assert.ok(h.log.at('warn').some((line) => line.includes('could not tell the proxy to quit: no undici')));
  });

  test('TERM during the wait: no command, quit, 143', async () => {
    const never: Step = async (call, clock) => {
      await clock.sleep(call.timeoutMs, call.cancel);
      return call.cancel?.aborted === true ? { kind: 'aborted' } : response(503);
    };
    const h = harness(['job'], { ready: [never] });
    const result = main(h.sys);
    await new Promise((resolve) => setImmediate(resolve));
    h.signals.emit('SIGTERM', 'SIGTERM');
    assert.equal(await result, 143);
    assert.deepEqual(h.started, []);
    assert.equal(posts(h), 1);
  });

  test('--help and --version write to stdout and never quit', async () => {
    for (const flag of ['--help', '--version']) {
      const h = harness([flag, 'job']);
      assert.equal(await main(h.sys), 0);
      assert.equal(h.stdout.length, 1);
      assert.equal(h.http.calls.length, 0);
      assert.deepEqual(h.started, []);
    }
  });

  test('the quit outcome never changes the exit code: a rejected quit after exit 0 is still 0', async () => {
    const h = harness(['job']);
    const rejecting = new ScriptedHttp(h.sys.clock, { [READY]: [response(200)], [QUIT]: [response(404, '404 page not found\n')] });
    assert.equal(await main({ ...h.sys, loadHttp: async () => rejecting }), 0);
    assert.ok(h.log.at('warn').some((line) => line.includes('rejected the quit')));
  });

  test("scuttle's variables: one info line says which are in effect, right after the level is set", async () => {
    const h = harness(['job'], {
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', NEVER_KILL_ISTIO_ON_FAILURE: 'true', SCUTTLE_LOGGING: 'false' },
    });
    assert.equal(await main(h.sys), 0);
    const said = h.log.lines.filter((line) => line.message.startsWith('scuttle settings:'));
    assert.deepEqual(
      said.map((line) => [line.level, line.message]),
      [['info', 'scuttle settings: NEVER_KILL_ISTIO_ON_FAILURE -> --quit on-success, SCUTTLE_LOGGING -> --log-level warn']],
    );
    assert.equal(h.log.lines[0], said[0], 'the first line');
    assert.deepEqual(h.log.configured, { level: 'warn', format: 'text' });
  });

  test('no scuttle variable, no scuttle line', async () => {
    const h = harness(['job']);
    assert.equal(await main(h.sys), 0);
    assert.deepEqual(
      h.log.lines.filter((line) => line.message.includes('scuttle')),
      [],
    );
  });

  test('a bad scuttle value: exit 125, the error names it, the good ones are still reported, and the quit goes to ISTIO_QUIT_API', async () => {
    const quit = 'http://127.0.0.1:25020/quitquitquit';
    const h = harness(['job'], {
      env: { ENVOY_ADMIN_API: 'http://127.0.0.1:15000', ISTIO_QUIT_API: 'http://127.0.0.1:25020', WAIT_FOR_ENVOY_TIMEOUT: 'soon' },
    });
    const http = new ScriptedHttp(h.sys.clock, { [quit]: [response(200, 'OK')] });
    assert.equal(await main({ ...h.sys, loadHttp: async () => http }), 125);
    assert.deepEqual(h.started, []);
    assert.deepEqual(h.log.at('error'), ['WAIT_FOR_ENVOY_TIMEOUT: "soon" is not a duration (examples: 500ms, 30s, 2m)']);
    assert.ok(
      h.log
        .at('info')
        .includes(
          'scuttle settings: ENVOY_ADMIN_API -> --ready-url http://127.0.0.1:15000/ready, ISTIO_QUIT_API -> --quit-url http://127.0.0.1:25020/quitquitquit',
        ),
    );
    assert.deepEqual(
      http.calls.map((call) => `${call.method} ${call.url}`),
      [`POST ${quit}`],
    );
  });
});

describe('--help and --version into a stdout that fails', () => {
  const failing = (code: string) => () => {
    throw Object.assign(new Error(`${code}: it failed, write`), { code });
  };
  for (const flag of ['--help', '--version']) {
    test(`${flag}, ENOSPC: exit 125 and one error line naming stdout`, async () => {
      const h = harness([flag]);
      assert.equal(await main({ ...h.sys, writeStdout: failing('ENOSPC') }), 125);
      assert.equal(h.log.at('error').length, 1);
      assert.match(h.log.at('error')[0] ?? '', /^cannot write the (help|version) to stdout: ENOSPC/);
    });

    test(`${flag}, EPIPE (the reader left): exit 0, nothing said`, async () => {
      const h = harness([flag]);
      assert.equal(await main({ ...h.sys, writeStdout: failing('EPIPE') }), 0);
      assert.deepEqual(h.log.at('error'), []);
    });
  }
});
