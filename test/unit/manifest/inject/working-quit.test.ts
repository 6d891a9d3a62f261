// A script whose own quit works (--check's only finding the info hand-rolled-quit): --inject takes the quit out,
// proves the rest, and puts the wrapper in front, which waits for readiness with retries before the job and quits
// on every way out; a wait the script had before the job stays. What the proof or the wrapper cannot take is left
// as it is (the pod works), said once, never refused. --check then says what --inject does with the finding's pod.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { messageOf, said } from '../../../../src/manifest/check/finding.ts';
import { check } from '../../../../src/manifest/check/rules.ts';
import { advised, inject } from '../../../../src/manifest/inject/inject.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { istioJobHead, istioScriptJob, source } from '../../../support/manifest.ts';

await loadShellParser();
const IMAGE = 'registry.example/istio-job-run:9.9.9';
const QUIT = 'curl -fsS -X POST http://127.0.0.1:15020/quitquitquit';
const WAIT = 'curl -fsS http://127.0.0.1:15021/healthz/ready';

const job = istioScriptJob;
const run = (text: string) => inject(source(text), { image: IMAGE, native: false });

/** The text --inject writes, which must be a rewrite; and a second --inject leaves it as it is. */
function rewritten(text: string): { out: string; notes: readonly string[] } {
  const result = run(text);
  assert.equal(result.kind, 'done', result.kind === 'refused' ? result.problems.join('\n') : '');
  const done = result as Extract<typeof result, { kind: 'done' }>;
  assert.deepEqual(done.rewritten, ['Job migrate']);
  const again = run(done.text);
  assert.equal(again.kind === 'done' ? again.text : '', done.text, 'a second --inject changes nothing');
  return { out: done.text, notes: done.notes };
}

/** --inject leaves TEXT byte for byte, saying NOTES, and --check says nothing of --inject on its findings. */
function leftAsItIs(text: string, notes: readonly string[]): void {
  const result = run(text);
  assert.equal(result.kind, 'done', result.kind === 'refused' ? result.problems.join('\n') : '');
  const done = result as Extract<typeof result, { kind: 'done' }>;
  assert.equal(done.text, text);
  assert.deepEqual(done.notes, notes);
  for (const finding of advised(source(text), { namespaces: new Map() })) assert.equal(finding.inject, undefined);
}

/** The rules --check finds in TEXT. */
const rules = (text: string): string[] => check(source(text)).map((finding) => `${finding.level} ${finding.rule}`);

