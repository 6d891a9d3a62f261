// The built executable on its own: the interface, exit codes, stdio, and the modes that use no HTTP.

import assert from 'node:assert/strict';
import { chmodSync, closeSync, mkdtempSync, openSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Sidecar } from '../support/sidecar.ts';
import { cleanEnv, NODE, REPORTER, run, start, WRAPPER, wrapper } from '../support/process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-cli-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const none = ['--sidecar', 'none', '--'];

describe('interface', () => {
  test('--version prints the version on stdout and exits 0', async () => {
    const result = await run(['--version']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /^istio-job-run \d+\.\d+\.\d+\n$/);
    assert.equal(result.stderr, '');
  });

  test('--help lists every option and variable on stdout', async () => {
    const result = await run(['--help']);
    assert.equal(result.code, 0);
    for (const text of [
      '--sidecar',
      '--ready-url',
      '--ready-timeout',
      '--poll-interval',
      '--request-timeout',
      '--start-without-proxy',
      '--no-wait',
      '--quit-url',
      '--quit ',
      '--quit-timeout',
      '--log-level',
      '--log-format',
      'ISTIO_JOB_RUN_WAIT',
      'ISTIO_JOB_RUN_QUIT_URL',
      'ISTIO_JOB_RUN_SIDECAR_STATUS',
    ]) {
      assert.ok(result.stdout.includes(text), `--help mentions ${text}`);
    }
    assert.equal(result.stderr, '');
  });

  for (const flag of ['--version', '--help']) {
    test(`${flag} into a stdout that cannot take it (/dev/full): exit 125 and one line saying so`, async () => {
      const full = openSync('/dev/full', 'w');
      try {
        const result = await run([flag], { stdio: ['pipe', full, 'pipe'] });
        assert.equal(result.code, 125);
        assert.match(result.stderr, /^istio-job-run: cannot write the (version|help) to stdout: ENOSPC\b.*\n$/);
      } finally {
        closeSync(full);
      }
    });
  }

  test('--help into a pipe whose reader has left (EPIPE): exit 0 and nothing said, like `--help | head -1`', async () => {
    // A FIFO opened for reading and writing, then for writing, then its reader closed: a writer without a reader.
    const script = 'mkfifo "$1/pipe" && exec 3<>"$1/pipe" 4>"$1/pipe" 3<&- && exec "$0" --help >&4 4>&-';
    const dir = mkdtempSync(join(scratch, 'epipe-'));
    const result = await start('sh', ['-c', script, WRAPPER, dir]).finished;
    assert.deepEqual([result.code, result.stderr], [0, '']);
  });

  test("options stop at the first non-option: the command's own --help reaches it", async () => {
    const result = await run(['--sidecar', 'none', 'printf', '%s|', '--help', '--version', '--', '-x']);
    assert.equal(result.code, 0);
    assert.equal(result.stdout, '--help|--version|--|-x|');
  });

  test('options stop at --', async () => {
    const result = await run([...none, 'printf', '%s|', '--sidecar', 'classic']);
    assert.equal(result.stdout, '--sidecar|classic|');
  });

  test('a switch never swallows the command: --no-wait true runs true', async () => {
    const result = await run(['--sidecar', 'none', '--no-wait', 'sh', '-c', 'echo ran']);
    assert.equal(result.stdout, 'ran\n');
    const asTrue = await run(['--sidecar', 'none', '--start-without-proxy', 'true']);
    assert.equal(asTrue.code, 0);
  });

  const usageErrors: [string, string[], Record<string, string>, RegExp][] = [
    [
      'a bad duration',
      ['--ready-timeout', 'soon', 'true'],
      {},
      /^istio-job-run: --ready-timeout: "soon" is not a duration \(examples: 500ms, 30s, 2m\)$/m,
    ],
    [
      'a bad variable',
      ['true'],
      { ISTIO_JOB_RUN_QUIT: 'sometimes' },
      /ISTIO_JOB_RUN_QUIT: "sometimes" is not one of always, on-success, never/,
    ],
    ['an unknown flag', ['--frobnicate', 'true'], {}, /unknown option --frobnicate/],
    ['an unknown one-letter long flag, as typed', ['--x', 'true'], {}, /unknown option --x \(/],
    ['an ftp URL', ['--ready-url', 'ftp://127.0.0.1/x', 'true'], {}, /--ready-url: "ftp:\/\/127.0.0.1\/x" is not an http or https URL/],
    ['an empty value', ['--quit-url=', 'true'], {}, /--quit-url: needs a value/],
    ['a bad boolean', ['true'], { ISTIO_JOB_RUN_WAIT: 'maybe' }, /ISTIO_JOB_RUN_WAIT: "maybe" is not a boolean/],
    ['no command', ['--sidecar', 'none'], {}, /no command given/],
  ];
  for (const [name, args, env, message] of usageErrors) {
    test(`usage error, ${name}: a message naming it, exit 125, nothing on stdout`, async () => {
      const result = await run(args, { env: cleanEnv({ ISTIO_JOB_RUN_SIDECAR: 'none', ...env }) });
      assert.equal(result.code, 125);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
    });
  }
});

describe('exit codes', () => {
  const exits: [string, string[], number][] = [
    ['exit 0', ['sh', '-c', 'exit 0'], 0],
    ['exit 1', ['sh', '-c', 'exit 1'], 1],
    ['exit 42', ['sh', '-c', 'exit 42'], 42],
    ['exit 255', ['sh', '-c', 'exit 255'], 255],
    ['death by KILL', ['sh', '-c', 'kill -KILL $$'], 137],
    ['death by TERM', ['sh', '-c', 'kill -TERM $$'], 143],
    ['death by SEGV', ['sh', '-c', 'kill -SEGV $$'], 139],
    ['death by INT', [NODE, REPORTER, 'die', 'SIGINT'], 130],
    ['death by ABRT', [NODE, REPORTER, 'die', 'SIGABRT'], 134],
    ['command not found', ['no-such-command-istio-job-run'], 127],
    ['path not found', ['./no/such/file'], 127],
    ['a path through a file', ['/etc/passwd/x'], 127],
  ];
  for (const [name, command, code] of exits) {
    test(`${name} -> ${code}`, async () => {
      const result = await run([...none, ...command]);
      assert.equal(result.code, code, result.stderr);
    });
  }

  test('a file without execute permission -> 126, with a message naming it', async () => {
    const file = join(scratch, 'not-executable.sh');
    writeFileSync(file, '#!/bin/sh\necho no\n');
    chmodSync(file, 0o644);
    const result = await run([...none, file]);
    assert.equal(result.code, 126);
    assert.match(result.stderr, /not-executable\.sh: cannot be executed/);
  });

  test('a directory -> 126', async () => {
    const result = await run([...none, scratch]);
    assert.equal(result.code, 126);
  });

  test('a missing #! interpreter -> 127', async () => {
    const file = join(scratch, 'bad-interpreter.sh');
    writeFileSync(file, '#!/no/such/interpreter\n');
    chmodSync(file, 0o755);
    const result = await run([...none, file]);
    assert.equal(result.code, 127);
    assert.match(result.stderr, /not found/);
  });
});

describe('stdio', () => {
  test("the command's stdin, stdout and stderr are the wrapper's own descriptors", async () => {
    const running = wrapper([...none, NODE, REPORTER]);
    await running.line(/^ready/);
    running.process.stdin?.write('fds\n');
    const line = await running.line(/^fds /);
    const own = [0, 1, 2].map((fd) => readlinkSync(`/proc/${running.pid}/fd/${fd}`));
    assert.deepEqual(line.split(' ').slice(1), own);
    assert.ok(
      own.every((target) => /^(pipe|socket):/.test(target)),
      'the test gave the wrapper pipes, not a terminal',
    );
    running.process.stdin?.end();
    assert.equal((await running.finished).code, 0);
  });

  test('stdout and stderr pass byte for byte, stdin reaches the command', async () => {
    const size = 3 * 65_536 + 17;
    const result = await run([...none, NODE, REPORTER, 'bytes', String(size)]);
    const expected = Buffer.alloc(size);
    for (let i = 0; i < size; i++) expected[i] = (i % 65_536) % 256;
    assert.equal(result.stdoutBytes.length, size);
    assert.ok(result.stdoutBytes.equals(expected));

    const echo = await run(['--sidecar', 'none', '--log-level', 'silent', 'sh', '-c', 'cat; printf "\\377\\000err" >&2'], {
      input: 'in\u00e9\n',
    });
    assert.equal(echo.stdout, 'in\u00e9\n');
    assert.equal(echo.stderr, '\ufffd\u0000err');
  });

  test('the wrapper writes nothing to stdout while running a job, whatever the log level', async () => {
    const sidecar = await Sidecar.start();
    try {
      const result = await run([
        '--sidecar',
        'classic',
        '--log-level',
        'debug',
        '--ready-url',
        sidecar.readyUrl,
        '--quit-url',
        sidecar.quitUrl,
        'true',
      ]);
      assert.equal(result.code, 0);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /^istio-job-run: /m);
      assert.ok(
        result.stderr
          .split('\n')
          .filter(Boolean)
          .every((line) => line.startsWith('istio-job-run:')),
      );
    } finally {
      await sidecar.close();
    }
  });

  test('--log-format json: one JSON object a line on stderr', async () => {
    const sidecar = await Sidecar.start();
    try {
      const result = await run([
        '--sidecar',
        'classic',
        '--log-format',
        'json',
        '--ready-url',
        sidecar.readyUrl,
        '--quit-url',
        sidecar.quitUrl,
        'true',
      ]);
      const lines = result.stderr
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.ok(lines.length >= 2);
      assert.ok(lines.some((line) => line['level'] === 'info' && /proxy ready/.test(String(line['msg']))));
      assert.ok(lines.some((line) => /acknowledged/.test(String(line['msg'])) && line['attempts'] === 1));
    } finally {
      await sidecar.close();
    }
  });

  test('--log-level silent prints nothing, even for a missing command', async () => {
    const result = await run(['--sidecar', 'none', '--log-level', 'silent', 'no-such-command-istio-job-run']);
    assert.equal(result.code, 127);
    assert.equal(result.stderr, '');
  });
});

