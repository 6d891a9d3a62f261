// A script's own quit taken out by --inject, one row per shape: the script --inject writes (the quit's
// statement with its separator, the scaffolding that only served it), or why it refuses; and --inject over a
// whole Job: every byte but the quit's stays, the rewrite proven, idempotent, and clean under --check.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { check } from '../../../../src/manifest/check/rules.ts';
import { inject } from '../../../../src/manifest/inject/inject.ts';
import { takeQuitsOut } from '../../../../src/manifest/inject/unquit.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { istioJobHead, istioScriptJob, source } from '../../../support/manifest.ts';

await loadShellParser();
const IMAGE = 'registry.example/istio-job-run:9.9.9';
const QUIT = 'curl -fsS -X POST http://127.0.0.1:15020/quitquitquit';

/** The places of the quits of SCRIPT: each `curl`, `wget` or `pkill` that starts a command. */
function places(script: string): { row: number; column: number }[] {
  const found: { row: number; column: number }[] = [];
  for (const [row, line] of script.split('\n').entries()) {
    for (const match of line.matchAll(/(?<=^|[\s;&|({'"$])(curl|wget|pkill) /g)) found.push({ row, column: match.index ?? 0 });
  }
  return found;
}

const ROWS: readonly (readonly [string, string, string])[] = [
  ['the quit after &&', `migrate && ${QUIT}`, 'migrate'],
  ['the quit as its own statement, the status kept', `migrate; rc=$?; ${QUIT}; exit $rc`, 'migrate; rc=$?; exit $rc'],
  ['the quit on its own line, a comment kept', `migrate\n# tell the proxy\n${QUIT}\n`, 'migrate\n# tell the proxy\n'],
  ['the quit and its || true', `migrate\n${QUIT} || true\n`, 'migrate\n'],
  ['a sleep before a quit nothing follows', 'job && sleep 2m && curl -X POST localhost:3500/v1.0/shutdown', 'job'],
  ['a script of only a sleep and the quit keeps its sleep', 'sleep 30 && curl -X POST http://localhost:4191/shutdown', 'sleep 30'],
  ['a sleep before a quit something follows stays', `job; sleep 5; ${QUIT}; echo done`, 'job; sleep 5; echo done'],
  ['exit 0 after the quit at the end', `migrate\n${QUIT}\nexit 0\n`, 'migrate\n'],
  ['a trap whose action was only the quit', `trap '${QUIT}' EXIT\nmigrate\n`, 'migrate\n'],
  [
    'a function body left with nothing gets :',
    `stop() { ${QUIT}; }\ntrap stop EXIT\nmigrate\n`,
    'stop() { :; }\ntrap stop EXIT\nmigrate\n',
  ],
  [
    'an EXIT function with its quit, sleep and exit 0',
    `bye() {\n  echo bye\n  ${QUIT}\n  sleep 4\n  exit 0\n}\ntrap bye EXIT\nmigrate\n`,
    'bye() {\n  echo bye\n}\ntrap bye EXIT\nmigrate\n',
  ],
  ['a loop over quit URLs goes whole', 'migrate\nfor u in $URLS; do\n  curl -X POST $u\ndone\n', 'migrate\n'],
  ['the quit in a command substitution', `migrate; rc=$?; out=$(${QUIT}); exit $rc`, 'migrate; rc=$?; exit $rc'],
  ['the quit inside sh -c', `migrate; rc=$?; sh -c '${QUIT}'; exit $rc`, 'migrate; rc=$?; exit $rc'],
  // Behind a program that runs its arguments (src/manifest/script/programs.ts, commands.ts): the quit alone.
  ['the quit behind nice', `migrate; rc=$?; nice -n 5 ${QUIT}; exit $rc`, 'migrate; rc=$?; exit $rc'],
  ['the quit behind stdbuf and setsid', `migrate; rc=$?; stdbuf -oL setsid ${QUIT}; exit $rc`, 'migrate; rc=$?; exit $rc'],
  ['the quit inside ksh -c', `migrate; rc=$?; ksh -c '${QUIT}'; exit $rc`, 'migrate; rc=$?; exit $rc'],
  [
    'an if whose then holds the quit and an exit',
    `migrate; rc=$?\nif [ $rc -ne 0 ]; then\n  ${QUIT}\n  exit $rc\nfi\n${QUIT}\n`,
    'migrate; rc=$?\nif [ $rc -ne 0 ]; then\n  exit $rc\nfi\n',
  ],
  [
    'a then-body left with nothing gets : (bash rejects `then else`)',
    `if migrate; then ${QUIT}; else exit 1; fi`,
    'if migrate; then :; else exit 1; fi',
  ],
  ['two quits of one and-or list, one in its middle', `migrate && ${QUIT} && report && ${QUIT}`, 'migrate && report'],
  [
    'a quit between || and &&: it becomes :, which succeeds as it did',
    `job && ${QUIT} && exit 0 || ${QUIT} && exit 1`,
    'job && exit 0 || : && exit 1',
  ],
  [
    'a trap whose action writes a file too keeps the rest of its action',
    `trap 'echo $? > /dev/termination-log; ${QUIT}' EXIT\nmigrate\n`,
    "trap 'echo $? > /dev/termination-log;' EXIT\nmigrate\n",
  ],
];

describe("a script's own quit taken out", () => {
  for (const [name, script, expected] of ROWS) {
    test(name, () => {
      const result = takeQuitsOut(script, places(script), (row) => row + 1);
      assert.equal(result.kind === 'rewritten' ? result.script : result.why, expected);
    });
  }

  test('a quit that shares a command with the job is refused, naming its line', () => {
    const script = `migrate\nsh -c "migrate2; ${QUIT}"\n`;
    const result = takeQuitsOut(script, places(script), (row) => row + 20);
    assert.equal(result.kind, 'refused');
    assert.match(result.kind === 'refused' ? result.why : '', /its quit on line 21 shares a command with the job's \(sh -c "migrate2; /);
  });
});

const jobHead = istioJobHead;
const job = istioScriptJob;

describe('--inject over a Job whose script quits by hand', () => {
  const rewrite = (text: string): string => {
    const result = inject(source(text), { image: IMAGE, native: false });
    assert.equal(result.kind, 'done', result.kind === 'refused' ? result.problems.join('\n') : '');
    return (result as { text: string }).text;
  };

  test('a literal block: the quit line goes, every other byte stays, then wrapped; idempotent and clean', () => {
    const text = job(`|\n              set -e\n              ./migrate   # the job\n              ${QUIT}\n              echo done`);
    const out = rewrite(text);
    assert.ok(!out.includes(QUIT), out);
    assert.match(out, /- \|\n {14}set -e\n {14}\.\/migrate {3}# the job\n {14}echo done\n/);
    assert.equal(out.replace(/\n {12}- \/istio-job-run\/istio-job-run\n {12}- "--"/, '').split(QUIT).length, 1);
    assert.equal(rewrite(out), out, 'idempotent');
    assert.deepEqual(
      check(source(out)).filter((finding) => finding.level === 'error'),
      [],
    );
  });

  test('a folded block of commands becomes a literal block of the same lines', () => {
    const text = job(`>\n              ./migrate\n              ${QUIT}`);
    const out = rewrite(text);
    assert.match(out, /- \|\n {14}\.\/migrate\n/);
    assert.ok(!out.includes('quitquitquit'), out);
  });

  test('bash -exc, a sidecar its namespace injects shown by a wait and a quit: rewritten, said once, no contradiction', () => {
    const text = job(
      `|\n              ./migrate\n              until curl -fsI http://localhost:15021/healthz/ready; do sleep 3; done\n              curl -X POST http://localhost:15020/quitquitquit`,
    )
      .replace('      annotations:\n        sidecar.istio.io/inject: "true"\n', '      labels: {app: migrate}\n')
      .replace('- -c', '- -exc')
      .replace('            - sh\n', '            - bash\n');
    const result = inject(source(text), { image: IMAGE, native: false });
    assert.equal(result.kind, 'done', result.kind === 'refused' ? result.problems.join('\n') : '');
    const { notes } = result as { notes: readonly string[] };
    assert.ok(!(result as { text: string }).text.includes('quitquitquit'), (result as { text: string }).text);
    assert.deepEqual(
      notes.filter((note) => /left as it is/.test(note)),
      [],
    );
    assert.equal(notes.filter((note) => /took out the script's own quit/.test(note)).length, 1, notes.join('\n'));
  });

  test('a folded block whose commands are kept apart by blank lines becomes a literal block of the same lines', () => {
    const text = job(`>\n              ./migrate\n\n              ./seed\n\n              ${QUIT}`);
    const out = rewrite(text);
    assert.match(out, /- \|\n {14}\.\/migrate\n\n {14}\.\/seed\n/);
    assert.ok(!out.includes('quitquitquit'), out);
  });

  test('a double-quoted script is cut in place', () => {
    const out = rewrite(job(`"./migrate && ${QUIT}"`));
    assert.match(out, /- "\.\/migrate"\n/);
  });

  test('OnFailure: the quit that always ran goes, and the wrapper quits on success only', () => {
    const out = rewrite(job(`"./migrate; rc=$?; ${QUIT}; exit $rc"`, 'OnFailure'));
    assert.match(out, /- "\.\/migrate; rc=\$\?; exit \$rc"\n/);
    assert.match(out, /- "--quit"\n {12}- on-success\n/);
  });

  test('a script that loses the status by itself is rewritten (no worse, and quit on every way out), the loss said once', () => {
    const result = inject(source(job(`"./migrate; echo done; ${QUIT}"`)), { image: IMAGE, native: false });
    assert.equal(result.kind, 'done', result.kind === 'refused' ? result.problems.join('\n') : '');
    assert.match((result as { text: string }).text, /- "\.\/migrate; echo done;"\n/);
    const notes = result.kind === 'done' ? result.notes : [];
    assert.deepEqual(
      notes.filter((note) => note.includes('ends with 0 after the job failed')),
      [
        "test.yaml:1: Job migrate: container migrate's script still ends with 0 after the job failed (line 18: its last command), " +
          "as it did before, and the wrapper reports that 0: keep the job's status by hand (rc=$? right after the job, exit $rc)",
      ],
    );
  });

  test('an exit 0 that ends the script from a branch stays: the job does not run twice', () => {
    const script = `|\n              if ./migrate; then\n                ${QUIT}\n                exit 0\n              fi\n              echo retrying\n              ./migrate --retry`;
    const out = rewrite(job(script));
    assert.match(out, /if \.\/migrate; then\n {16}exit 0\n {14}fi\n {14}echo retrying\n/);
    assert.ok(!out.includes('quitquitquit'), out);
  });
});

describe('a quit or a wait sent with curl in an image that has none', () => {
  const slim = (script: string): string => job(script).replace('image: example/migrate', 'image: python:3.12-slim');
  test('the quit is taken out and the command wrapped: the wrapper needs no curl; clean after', () => {
    const result = inject(source(slim(`"./migrate; rc=$?; ${QUIT}; exit $rc"`)), { image: IMAGE, native: false });
    assert.equal(result.kind, 'done', result.kind === 'refused' ? result.problems.join('\n') : '');
    const out = (result as { text: string }).text;
    assert.match(out, /- "\.\/migrate; rc=\$\?; exit \$rc"\n/);
    assert.deepEqual(
      check(source(out)).filter((finding) => finding.level === 'error'),
      [],
    );
  });
  test('a wait in a loop never ends there, and --inject takes out only quits: refused, naming the line', () => {
    const wait = 'until curl -fsI http://127.0.0.1:15021/healthz/ready; do sleep 1; done';
    const result = inject(source(slim(`"${wait}; ./migrate; rc=$?; ${QUIT}; exit $rc"`)), { image: IMAGE, native: false });
    assert.deepEqual(result.kind === 'refused' ? result.problems : [], [
      'test.yaml:1: Job migrate: --check finds quit-program-missing on line 18: the script waits for the sidecar with curl, ' +
        'which python:3.12-slim lacks, so the wait never ends: take it out (istio-job-run waits itself), then --inject',
    ]);
  });
});

describe("a script that quits nothing but loses the job's status", () => {
  test('is refused: the wrapper would report its failure as a success', () => {
    const result = inject(source(job('"./migrate | tee job.log"')), { image: IMAGE, native: false });
    assert.equal(result.kind, 'refused');
    assert.match(
      result.kind === 'refused' ? (result.problems[0] ?? '') : '',
      /container migrate's script ends with 0 after the job failed/,
    );
  });

  test('written to the log without a pipeline, it is rewritten', () => {
    const result = inject(source(job('"./migrate > job.log 2>&1"')), { image: IMAGE, native: false });
    assert.equal(result.kind, 'done');
  });
});

describe('a quit written as exec items after a program that no shell runs', () => {
  const execJob = (command: string): string => `${jobHead()}${command}`;

  test('in a flow list: the items from && on go, the wrapper goes in front; idempotent', () => {
    const text = execJob(
      '          command: ["/scripts/wait-for-deps", "--all", "&&", "curl", "-X", "POST", "http://localhost:15020/quitquitquit"]\n',
    );
    const result = inject(source(text), { image: IMAGE, native: false });
    assert.equal(result.kind, 'done');
    const out = (result as { text: string }).text;
    assert.match(out, /command: \["\/istio-job-run\/istio-job-run", "--", "\/scripts\/wait-for-deps", "--all"\]\n/);
    assert.equal(result.kind === 'done' && result.notes.some((note) => note.includes('exec items')), true);
    const again = inject(source(out), { image: IMAGE, native: false });
    assert.equal(again.kind === 'done' && again.text, out);
  });

  test('in block args: their lines go', () => {
    const text = execJob(
      '          command: ["/app/migrate"]\n          args:\n            - --to\n            - latest\n            - ;\n            - wget\n            - --post-data=\n            - http://127.0.0.1:15020/quitquitquit\n',
    );
    const out = (inject(source(text), { image: IMAGE, native: false }) as { text: string }).text;
    assert.match(out, /args:\n {12}- --to\n {12}- latest\n {10}volumeMounts:/);
  });

  test('other arguments that are no quit stay', () => {
    const text = execJob('          command: ["/app/run", "&&", "echo", "done"]\n');
    const out = (inject(source(text), { image: IMAGE, native: false }) as { text: string }).text;
    assert.match(out, /"\/app\/run", "&&", "echo", "done"\]/);
  });
});
