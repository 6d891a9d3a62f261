import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { constants } from 'node:os';
import {
  ENDS_WAIT,
  FORWARDED,
  FROM_TERMINAL,
  NOT_FORWARDED,
  createSignalRouter,
  decide,
  type Action,
  type KillTarget,
  type Phase,
} from '../../src/signals.ts';
import { signals as exitSignals } from 'signal-exit/signals';
import { RecordingLogger } from './fakes.ts';

/** What each forwarded signal does while waiting, and while the command runs without and with a terminal. */
const EXPECTED: Readonly<Record<string, { before: Action; running: Action; onTerminal: Action }>> = {
  SIGHUP: { before: 'end-wait', running: 'forward', onTerminal: 'forward' },
  SIGINT: { before: 'end-wait', running: 'forward', onTerminal: 'leave-to-terminal' },
  SIGQUIT: { before: 'end-wait', running: 'forward', onTerminal: 'leave-to-terminal' },
  SIGTERM: { before: 'end-wait', running: 'forward', onTerminal: 'forward' },
  SIGUSR1: { before: 'ignore', running: 'forward', onTerminal: 'forward' },
  SIGUSR2: { before: 'ignore', running: 'forward', onTerminal: 'forward' },
  SIGWINCH: { before: 'ignore', running: 'forward', onTerminal: 'leave-to-terminal' },
  SIGALRM: { before: 'ignore', running: 'forward', onTerminal: 'forward' },
  SIGPWR: { before: 'ignore', running: 'forward', onTerminal: 'forward' },
};

function expectedAction(signal: NodeJS.Signals, phase: Phase, terminal: boolean): Action {
  const row = EXPECTED[signal] ?? assert.fail(`no expectation for ${signal}`);
  if (phase === 'after') return 'ignore';
  if (phase === 'before') return row.before;
  return terminal ? row.onTerminal : row.running;
}

describe('decide', () => {
  test('the table below covers exactly the forwarded signals', () => {
    assert.deepEqual(Object.keys(EXPECTED).sort(), [...FORWARDED].sort());
  });

  for (const signal of FORWARDED) {
    for (const phase of ['before', 'running', 'after'] as const) {
      for (const terminal of [false, true]) {
        const action = expectedAction(signal, phase, terminal);
        test(`${signal} ${phase}, ${terminal ? 'stdin a terminal' : 'no terminal'}: ${action}`, () => {
          assert.equal(decide(signal, phase, terminal), action);
        });
      }
    }
  }
});