describe('modes without HTTP', () => {
  const status = (list: string) => JSON.stringify({ [list]: ['istio-init', 'istio-proxy'], volumes: [] });
  const cases: [string, Record<string, string>, RegExp | undefined][] = [
    ['outside Kubernetes', {}, /not in a Kubernetes pod/],
    [
      'a native sidecar (status lists istio-proxy under initContainers)',
      { KUBERNETES_SERVICE_HOST: '10.0.0.1', ISTIO_JOB_RUN_SIDECAR_STATUS: status('initContainers') },
      undefined,
    ],
    // An empty status says what it can mean, at info level.
    [
      'no sidecar injected (status empty)',
      { KUBERNETES_SERVICE_HOST: '10.0.0.1', ISTIO_JOB_RUN_SIDECAR_STATUS: '' },
      /ISTIO_JOB_RUN_SIDECAR_STATUS is set but empty: .*ambient mode.*misspelled/,
    ],
    ['--sidecar native', { KUBERNETES_SERVICE_HOST: '10.0.0.1', ISTIO_JOB_RUN_SIDECAR: 'native' }, undefined],
  ];
  for (const [name, env, info] of cases) {
    test(`${name}: runs the command and sends no request at all`, async () => {
      const sidecar = await Sidecar.start({ agentPort: 0 });
      try {
        const result = await run(['--ready-url', sidecar.readyUrl, '--quit-url', sidecar.quitUrl, 'sh', '-c', 'exit 7'], {
          env: cleanEnv(env),
        });
        assert.equal(result.code, 7);
        assert.equal(sidecar.requests.length, 0);
        if (info === undefined) assert.equal(result.stderr, '');
        else assert.match(result.stderr, info);
      } finally {
        await sidecar.close();
      }
    });
  }
});

