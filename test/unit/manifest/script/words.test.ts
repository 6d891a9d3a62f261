// Words as the shell expands them, each case as dash, bash and busybox's ash run it (the statuses were read from
// the shells): `${X:-w}`, `${X-w}`, `${X:=w}` and `${X:+w}`, variables of the container's env (unset where the
// manifest names all of them, not known where envFrom or valueFrom sets them), `set -u`, `exit N` modulo 256,
// `for x in ; do`, `unset -f`, here-documents read by `sh -s`, and aliases where the shell expands them.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Dialect } from '../../../../src/manifest/script/dialect.ts';
import { loadShellParser, readScript } from '../../../../src/manifest/script/shell.ts';

before(loadShellParser);

const QUIT = 'curl -fsS -XPOST http://127.0.0.1:15020/quitquitquit';

/** The statuses the script ends with when the job fails (or succeeds), by the shell DIALECT. */
function statuses(
  script: string,
  options: {
    dialect?: Dialect;
    env?: Record<string, string | undefined>;
    closed?: boolean;
    nounset?: boolean;
    world?: 'success' | 'failure';
  } = {},
): (number | undefined)[] {
  const facts = readScript(
    script,
    { errexit: false, dialect: options.dialect ?? 'dash', nounset: options.nounset ?? false },
    new Map(Object.entries(options.env ?? {})),
    options.closed ?? true,
  );
  return facts.outcome[options.world ?? 'failure'].map((path) => path.status);
}

/** The requests of a script, with where each goes and whether it runs when the job succeeds. */
const requests = (script: string, env: Record<string, string | undefined> = {}, closed = true, dialect: Dialect = 'dash') =>
  readScript(script, { errexit: false, dialect }, new Map(Object.entries(env)), closed).requests.map((request) => ({
    port: request.port,
    path: request.path,
    onSuccess: request.runs.onSuccess,
    conditional: request.runs.conditional,
  }));

describe('defaults and variables of the container', () => {
  test('${X:-w}, ${PORT:-15020}: the word where the container does not set X', () => {
    assert.deepEqual(requests(`./job; rc=$?; curl -fsS -X POST "\${ISTIO_QUIT_URL:-http://127.0.0.1:15020/quitquitquit}"; exit $rc`), [
      { port: 15020, path: '/quitquitquit', onSuccess: true, conditional: false },
    ]);
    assert.deepEqual(requests(`./job; rc=$?; curl -fsS -X POST "http://localhost:\${PORT:-15020}/quitquitquit"; exit $rc`), [
      { port: 15020, path: '/quitquitquit', onSuccess: true, conditional: false },
    ]);
  });

  test('${X-w} keeps an empty X; ${X:=w} assigns; ${X:+w} where X is set', () => {
    assert.deepEqual(statuses('X=; ./job; exit ${X-7}', { world: 'success' }), [0]);
    assert.deepEqual(statuses('./job; exit ${X-7}', { world: 'success' }), [7]);
    assert.deepEqual(statuses(': ${CODE:=5}; ./job; exit $CODE', { world: 'success' }), [5]);
    assert.deepEqual(statuses('X=1; ./job; exit ${X:+9}', { world: 'success' }), [9]);
    assert.deepEqual(statuses('X=abc; ./job; exit ${#X}', { world: 'success' }), [3]);
  });

  test('a variable the container does not set is empty: a quit behind it never runs', () => {
    assert.deepEqual(requests(`./job; rc=$?; [ -n "$ISTIO" ] && ${QUIT}; exit $rc`), [
      { port: 15020, path: '/quitquitquit', onSuccess: false, conditional: true },
    ]);
    assert.deepEqual(requests(`./job; rc=$?; if [ "$MESH" = istio ]; then ${QUIT}; fi; exit $rc`, { MESH: 'istio' }), [
      { port: 15020, path: '/quitquitquit', onSuccess: true, conditional: false },
    ]);
  });

  test('one envFrom or valueFrom could set is not known: both ways', () => {
    assert.deepEqual(requests(`./job; rc=$?; [ -n "$ISTIO" ] && ${QUIT}; exit $rc`, {}, false), [
      { port: 15020, path: '/quitquitquit', onSuccess: true, conditional: true },
    ]);
    assert.deepEqual(requests(`./job; rc=$?; [ -n "$ISTIO" ] && ${QUIT}; exit $rc`, { ISTIO: undefined }), [
      { port: 15020, path: '/quitquitquit', onSuccess: true, conditional: true },
    ]);
  });

  test("the runtime's own variables are not known (HOSTNAME, a Service's)", () => {
    assert.deepEqual(statuses('./job; [ -n "$HOSTNAME" ] && exit 4; exit 5', { world: 'success' }).sort(), [4, 5]);
    assert.deepEqual(statuses('./job; [ -n "$DB_SERVICE_HOST" ] && exit 4; exit 5', { world: 'success' }).sort(), [4, 5]);
  });
});

