// A kind's variable of quit URLs (kinds.ts, quitUrlsVariable): the Cloud SQL proxy operator's CSQL_PROXY_QUIT_URLS,
// read from the job container's environment as the operator writes it (space-separated URLs), each URL a quit of
// that kind; a bad one named with the variable, the good ones still quit.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { configure, type Job } from '../../../src/config/configuration.ts';
import { kindNamed } from '../../../src/config/kinds.ts';

const VARIABLE = kindNamed('cloud-sql-proxy').template.quitUrlsVariable ?? '';

function job(env: Record<string, string>, argv: readonly string[] = ['--sidecar', 'none']): Job {
  const configuration = configure({
    argv: [...argv, 'job'],
    env,
    readFile: () => {
      throw Object.assign(new Error('none'), { code: 'ENOENT' });
    },
  });
  if (configuration.kind !== 'job') assert.fail(`expected a job, got ${configuration.kind}`);
  return configuration;
}
const quits = (found: Job) =>
  found.sidecars.flatMap((sidecar) => sidecar.quit.map((quit) => [sidecar.kind.name, sidecar.from, quit.url.href]));

describe("the Cloud SQL proxy operator's variable of quit URLs", () => {
  test("is the kind's, named once in kinds.ts", () => assert.equal(VARIABLE, 'CSQL_PROXY_QUIT_URLS'));

  test('each space-separated URL is a quit of a cloud-sql-proxy, nothing waited for', () => {
    const found = job({ [VARIABLE]: 'http://localhost:9091/quitquitquit http://localhost:9092/quitquitquit' });
    assert.deepEqual(found.errors, []);
    assert.deepEqual(quits(found), [
      ['cloud-sql-proxy', VARIABLE, 'http://localhost:9091/quitquitquit'],
      ['cloud-sql-proxy', VARIABLE, 'http://localhost:9092/quitquitquit'],
    ]);
    assert.ok(found.sidecars.every((sidecar) => sidecar.ready === undefined));
    assert.match(found.lines.map((line) => line.message).join('\n'), /sidecars: cloud-sql-proxy \(from CSQL_PROXY_QUIT_URLS\)/);
  });

  test("tabs, newlines and runs of spaces separate as the shell's words do", () => {
    const found = job({ [VARIABLE]: '  http://127.0.0.1:9091/quitquitquit\t\n http://127.0.0.1:9095/quitquitquit ' });
    assert.deepEqual(found.errors, []);
    assert.equal(quits(found).length, 2);
  });

  test('beside Istio, whatever its mode', () => {
    const found = job({ [VARIABLE]: 'http://localhost:9091/quitquitquit' }, ['--sidecar', 'classic']);
    assert.deepEqual(
      found.sidecars.map((sidecar) => sidecar.kind.name),
      ['istio', 'cloud-sql-proxy'],
    );
  });

  test('a URL --also quits already is quit once', () => {
    const found = job({ [VARIABLE]: 'http://localhost:9091/quitquitquit http://localhost:9092/quitquitquit' }, [
      '--sidecar',
      'none',
      '--also',
      'cloud-sql-proxy',
    ]);
    assert.deepEqual(quits(found), [
      ['cloud-sql-proxy', '--also/ISTIO_JOB_RUN_ALSO', 'http://127.0.0.1:9091/quitquitquit'],
      ['cloud-sql-proxy', VARIABLE, 'http://localhost:9092/quitquitquit'],
    ]);
  });

  test('empty: no proxy to stop, said once, no error', () => {
    const found = job({ [VARIABLE]: ' ' });
    assert.deepEqual(found.errors, []);
    assert.deepEqual(found.sidecars, []);
    assert.match(found.lines.map((line) => line.message).join('\n'), /CSQL_PROXY_QUIT_URLS is set but empty: no cloud-sql-proxy to stop/);
  });

  const bad: [value: string, error: RegExp][] = [
    [
      'localhost:9091/quitquitquit',
      /^CSQL_PROXY_QUIT_URLS: "localhost:9091\/quitquitquit" is not an http or https URL \(space-separated http or https URLs, e\.g\. http:\/\/127\.0\.0\.1:9091\/quitquitquit\)$/,
    ],
    ['quitquitquit', /^CSQL_PROXY_QUIT_URLS: "quitquitquit" is not a URL \(space-separated http or https URLs, e\.g\. /],
    [
      'http://u:secret@localhost:9091/quitquitquit',
      /^CSQL_PROXY_QUIT_URLS: "http:\/\/\*+@localhost:9091\/quitquitquit" has credentials in it/,
    ],
    ['http://localhost:0/quitquitquit', /^CSQL_PROXY_QUIT_URLS: "http:\/\/localhost:0\/quitquitquit" has port 0/],
    [`http://localhost:9091/${'q'.repeat(4100)}`, /^CSQL_PROXY_QUIT_URLS: "http:\/\/localhost:9091\/q+\.\.\." is too long/],
  ];
  for (const [value, error] of bad) {
    test(`bad: ${value.slice(0, 50)}: one error naming the variable and the value; the good URL is still quit`, () => {
      const found = job({ [VARIABLE]: `http://localhost:9091/quitquitquit ${value}` });
      assert.equal(found.errors.length, 1, found.errors.join('\n'));
      assert.match(found.errors[0] ?? '', error);
      assert.doesNotMatch(found.errors[0] ?? '', /secret/);
      assert.deepEqual(quits(found), [['cloud-sql-proxy', VARIABLE, 'http://localhost:9091/quitquitquit']]);
    });
  }

  test('a URL that is not loopback is taken (the wrapper warns of it when it quits, as of every quit URL)', () => {
    const found = job({ [VARIABLE]: 'http://10.0.0.1:9091/quitquitquit' });
    assert.deepEqual(found.errors, []);
    assert.equal(quits(found).length, 1);
  });

  test('more URLs than the launcher holds: the error names the variable among the sources', () => {
    const many = Array.from({ length: 17 }, (_, i) => `http://localhost:${9091 + i}/quitquitquit`).join(' ');
    const found = job({ [VARIABLE]: many });
    assert.match(found.errors.join('\n'), /^17 quit URLs: the launcher takes at most 16 \(.*CSQL_PROXY_QUIT_URLS\)$/);
  });
});