describe('signal sets', () => {
  const subset = (small: readonly string[], big: readonly string[]): string[] => small.filter((s) => !big.includes(s));

  test('every signal that ends the wait is forwarded', () => {
    assert.deepEqual(subset(ENDS_WAIT, FORWARDED), []);
  });
  test('every signal a terminal sends is forwarded', () => {
    assert.deepEqual(subset(FROM_TERMINAL, FORWARDED), []);
  });
  test('forwarded and not forwarded are disjoint', () => {
    assert.deepEqual(
      FORWARDED.filter((s) => s in NOT_FORWARDED),
      [],
    );
  });
  test('FORWARDED has no duplicates', () => {
    assert.equal(new Set(FORWARDED).size, FORWARDED.length);
  });
  test('not forwarded: the wrapper-only and uncatchable signals', () => {
    const required = ['SIGCHLD', 'SIGURG', 'SIGPIPE', 'SIGKILL', 'SIGSTOP', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU', 'SIGSEGV'];
    assert.deepEqual(
      required.filter((s) => !(s in NOT_FORWARDED)),
      [],
    );
  });
  test('every signal on this platform has a decision: forwarded, or not with a reason', () => {
    const all = Object.keys(constants.signals).filter((s) => !s.startsWith('SIGRT'));
    const undecided = all.filter((s) => !FORWARDED.includes(s as NodeJS.Signals) && !(s in NOT_FORWARDED));
    assert.deepEqual(undecided, []);
  });
  test("every signal that ends a process by default (signal-exit's list) has a decision", () => {
    const undecided = exitSignals.filter((s) => !FORWARDED.includes(s) && !(s in NOT_FORWARDED));
    assert.deepEqual(undecided, []);
  });
  test('every listed signal exists on this platform', () => {
    const known = Object.keys(constants.signals);
    assert.deepEqual(
      [...FORWARDED, ...Object.keys(NOT_FORWARDED)].filter((s) => !known.includes(s)),
      [],
    );
  });
});

/** A command that records the signals it was sent. */
class RecordingTarget implements KillTarget {
  readonly sent: NodeJS.Signals[] = [];
  kill(signal: NodeJS.Signals): boolean {
    this.sent.push(signal);
    return true;
  }
}

function router({ terminal = false } = {}) {
  const source = new EventEmitter();
  const log = new RecordingLogger();
  const signals = createSignalRouter(source, log, () => terminal);
  const send = (...names: NodeJS.Signals[]): void => {
    for (const name of names) source.emit(name, name);
  };
  return { source, log, signals, send };
}

describe('createSignalRouter', () => {
  describe('before the command starts', () => {
    const rows: [signal: NodeJS.Signals, aborts: boolean][] = [
      ['SIGTERM', true],
      ['SIGINT', true],
      ['SIGHUP', true],
      ['SIGQUIT', true],
      ['SIGUSR1', false],
      ['SIGWINCH', false],
      ['SIGALRM', false],
    ];
    for (const [signal, aborts] of rows) {
      test(`${signal} ${aborts ? 'aborts the wait, with the signal as reason' : 'does not abort the wait'}`, () => {
        const { signals, send } = router();
        send(signal);
        assert.equal(signals.beforeStart.aborted, aborts);
        assert.equal(signals.beforeStart.reason, aborts ? signal : undefined);
      });
    }

    test('the first wait-ending signal is the reason; later ones change nothing', () => {
      const { signals, send, log } = router();
      send('SIGUSR1', 'SIGTERM', 'SIGINT');
      assert.equal(signals.beforeStart.reason, 'SIGTERM');
      assert.deepEqual(log.at('info'), ['received SIGTERM before the command started: not running it']);
    });

    test('a signal before the start is not replayed to the command', () => {
      const { signals, send } = router();
      const target = new RecordingTarget();
      send('SIGUSR1');
      signals.forwardTo(target);
      assert.deepEqual(target.sent, []);
    });
  });

  describe('while the command runs', () => {
    test('every signal is forwarded once, in the order received', () => {
      const { signals, send } = router();
      const target = new RecordingTarget();
      signals.forwardTo(target);
      send('SIGUSR1', 'SIGTERM', 'SIGUSR1', 'SIGHUP', 'SIGWINCH', 'SIGINT');
      assert.deepEqual(target.sent, ['SIGUSR1', 'SIGTERM', 'SIGUSR1', 'SIGHUP', 'SIGWINCH', 'SIGINT']);
      assert.equal(signals.beforeStart.aborted, false, 'a TERM while running does not end a wait');
    });

    test('with a terminal, the signals it sent the command itself are left alone', () => {
      const { signals, send } = router({ terminal: true });
      const target = new RecordingTarget();
      signals.forwardTo(target);
      send('SIGINT', 'SIGTERM', 'SIGQUIT', 'SIGWINCH', 'SIGUSR2');
      assert.deepEqual(target.sent, ['SIGTERM', 'SIGUSR2']);
    });

    const failing: [name: string, kill: () => boolean][] = [
      ['returns false', () => false],
      [
        'throws',
        () => {
          throw new Error('ESRCH');
        },
      ],
    ];
    for (const [name, kill] of failing) {
      test(`a target whose kill ${name} does not break the router`, () => {
        const { signals, send, log } = router();
        signals.forwardTo({ kill });
        assert.doesNotThrow(() => send('SIGTERM', 'SIGUSR1'));
        assert.deepEqual(log.at('debug'), [
          'could not forward SIGTERM: the command has already exited',
          'could not forward SIGUSR1: the command has already exited',
        ]);
      });
    }
  });

  describe('after the command ended', () => {
    test('nothing is forwarded, and the wait is not aborted', () => {
      const { signals, send } = router();
      const target = new RecordingTarget();
      signals.forwardTo(target);
      send('SIGUSR1');
      signals.stopForwarding();
      send('SIGTERM', 'SIGUSR2', 'SIGINT');
      assert.deepEqual(target.sent, ['SIGUSR1']);
      assert.equal(signals.beforeStart.aborted, false);
    });
  });

  test('listens to every forwarded signal once, and dispose removes every listener', () => {
    const { source, signals } = router();
    assert.deepEqual(
      FORWARDED.map((s) => source.listenerCount(s)),
      FORWARDED.map(() => 1),
    );
    signals.dispose();
    assert.deepEqual(
      FORWARDED.map((s) => source.listenerCount(s)),
      FORWARDED.map(() => 0),
    );
    assert.deepEqual(source.eventNames(), []);
  });

  test('after dispose a signal reaches no one', () => {
    const { signals, send } = router();
    const target = new RecordingTarget();
    signals.forwardTo(target);
    signals.dispose();
    send('SIGTERM');
    assert.deepEqual(target.sent, []);
  });
});
