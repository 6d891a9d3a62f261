// The table of constructs (src/manifest/script/dialect.ts) against the shells themselves: each construct is run
// in dash, bash, bash --posix (bash as sh) and busybox's ash, between two markers, and what the shell did is read
// back as a behaviour of the table; the shell that runs a container's script, from its command; and
// the outcome model running a script by each shell's rules.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Behaviour, CONSTRUCTS, type ConstructId, type Dialect, dialectOfProgram } from '../../../../src/manifest/script/dialect.ts';
import { loadShellParser, readScript } from '../../../../src/manifest/script/shell.ts';

/** How each dialect is started here. */
const SHELLS: Readonly<Record<Dialect, readonly string[]>> = {
  dash: ['dash'],
  ash: ['busybox', 'ash'],
  bash: ['bash'],
  'bash-posix': ['bash', '--posix'],
};

/** A line that uses each construct; `$?` after it tells its status. */
const SAMPLES: Readonly<Record<ConstructId, string>> = {
  'double-bracket': '[[ x == y ]]',
  'test-double-equals': '[ x == y ]',
  'function-keyword': 'function f { false; }; f',
  'here-string': 'cat <<< x >/dev/null',
  array: 'a=(1 2)',
  'process-substitution': 'cat <(true)',
  select: 'select x in a; do break; done </dev/null 2>/dev/null',
  'arithmetic-command': '(( 1 > 2 ))',
  'redirect-both': 'false &> /dev/null',
  'pattern-substitution': 'v=abc; : ${v/a/b}',
  substring: 'v=abc; : ${v:0:1}',
  'case-conversion': 'v=abc; : ${v^^}',
  indirection: 'v=abc; : ${!v}',
  subscript: 'false | true; : ${PIPESTATUS[0]}',
  source: 'source /dev/null',
  let: 'let x=1',
  declare: 'declare x=1',
  shopt: 'shopt -s nullglob',
  'local-outside-function': 'local x=1',
  'return-outside-function': 'return 3',
  'set-option': 'set -o errtrace',
};

const available = Object.values(SHELLS).every(
  ([program = '', ...args]) => spawnSync(program, [...args, '-c', 'true'], { stdio: 'ignore' }).status === 0,
);

let work = '';
before(() => {
  work = mkdtempSync(join(tmpdir(), 'dialect-'));
});
after(() => rmSync(work, { recursive: true, force: true }));

/**
 * What SHELL does with LINE, as the table says it, from the markers it printed, its status and whether it said an
 * error: a line whose status differs from bash's without a word on stderr is read otherwise (misread), and one
 * whose status is lost (0 where bash fails) is run in the background.
 */
function observed(shell: Dialect, line: string, asBash: string): Behaviour {
  const [program = '', ...args] = SHELLS[shell];
  const ran = spawnSync(program, [...args, '-c', `echo A\necho C; ${line}; echo "B $?"`], { cwd: work, encoding: 'utf8', timeout: 10_000 });
  const out = ran.stdout;
  if (!out.includes('C')) return 'syntax';
  const status = /B (\d+)/.exec(out)?.[1];
  if (status === undefined) return ran.status === 2 ? 'fatal' : 'exit';
  if (ran.stderr === '' && out === asBash) return 'ok';
  if (asBash.includes('B 1') && status === '0') return 'background';
  return Number(status);
}

/** A misread construct's status is whatever the words it is read as give: any status but bash's. */
const agrees = (seen: Behaviour, table: Behaviour, asBash: string): boolean =>
  table === 'misread' ? typeof seen === 'number' && !asBash.includes(`B ${seen}`) : seen === table;

describe('each construct of the table does in each shell what the table says', {
  skip: !available && 'needs dash, bash and busybox',
}, () => {
  for (const [id, construct] of Object.entries(CONSTRUCTS) as [ConstructId, (typeof CONSTRUCTS)[ConstructId]][]) {
    test(`${id}: ${construct.written}`, () => {
      const line = SAMPLES[id];
      const asBash = spawnSync('bash', ['-c', `echo A\necho C; ${line}; echo "B $?"`], { cwd: work, encoding: 'utf8' }).stdout;
      for (const shell of Object.keys(SHELLS) as Dialect[]) {
        const seen = observed(shell, line, asBash);
        assert.ok(
          agrees(seen, construct.behaviour[shell], asBash),
          `${shell} on ${line}: ${seen}, the table says ${construct.behaviour[shell]}`,
        );
      }
    });
  }
});