describe('a script whose own quit works', () => {
  test('the status kept by hand: the quit goes, the wrapper goes in front; clean after', () => {
    const text = job(`"./migrate; rc=$?; ${QUIT}; exit $rc"`);
    assert.deepEqual(rules(text), ['info hand-rolled-quit']);
    const { out, notes } = rewritten(text);
    assert.match(
      out,
      /command:\n {12}- \/istio-job-run\/istio-job-run\n {12}- "--"\n {12}- sh\n {12}- -c\n {12}- "\.\/migrate; rc=\$\?; exit \$rc"\n/,
    );
    assert.deepEqual(
      notes.filter((note) => note.includes('took out')),
      ["test.yaml:1: Job migrate: took out the script's own quit (line 18): istio-job-run quits after the job on every way out"],
    );
    assert.deepEqual(rules(out), []);
  });

  test('a wait before the job that is not retried stays: the wrapper has waited, so it passes at once', () => {
    const text = job(`"${WAIT} && ./migrate; rc=$?; ${QUIT}; exit $rc"`);
    assert.deepEqual(rules(text), ['info hand-rolled-quit']);
    const { out } = rewritten(text);
    assert.ok(out.includes(`- "${WAIT} && ./migrate; rc=$?; exit $rc"\n`), out);
  });

  test('a wait after the work stays, and --check finds nothing of it behind the wrapper, which waited first', () => {
    const text = job(`"set -e; ./migrate; until ${WAIT}; do sleep 1; done; ${QUIT}"`, 'OnFailure');
    // The advice hand-rolled-quit gives way to the warning on the same line; --inject reads it all the same.
    assert.deepEqual(rules(text), ['warning wait-after-work']);
    const { out } = rewritten(text);
    assert.ok(out.includes(`- "set -e; ./migrate; until ${WAIT}; do sleep 1; done;"\n`), out);
    assert.deepEqual(rules(out), []);
  });

  test('OnFailure, quitting only after a success: the wrapper quits on success only', () => {
    const text = job(`"./migrate && ${QUIT}"`, 'OnFailure');
    assert.deepEqual(rules(text), ['info hand-rolled-quit']);
    const { out } = rewritten(text);
    assert.match(out, /- \/istio-job-run\/istio-job-run\n {12}- "--quit"\n {12}- on-success\n {12}- "--"\n/);
    assert.ok(out.includes('- "./migrate"\n'), out);
  });

  test('--check says that --inject rewrites the pod, after the message it had', () => {
    const text = job(`"./migrate; rc=$?; ${QUIT}; exit $rc"`);
    const [plain] = check(source(text));
    const [found] = advised(source(text), { namespaces: new Map() });
    assert.ok(plain !== undefined && found !== undefined);
    assert.equal(said(found), `${messageOf(plain)} ("istio-job-run --inject FILE" rewrites the manifest)`);
  });

  test('two job containers: left as it is, said once, and --check says nothing of --inject', () => {
    const other = '        - name: report\n          image: example/report\n          command: ["./report"]\n';
    const text = job(`"./migrate; rc=$?; ${QUIT}; exit $rc"`, 'Never', other);
    leftAsItIs(text, [
      'test.yaml:1: Job migrate: left as it is: its own quit works, and the wrapper cannot replace it: ' +
        'its pod has 2 job containers (migrate, report): the first to end would stop the sidecar for the others. ' +
        'Wrap the one that ends last by hand (istio-job-run -- its command), or make the sidecar a native one',
    ]);
    for (const finding of advised(source(text), { namespaces: new Map() })) assert.equal(finding.inject, undefined);
  });

  test('a quit the proof cannot take out: left as it is, naming why, not refused', () => {
    const text = job(`"./migrate; rc=$?; sh -c './report; ${QUIT}'; exit $rc"`);
    assert.deepEqual(rules(text), ['info hand-rolled-quit']);
    leftAsItIs(text, [
      'test.yaml:1: Job migrate: left as it is: its own quit works, and the wrapper cannot replace it: ' +
        "container migrate: its quit on line 18 shares a command with the job's (sh -c './report; curl -fsS -X POST http://127.0.0.1:15020...): take it out by hand",
    ]);
    for (const finding of advised(source(text), { namespaces: new Map() })) assert.equal(finding.inject, undefined);
  });

  test('a quit inside exec bash -c whose script is quoted in pieces: left as it is, not cut whole', () => {
    // The inner script's words are quoted strings joined ('\''): what it runs besides the quit cannot be read word by word.
    const inner = `exec bash -c 'migrate; rc=$?; wget -q -O- --post-data='\\'''\\'' http://localhost:15020/quitquitquit; exit $rc'`;
    const text = `${istioJobHead()}          command: ${JSON.stringify(['bash', '-c', inner])}\n`;
    assert.deepEqual(rules(text), ['info hand-rolled-quit']);
    leftAsItIs(text, [
      'test.yaml:1: Job migrate: left as it is: its own quit works, and the wrapper cannot replace it: ' +
        `container migrate: its quit on line 15 shares a command with the job's (${inner.slice(0, inner.indexOf('data=') + 8)}...): take it out by hand`,
    ]);
  });

  test('a native sidecar: nothing to do, byte for byte', () => {
    const text = job(`"./migrate; rc=$?; ${QUIT}; exit $rc"`).replace(
      '        sidecar.istio.io/inject: "true"\n',
      '        sidecar.istio.io/inject: "true"\n        sidecar.istio.io/nativeSidecar: "true"\n',
    );
    const result = run(text);
    assert.equal(result.kind === 'done' ? result.text : '', text);
    assert.deepEqual(result.kind === 'done' ? result.rewritten : [], []);
  });
});
