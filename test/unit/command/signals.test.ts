import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { constants } from 'node:os';
import {
  ENDS_WAIT,
  FORWARDED,
  FROM_TERMINAL,
  NOT_FORWARDED,
  FAULTS,
  createSignalRouter,
  decide,
  type Action,
  type KillTarget,
  type Phase,
  REALTIME_FIRST,
  REALTIME_LAST,
  signalName,
  signalNumber,
  unusedSignalNumbers,
  unusedSignals,
} from '../../../src/command/signals.ts';
import { signals as exitSignals } from 'signal-exit/signals';
import { RecordingLogger } from '../fakes.ts';

/** What each forwarded signal does while waiting, and while the command runs without and with a terminal. */
const EXPECTED: Readonly<Record<string, { before: Action; starting: Action; running: Action; onTerminal: Action }>> = {
  SIGHUP: { before: 'end-wait', starting: 'forward', running: 'forward', onTerminal: 'forward' },
  SIGINT: { before: 'end-wait', starting: 'forward', running: 'forward', onTerminal: 'leave-to-terminal' },
  SIGQUIT: { before: 'end-wait', starting: 'forward', running: 'forward', onTerminal: 'leave-to-terminal' },
  SIGTERM: { before: 'end-wait', starting: 'forward', running: 'forward', onTerminal: 'forward' },
  SIGUSR1: { before: 'ignore', starting: 'ignore', running: 'forward', onTerminal: 'forward' },
  SIGUSR2: { before: 'ignore', starting: 'ignore', running: 'forward', onTerminal: 'forward' },
  SIGWINCH: { before: 'ignore', starting: 'ignore', running: 'forward', onTerminal: 'leave-to-terminal' },
  SIGALRM: { before: 'ignore', starting: 'ignore', running: 'forward', onTerminal: 'forward' },
  SIGPWR: { before: 'ignore', starting: 'ignore', running: 'forward', onTerminal: 'forward' },
};

function expectedAction(signal: NodeJS.Signals, phase: Phase, terminal: boolean): Action {
  const row = EXPECTED[signal] ?? assert.fail(`no expectation for ${signal}`);
  if (phase === 'after') return 'ignore';
  if (phase === 'before') return row.before;
  if (phase === 'starting') return row.starting;
  return terminal ? row.onTerminal : row.running;
}

describe('decide', () => {
  test('the table below covers exactly the forwarded signals', () => {
    assert.deepEqual(Object.keys(EXPECTED).sort(), [...FORWARDED].sort());
  });

  for (const signal of FORWARDED) {
    for (const phase of ['before', 'starting', 'running', 'after'] as const) {
      for (const terminal of [false, true]) {
        const action = expectedAction(signal, phase, terminal);
        test(`${signal} ${phase}, ${terminal ? 'sent by a terminal' : 'sent by kill(2)'}: ${action}`, () => {
          assert.equal(decide(signalNumber(signal), phase, terminal), action);
        });
      }
    }
  }
});

describe('decide: the rest of 1-64', () => {
  for (let signal = REALTIME_FIRST; signal <= REALTIME_LAST; signal++) {
    test(`real-time signal ${signal}: forwarded while running, from a terminal or not; ignored before and after`, () => {
      assert.deepEqual(
        [
          decide(signal, 'before', false),
          decide(signal, 'running', false),
          decide(signal, 'running', true),
          decide(signal, 'after', false),
        ],
        ['ignore', 'forward', 'forward', 'ignore'],
      );
    });
  }
  for (const name of Object.keys(NOT_FORWARDED)) {
    test(`${name} is never forwarded, in any phase`, () => {
      const signal = signalNumber(name);
      assert.deepEqual(
        (['before', 'running', 'after'] as const).map((phase) => decide(signal, phase, false)),
        ['ignore', 'ignore', 'ignore'],
      );
    });
  }
  for (const name of FAULTS) {
    test(`${name} sent by a process is forwarded while the command runs and held otherwise; sent by the kernel, never`, () => {
      const signal = signalNumber(name);
      assert.deepEqual(
        [
          decide(signal, 'before', false),
          decide(signal, 'starting', false),
          decide(signal, 'running', false),
          decide(signal, 'after', false),
          decide(signal, 'running', true),
        ],
        ['ignore', 'ignore', 'forward', 'ignore', 'ignore'],
      );
    });
  }
  test('faults and the other signals are disjoint', () => {
    assert.deepEqual(
      FAULTS.filter((s) => FORWARDED.includes(s) || s in NOT_FORWARDED),
      [],
    );
  });
  test('signalName names what Node names (the first of two names), and numbers the rest', () => {
    assert.deepEqual([signalName(6), signalName(29)], ['SIGABRT', 'SIGIO']);
    assert.deepEqual([signalName(15), signalName(40), signalName(64)], ['SIGTERM', 'signal 40', 'signal 64']);
  });
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
    const required = ['SIGCHLD', 'SIGURG', 'SIGPIPE', 'SIGKILL', 'SIGSTOP', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU'];
    assert.deepEqual(
      required.filter((s) => !(s in NOT_FORWARDED)),
      [],
    );
  });
  test('every signal on this platform has a decision: forwarded, or not with a reason', () => {
    const all = Object.keys(constants.signals).filter((s) => !s.startsWith('SIGRT'));
    const undecided = all.filter(
      (s) => !FORWARDED.includes(s as NodeJS.Signals) && !FAULTS.includes(s as NodeJS.Signals) && !(s in NOT_FORWARDED),
    );
    assert.deepEqual(undecided, []);
  });
  test("every signal that ends a process by default (signal-exit's list) has a decision", () => {
    const undecided = exitSignals.filter((s) => !FORWARDED.includes(s) && !FAULTS.includes(s) && !(s in NOT_FORWARDED));
    assert.deepEqual(undecided, []);
  });
  test('every listed signal exists on this platform', () => {
    const known = Object.keys(constants.signals);
    assert.deepEqual(
      [...FORWARDED, ...FAULTS, ...Object.keys(NOT_FORWARDED)].filter((s) => !known.includes(s)),
      [],
    );
  });
});