describe('usage errors that must not leak or quit', () => {
  test('--install without a directory: exit 125 at once, naming --install and a directory, and no HTTP at all', async () => {
    const sidecar = await Sidecar.start({});
    try {
      const env = cleanEnv({
        KUBERNETES_SERVICE_HOST: '10.0.0.1',
        ISTIO_JOB_RUN_SIDECAR: 'classic',
        ISTIO_JOB_RUN_QUIT_URL: sidecar.quitUrl,
        ISTIO_JOB_RUN_READY_URL: sidecar.readyUrl,
      });
      const result = await run(['--install'], { env });
      assert.equal(result.code, 125);
      assert.match(result.stderr, /--install: needs a directory \(--install DIR\)/);
      assert.equal(sidecar.requests.length, 0);
    } finally {
      await sidecar.close();
    }
  });

  test('credentials in a quit URL: refused, never printed', async () => {
    const result = await run(['--sidecar', 'none', '--quit-url', 'http://user:hunter2@127.0.0.1:15020/quitquitquit', 'true']);
    assert.equal(result.code, 125);
    assert.match(result.stderr, /--quit-url: "http:\/\/\*\*\*@127\.0\.0\.1:15020\/quitquitquit" has credentials in it/);
    assert.doesNotMatch(result.stderr, /hunter2/);
  });
});