describe('which shell runs a script', () => {
  test('bash, dash and ash name themselves; busybox sh is ash; sh is the image', () => {
    assert.equal(dialectOfProgram('bash', 'dash'), 'bash');
    assert.equal(dialectOfProgram('dash', 'ash'), 'dash');
    assert.equal(dialectOfProgram('ash', 'dash'), 'ash');
    assert.equal(dialectOfProgram('sh', 'dash', true), 'ash');
    assert.equal(dialectOfProgram('sh', 'bash-posix'), 'bash-posix');
    assert.equal(dialectOfProgram('python3', 'dash'), undefined);
  });
});

describe('the outcome model runs a script by its shell', () => {
  before(loadShellParser);
  const QUIT = 'curl -fsS -XPOST http://127.0.0.1:15020/quitquitquit';
  const statuses = (script: string, dialect: Dialect, world: 'success' | 'failure' = 'failure') =>
    readScript(script, { errexit: false, dialect }).outcome[world].map((path) => path.status);
  const quits = (script: string, dialect: Dialect) => readScript(script, { errexit: false, dialect }).requests.map((r) => r.runs.onFailure);

  test('a syntax it lacks stops the shell with 2 before the line runs, after the lines before it', () => {
    assert.deepEqual(statuses(`./job; rc=$?\na=(1 2); ${QUIT}\nexit $rc`, 'dash'), [2]);
    assert.deepEqual(statuses(`./job; rc=$?\na=(1 2); ${QUIT}\nexit $rc`, 'bash'), [1]);
    assert.deepEqual(quits(`./job; rc=$?\ncat <<< x; ${QUIT}\nexit $rc`, 'ash'), [false]);
    assert.deepEqual(quits(`./job; rc=$?\ncat <(true); ${QUIT}\nexit $rc`, 'ash'), [true]);
  });

  test('a builtin it lacks is command not found, a bad substitution and an option it lacks end it with 2', () => {
    assert.deepEqual(statuses(`./job\n[[ -f x ]]`, 'dash'), [127]);
    assert.deepEqual(statuses(`./job | tee log; rc=\${PIPESTATUS[0]}; ${QUIT}; exit $rc`, 'dash'), [2]);
    assert.deepEqual(statuses(`set -o errtrace; ./job; rc=$?; ${QUIT}; exit $rc`, 'dash'), [2]);
    assert.deepEqual(statuses(`set -o errtrace; ./job; rc=$?; ${QUIT}; exit $rc`, 'ash'), [1]);
    assert.deepEqual(statuses(`./job; if [ $? == 0 ]; then exit 0; fi; exit 4`, 'dash', 'success'), [4]);
  });

  test('return outside a function: exit in dash and ash, a failed command in bash, fatal in bash as sh', () => {
    assert.deepEqual(statuses('./job; return 3; exit 4', 'dash'), [3]);
    assert.deepEqual(statuses('./job; return 3; exit 4', 'bash'), [4]);
    assert.deepEqual(statuses('./job; return 3; exit 4', 'bash-posix'), [2]);
  });

  test('`cmd &> file` in dash runs cmd in the background: its status is lost', () => {
    assert.deepEqual(statuses('./job &> log; exit $?', 'dash'), [0]);
    assert.deepEqual(statuses('./job &> log; exit $?', 'ash'), [1]);
  });

  test("a nested bash -c runs by bash, a nested sh -c by the image's sh", () => {
    assert.deepEqual(statuses(`bash -c '[[ -n x ]] && ./job'; exit $?`, 'dash'), [1]);
    assert.deepEqual(
      readScript(`sh -c '[[ -n x ]] && ./job'; exit $?`, { errexit: false, dialect: 'bash', sh: 'dash' }).outcome.failure.map(
        (p) => p.status,
      ),
      [127],
    );
  });
});