/** A command that records the signals it was sent. */
class RecordingTarget implements KillTarget {
  readonly sent: string[] = [];
  kill(signal: number): boolean {
    this.sent.push(signalName(signal));
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
        assert.equal(signals.beforeStart.reason, aborts ? signalNumber(signal) : undefined);
      });
    }

    test('the first wait-ending signal is the reason; later ones change nothing', () => {
      const { signals, send, log } = router();
      send('SIGUSR1', 'SIGTERM', 'SIGINT');
      assert.equal(signals.beforeStart.reason, signalNumber('SIGTERM'));
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

  test('listens to every forwarded signal once, for the whole life of the process', () => {
    const { source, signals } = router();
    assert.deepEqual(
      FORWARDED.map((s) => source.listenerCount(s)),
      FORWARDED.map(() => 1),
    );
    signals.stopForwarding();
    assert.deepEqual(
      FORWARDED.map((s) => source.listenerCount(s)),
      FORWARDED.map(() => 1),
    );
  });

  describe('asked for, not yet started (the launcher has not said "started")', () => {
    test('a signal read before the command exists reached the wrapper before it: USR1 ignored, TERM forwarded once it runs', () => {
      const { signals } = router();
      const sent: string[] = [];
      const target = { started: false, kill: (signal: number) => sent.push(signalName(signal)) > 0 };
      signals.forwardTo(target);
      signals.receive(signalNumber('SIGUSR1'), false);
      signals.receive(signalNumber('SIGTERM'), false);
      target.started = true;
      signals.receive(signalNumber('SIGUSR1'), false);
      assert.deepEqual(sent, ['SIGTERM', 'SIGUSR1']);
      assert.equal(signals.beforeStart.aborted, false, 'the wait is over: the command is being started');
    });
  });

  describe('relayed by the launcher, which knows who sent each', () => {
    test("a kill(2) of INT, QUIT or WINCH is forwarded even with a terminal; the terminal's own are left alone", () => {
      const { signals } = router({ terminal: true });
      const target = new RecordingTarget();
      signals.forwardTo(target);
      for (const [name, fromTerminal] of [
        ['SIGINT', false],
        ['SIGINT', true],
        ['SIGQUIT', false],
        ['SIGWINCH', true],
        ['SIGWINCH', false],
      ] as const) {
        signals.receive(signalNumber(name), fromTerminal);
      }
      assert.deepEqual(target.sent, ['SIGINT', 'SIGQUIT', 'SIGWINCH']);
    });
    test('a real-time signal is forwarded by number', () => {
      const { signals } = router();
      const target = new RecordingTarget();
      signals.forwardTo(target);
      signals.receive(40, false);
      signals.receive(64, false);
      assert.deepEqual(target.sent, ['signal 40', 'signal 64']);
    });
    test('one the launcher passed on to the running command itself is only noted: never sent again', () => {
      const { signals, log } = router();
      const target = new RecordingTarget();
      signals.forwardTo(target);
      signals.passedOn(signalNumber('SIGTERM'));
      signals.passedOn(40);
      assert.deepEqual(target.sent, []);
      assert.equal(signals.beforeStart.aborted, false);
      assert.deepEqual(
        log.lines.map(({ level, message }) => `${level}: ${message}`),
        ['debug: forwarded SIGTERM', 'debug: forwarded signal 40'],
      );
    });
    test("a terminal's Ctrl-C before the start ends the wait", () => {
      const { signals } = router();
      signals.receive(signalNumber('SIGINT'), true);
      assert.equal(signals.beforeStart.reason, signalNumber('SIGINT'));
    });
  });
});

describe('what the wrapper has no use for', () => {
  const unused = unusedSignals(FORWARDED);
  test("every signal that ends a process by default (signal-exit's list) is forwarded, unused, a fault or KILL", () => {
    const left = exitSignals.filter((s) => !FORWARDED.includes(s) && !unused.includes(s) && !FAULTS.includes(s) && s !== 'SIGKILL');
    assert.deepEqual(left, []);
  });
  test('none forwarded, a fault, KILL or one that spares a process by default', () => {
    const spares = ['SIGCHLD', 'SIGURG', 'SIGWINCH', 'SIGCONT', 'SIGSTOP', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU'];
    assert.deepEqual(
      unused.filter((s) => FORWARDED.includes(s) || FAULTS.includes(s) || s === 'SIGKILL' || spares.includes(s)),
      [],
    );
  });
  test('by number: the named ones and every real-time signal, 32-64', () => {
    const numbers = unusedSignalNumbers(FORWARDED);
    assert.deepEqual(
      numbers.filter((n) => n < 32),
      [...new Set(unused.map(signalNumber))].sort((a, b) => a - b),
    );
    assert.deepEqual(
      numbers.filter((n) => n >= 32),
      Array.from({ length: 33 }, (_, i) => 32 + i),
    );
  });
  test('a tool, which acts on TERM, INT and HUP alone, has no use for the forwarded rest either', () => {
    assert.deepEqual(
      unusedSignals(['SIGTERM', 'SIGINT', 'SIGHUP']).filter((s) => !unused.includes(s)),
      FORWARDED.filter((s) => !['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGWINCH'].includes(s)),
    );
  });
});
