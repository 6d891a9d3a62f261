// The table of programs that run a command, one line a reading: a program's words -> where its command starts.
// Where the program is installed here (tini, dumb-init, catatonit, coreutils, util-linux's setsid), each line is
// also run for real with `echo` as the command: the program must run echo with exactly the words after it.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import {
  commandStart,
  PROGRAMS,
  quitsItself,
  SIDECAR_CALLS,
  sidecarCommand,
  stopSwitch,
  TOMBSTONE_WRAPPERS,
  wrapperKind,
  wrapperStops,
} from '../../../../src/manifest/script/programs.ts';

/** `program args...` -> the index among the args where the command starts (past the end: none). */
const READINGS: readonly (readonly [string, number])[] = [
  ['tini -- echo ran', 1],
  ['tini -e 143 -- echo ran', 3],
  ['tini -p SIGTERM -- echo ran', 3],
  ['tini -e143 -s echo ran', 2],
  ['tini -s -g -w echo ran', 3],
  ['tini-static -p SIGKILL echo ran', 2],
  ['catatonit -g -- echo ran', 2],
  ['dumb-init --rewrite 15:2 -- echo ran', 3],
  ['dumb-init --rewrite=15:2 echo ran', 1],
  ['dumb-init -c -r 15:2 echo ran', 3],
  ['dumb-init --single-child echo ran', 1],
  ['timeout 60 echo ran', 1],
  ['timeout -s KILL -k 5 60 echo ran', 5],
  ['timeout --signal=TERM --preserve-status 60 echo ran', 3],
  ['timeout -k1 --foreground 60 echo ran', 3],
  ['env A=1 B=2 echo ran', 2],
  ['env -u HOME -C / A=1 echo ran', 5],
  ['env - A=1 echo ran', 2],
  ['env --unset HOME -i echo ran', 3],
  ['nice -n 5 echo ran', 2],
  ['nice --adjustment 5 echo ran', 2],
  ['nohup echo ran', 0],
  ['stdbuf -oL -e 0 echo ran', 3],
  ['stdbuf --output L echo ran', 2],
  ['setsid -w echo ran', 1],
  ['setsid --fork --wait echo ran', 2],
  ['linkerd-await --shutdown -- echo ran', 2],
  ['linkerd-await -S --port 4191 echo ran', 3],
  ['linkerd-await --timeout=2m -v echo ran', 2],
  ['scuttle echo ran', 0],
  ['kubexit -x echo ran', 0],
];

/** `wrapper args...` -> the sidecars it stops, and whether it tells them to quit itself. */
const STOPS: readonly (readonly [string, readonly string[] | 'all', boolean])[] = [
  ['linkerd-await --shutdown -- ./job', ['linkerd'], true],
  ['linkerd-await -S ./job', ['linkerd'], true],
  ['linkerd-await -- ./job', [], false],
  ['scuttle ./job', 'all', true],
  ['kubexit ./job', 'all', false],
  ['tini -- ./job', [], false],
];

describe('the table of programs: what a wrapper stops', () => {
  for (const [line, stops, itself] of STOPS) {
    const [program = '', ...args] = line.split(' ');
    test(`${line} -> ${JSON.stringify(stops)}${itself ? ', by a quit of its own' : ''}`, () => {
      assert.deepEqual(wrapperStops(program, args), stops);
      assert.equal(quitsItself(program, args), itself);
    });
  }
});

describe('the table of programs: the one kind a wrapper is made for, and the switch that makes it stop it', () => {
  for (const [program, kind, switched] of [
    ['linkerd-await', 'linkerd', '--shutdown'],
    ['scuttle', undefined, undefined],
    ['kubexit', undefined, undefined],
    ['tini', undefined, undefined],
  ] as const)
    test(`${program} -> ${kind ?? 'any or none'}, ${switched ?? 'no switch'}`, () => {
      assert.equal(wrapperKind(program), kind);
      assert.equal(stopSwitch(program), switched);
    });
});

/** A sidecar's own program and its words -> what it sends, and where its subcommand is. */
const SIDECAR_COMMANDS: readonly (readonly [string, string | undefined, number?])[] = [
  ['cloud-sql-proxy shutdown', 'quit', 0],
  ['cloud-sql-proxy shutdown --admin-port 9092', 'quit', 0],
  ['alloydb-auth-proxy shutdown', 'quit', 0],
  ['pilot-agent request POST quitquitquit', 'request', 0],
  ['pilot-agent wait --timeoutSeconds 60', 'ready', 0],
  ['pilot-agent proxy sidecar', undefined],
  ['cloud-sql-proxy my-project:region:db', undefined],
];

describe("the table of programs: a sidecar's own commands", () => {
  for (const [line, sends, at] of SIDECAR_COMMANDS) {
    const [program = '', ...args] = line.split(' ');
    test(`${line} -> ${sends ?? 'nothing'}`, () => {
      const command = sidecarCommand(program, args);
      assert.deepEqual(command === undefined ? undefined : [command.sends, command.at], sends === undefined ? undefined : [sends, at]);
    });
  }
  test('the subcommands that may quit a sidecar: each but a wait for ready', () => {
    const quitting = SIDECAR_COMMANDS.filter(([, sends]) => sends === 'quit' || sends === 'request').map(([line]) =>
      line.split(' ').slice(0, 2),
    );
    assert.deepEqual(
      [...SIDECAR_CALLS].flatMap(([program, subcommands]) => subcommands.map((subcommand) => [program, subcommand])),
      [...new Map(quitting.map((pair) => [pair.join(' '), pair])).values()],
    );
  });
});

test('the wrappers that stop sidecars by a tombstone: kubexit', () => assert.deepEqual(TOMBSTONE_WRAPPERS, ['kubexit']));

/** Whether PROGRAM is installed here. */
const installed = (program: string): boolean => spawnSync('sh', ['-c', `command -v ${program}`], { timeout: 5000 }).status === 0;

describe('the table of programs: where the command starts', () => {
  for (const [line, start] of READINGS) {
    const [program = '', ...args] = line.split(' ');
    test(`${line} -> ${args[start] ?? '(none)'}`, () => {
      assert.ok(PROGRAMS.has(program), `${program} is in the table`);
      assert.equal(commandStart(program, args), start);
    });
  }
  test('every program of the table has a reading', () => {
    const read = new Set(READINGS.map(([line]) => line.split(' ')[0]));
    assert.deepEqual(
      [...PROGRAMS.keys()].filter((program) => !read.has(program)),
      [],
    );
  });
});

describe('the readings against the real programs installed here', () => {
  for (const [line, start] of READINGS) {
    const [program = '', ...args] = line.split(' ');
    test(line, { skip: !installed(program) && `${program} is not installed here` }, () => {
      assert.equal(args[start], 'echo');
      const run = spawnSync(program, args, { encoding: 'utf8', timeout: 10_000, env: { ...process.env, TINI_SUBREAPER: '1' } });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout, `${args.slice(start + 1).join(' ')}\n`);
    });
  }
});