describe('set -u', () => {
  test('an unset variable ends the shell there: 2 in dash and ash, 127 in bash', () => {
    assert.deepEqual(statuses(`set -u; ./job; rc=$?; echo "$MISSING"; ${QUIT}; exit $rc`), [2]);
    assert.deepEqual(statuses(`set -u; ./job; rc=$?; echo "$MISSING"; ${QUIT}; exit $rc`, { dialect: 'ash' }), [2]);
    assert.deepEqual(statuses(`set -eu; ./job || rc=$?; echo "$MISSING"; exit 3`, { dialect: 'bash' }), [127]);
    assert.deepEqual(statuses(`./job; rc=$?; echo "$MISSING"; exit $rc`, { dialect: 'bash', nounset: true }), [127]);
  });

  test('not with a default, nor a variable the container sets, nor without set -u', () => {
    assert.deepEqual(statuses('set -u; ./job; rc=$?; echo "${MISSING:-}"; exit $rc'), [1]);
    assert.deepEqual(statuses('set -u; ./job; rc=$?; echo "$GIVEN"; exit $rc', { env: { GIVEN: 'x' } }), [1]);
    assert.deepEqual(statuses('./job; rc=$?; echo "$MISSING"; exit $rc'), [1]);
  });
});

describe('statuses', () => {
  test('exit N is N modulo 256; a negative or a word is 2 in dash and ash', () => {
    assert.deepEqual(statuses('./job; exit 256', { world: 'success' }), [0]);
    assert.deepEqual(statuses('./job; exit 257', { world: 'success' }), [1]);
    assert.deepEqual(statuses('./job; exit -1', { world: 'success' }), [2]);
    assert.deepEqual(statuses('./job; exit -1', { world: 'success', dialect: 'bash' }), [255]);
    assert.deepEqual(statuses('./job; exit abc', { world: 'success', dialect: 'bash' }), [2]);
  });

  test('for x in ; do runs its body no time', () => {
    assert.deepEqual(statuses('./job; for x in ; do exit 4; done; exit 5', { world: 'success' }), [5]);
  });

  test('unset -f: the function is gone, its call not found (127)', () => {
    assert.deepEqual(statuses(`stop() { ${QUIT}; }; unset -f stop; ./job; rc=$?; stop; exit $?`, { world: 'success' }), [127]);
    assert.deepEqual(
      readScript(`stop() { ${QUIT}; }; unset -f stop; ./job; rc=$?; stop; exit $rc`, { errexit: false }).requests.map(
        (r) => r.runs.onSuccess,
      ),
      [false],
    );
  });
});

describe('scripts in here-documents and aliases', () => {
  test('sh -s and bash reading a quoted here-document run it', () => {
    const script = `sh -s <<'EOF'\n./job; rc=$?\n${QUIT}\nexit $rc\nEOF\n`;
    assert.deepEqual(requests(script), [{ port: 15020, path: '/quitquitquit', onSuccess: true, conditional: false }]);
    assert.deepEqual(statuses(script), [1]);
    assert.deepEqual(statuses(`bash <<EOF\n./job\nexit 4\nEOF\n`), [4]);
  });

  test("an unquoted delimiter: the shell expands the here-document first (\\$ is the inner shell's $, $rc the outer's)", () => {
    const script = `sh -s <<EOF\n./job; rc=\\$?\n${QUIT}\nexit \\$rc\nEOF\n`;
    assert.deepEqual(requests(script), [{ port: 15020, path: '/quitquitquit', onSuccess: true, conditional: false }]);
    assert.deepEqual(statuses(script), [1]);
    // $rc unset when the outer shell expands it: `exit` with the quit's status.
    assert.deepEqual(statuses(`bash -s <<EOF\n./job; rc=$?\n${QUIT}\nexit $rc\nEOF\n`), [0]);
  });

  test('an alias is expanded by dash, ash and bash as sh, by bash only after shopt -s expand_aliases', () => {
    const script = `alias quit='${QUIT}'\n./job; rc=$?\nquit\nexit $rc`;
    assert.deepEqual(requests(script).length, 1);
    assert.deepEqual(requests(script, {}, true, 'ash').length, 1);
    assert.deepEqual(requests(script, {}, true, 'bash').length, 0);
    assert.deepEqual(requests(`shopt -s expand_aliases\n${script}`, {}, true, 'bash').length, 1);
  });
});
