// --check on the shapes of scripts people write around a Job's command, each judged by what the shell really
// does with them (dash and bash agree on each): whether an effective quit runs when the job fails and when it
// succeeds, before or after the job, and the status the container ends with. Each case names the errors and
// warnings --check must give for a Job whose pod gets an Istio sidecar, and nothing else.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { check, type RuleId } from '../../../../src/manifest/check/rules.ts';
import { loadShellParser, readScript } from '../../../../src/manifest/script/shell.ts';
import { source } from '../../../support/manifest.ts';

before(loadShellParser);

const QUIT = 'curl -fsS -XPOST http://127.0.0.1:15020/quitquitquit';

interface Case {
  readonly name: string;
  /** The script (a YAML literal block) or the container's command and args as flow sequences. */
  readonly script?: string;
  readonly command?: string;
  readonly restartPolicy?: 'Never' | 'OnFailure';
  /** Extra lines of the container (env) and of the pod spec. */
  readonly container?: string;
  readonly podSpec?: string;
  readonly findings: readonly RuleId[];
}

const indent = (text: string, by: number): string =>
  text
    .split('\n')
    .map((line) => (line === '' ? line : ' '.repeat(by) + line))
    .join('\n');

function manifest(entry: Case): string {
  const command = entry.command ?? `command: ["/bin/sh", "-c"]\nargs:\n- |\n${indent(entry.script ?? '', 2)}`;
  return [
    'apiVersion: batch/v1',
    'kind: Job',
    'metadata: {name: task}',
    'spec:',
    '  template:',
    '    metadata:',
    '      annotations: {sidecar.istio.io/inject: "true"}',
    '    spec:',
    `      restartPolicy: ${entry.restartPolicy ?? 'Never'}`,
    ...(entry.podSpec === undefined ? [] : [indent(entry.podSpec, 6)]),
    '      containers:',
    '      - name: job',
    '        image: example',
    indent(command, 8),
    ...(entry.container === undefined ? [] : [indent(entry.container, 8)]),
    '',
  ].join('\n');
}

const CASES: readonly Case[] = [
  // Anything in front of the shell hid the whole script.
  {
    name: 'timeout 60 sh -c, a quit after &&',
    command: `command: ["timeout", "60", "sh", "-c"]\nargs: ["./job && ${QUIT}"]`,
    findings: ['quit-skipped-on-failure'],
  },
  { name: 'env A=1 sh -c', command: `command: ["env", "A=1", "sh", "-c", "./job; rc=$?; ${QUIT}; exit $rc"]`, findings: [] },
  {
    name: 'nice -n 5 bash -c',
    command: `command: ["nice", "-n", "5", "bash", "-c", "./job && ${QUIT}"]`,
    findings: ['quit-skipped-on-failure'],
  },
  { name: 'tini -- sh -c', command: `command: ["tini", "--", "sh", "-c", "./job; ${QUIT}"]`, findings: ['exit-code-lost'] },
  { name: 'dumb-init -- sh -c', command: `command: ["dumb-init", "--", "sh", "-c", "./job; ${QUIT}"]`, findings: ['exit-code-lost'] },
  // An init's options that take a value: the word after them is the value, not the command.
  {
    name: 'tini -e 143 -- sh -c',
    command: `command: ["tini", "-e", "143", "--", "sh", "-c", "./job; ${QUIT}"]`,
    findings: ['exit-code-lost'],
  },
  {
    name: 'tini -p SIGTERM -- sh -c',
    command: `command: ["tini", "-p", "SIGTERM", "--", "sh", "-c", "./job; ${QUIT}"]`,
    findings: ['exit-code-lost'],
  },
  {
    name: 'dumb-init --rewrite 15:2 -- sh -c',
    command: `command: ["dumb-init", "--rewrite", "15:2", "--", "sh", "-c", "./job; ${QUIT}"]`,
    findings: ['exit-code-lost'],
  },
  // kubexit in a script stops only sidecars run under kubexit too: an injected istio-proxy is not.
  { name: 'kubexit in a script', script: 'echo start\nkubexit ./job', findings: ['unwrapped'] },
  { name: 'exec sh -c', command: `command: ["exec", "sh", "-c", "./job && ${QUIT}"]`, findings: ['quit-skipped-on-failure'] },
  {
    name: 'a quit that always runs under OnFailure, behind timeout',
    command: `command: ["timeout", "60", "sh", "-c"]\nargs: ["./job; rc=$?; ${QUIT}; exit $rc"]`,
    restartPolicy: 'OnFailure',
    findings: ['onfailure-quit-always'],
  },
  // The status saved is not the job's.
  { name: 'echo done, then x=$(echo $?)', script: `./job\necho done\nx=$(echo $?)\n${QUIT}\nexit $x`, findings: ['exit-code-lost'] },
  { name: 'exit 0 after the quit', script: `./job\n${QUIT}\nexit 0`, findings: ['exit-code-lost'] },
  { name: 'exit $? after the quit', script: `./job\n${QUIT}\nexit $?`, findings: ['exit-code-lost'] },
  { name: 'a bare exit after the quit', script: `./job\n${QUIT}\nexit`, findings: ['exit-code-lost'] },
  { name: 'job | tee log; rc=$? without pipefail', script: `./job | tee log\nrc=$?\n${QUIT}\nexit $rc`, findings: ['exit-code-lost'] },
  {
    name: 'job | tee log under pipefail',
    command: `command: ["bash", "-o", "pipefail", "-c", "./job | tee log; rc=$?; ${QUIT}; exit $rc"]`,
    findings: [],
  },
  { name: 'job & wait; rc=$?', script: `./job &\nwait\nrc=$?\n${QUIT}\nexit $rc`, findings: ['exit-code-lost'] },
  { name: 'job & wait $!; rc=$?', script: `./job &\nwait $!\nrc=$?\n${QUIT}\nexit $rc`, findings: [] },
  // The status kept: no error.
  {
    name: 'rc kept, if [ $rc -ne 0 ]; then exit $rc; fi',
    script: `./job\nrc=$?\n${QUIT}\nif [ $rc -ne 0 ]; then exit $rc; fi`,
    findings: [],
  },
  {
    name: 'rc kept, if [ $rc -ne 0 ]; then exit 1; fi',
    script: `./job\nrc=$?\n${QUIT}\nif [ "$rc" -ne 0 ]; then\n  exit 1\nfi`,
    findings: [],
  },
  { name: 'rc kept, in a case', script: `./job\nrc=$?\n${QUIT}\ncase $rc in\n  0) echo ok ;;\n  *) exit $rc ;;\nesac`, findings: [] },
  { name: 'rc kept in an EXIT trap', script: `trap 'rc=$?; ${QUIT}; exit $rc' EXIT\n./job`, findings: [] },
  // Methods read as curl and wget read them.
  { name: 'curl -sfXPOST', script: './job\nrc=$?\ncurl -sfXPOST http://localhost:15020/quitquitquit\nexit $rc', findings: [] },
  { name: 'curl -fsSX POST', script: './job\nrc=$?\ncurl -fsSX POST http://localhost:15020/quitquitquit\nexit $rc', findings: [] },
  { name: 'curl --request POST', script: './job\nrc=$?\ncurl --request POST localhost:15020/quitquitquit\nexit $rc', findings: [] },
  {
    name: 'curl --request=POST, which curl rejects',
    script: './job\nrc=$?\ncurl --request=POST localhost:15020/quitquitquit\nexit $rc',
    findings: ['quit-wrong-method', 'unwrapped'],
  },
  { name: 'curl -d ""', script: "./job\nrc=$?\ncurl -s -d '' localhost:15020/quitquitquit\nexit $rc", findings: [] },
  { name: 'a bare curl is a GET', script: './job\nrc=$?\ncurl -s localhost:15020/quitquitquit\nexit $rc', findings: ['quit-wrong-method'] },
  {
    name: 'busybox wget --post-data',
    script: "./job\nrc=$?\nbusybox wget -qO- --post-data '' http://127.0.0.1:15020/quitquitquit\nexit $rc",
    findings: [],
  },
  {
    name: 'pilot-agent request POST quitquitquit',
    script: './job\nrc=$?\npilot-agent request POST quitquitquit\nexit $rc',
    findings: ['quit-admin-port'],
  },
  // Quits the old reading did not see.
  { name: "a quit inside bash -c '...'", script: `./job\nrc=$?\nbash -c '${QUIT}'\nexit $rc`, findings: [] },
  { name: 'a quit inside sh -c "..."', script: `./job\nrc=$?\nsh -c "${QUIT}"\nexit $rc`, findings: [] },
  { name: 'a quit inside $(...)', script: `./job\nrc=$?\nout=$(${QUIT})\nexit $rc`, findings: [] },
  {
    name: 'a URL in a variable of the script',
    script: 'URL=http://127.0.0.1:15020/quitquitquit\n./job\nrc=$?\ncurl -XPOST "$URL"\nexit $rc',
    findings: [],
  },
  {
    name: "a URL in the container's env",
    script: './job\nrc=$?\ncurl -XPOST $QUIT_URL\nexit $rc',
    container: 'env: [{name: QUIT_URL, value: "http://localhost:15020/quitquitquit"}]',
    findings: [],
  },
  {
    name: 'pkill pilot-agent where the pod shares processes',
    script: './job\nrc=$?\npkill -INT pilot-agent\nexit $rc',
    podSpec: 'shareProcessNamespace: true',
    findings: [],
  },
  { name: 'pkill pilot-agent where it does not', script: './job\nrc=$?\npkill -INT pilot-agent\nexit $rc', findings: ['unwrapped'] },
  {
    name: 'a one-line Python POST',
    script: `./job\nrc=$?\npython3 -c "import urllib.request as u; u.urlopen(u.Request('http://127.0.0.1:15020/quitquitquit', method='POST'))"\nexit $rc`,
    findings: [],
  },
  {
    name: 'a one-line Node POST',
    script: `./job\nrc=$?\nnode -e "fetch('http://localhost:15020/quitquitquit', {method: 'POST'})"\nexit $rc`,
    findings: [],
  },
  // When the quit runs.
  { name: 'a quit only in a TERM trap', script: `trap '${QUIT}' TERM\n./job`, findings: ['quit-only-on-signal'] },
  { name: 'a quit only in an INT and HUP trap', script: `trap '${QUIT}' INT HUP\n./job\nexit $?`, findings: ['quit-only-on-signal'] },
  { name: 'a quit in a TERM and an EXIT trap', script: `trap 'rc=$?; ${QUIT}; exit $rc' TERM EXIT\n./job`, findings: [] },
  { name: 'a quit before the job', script: `${QUIT}\n./job`, findings: ['quit-before-job'] },
  { name: 'a quit before the job, its status kept', script: `${QUIT}\n./job\nexit $?`, findings: ['quit-before-job'] },
  { name: 'a quit sent in the background, not waited for', script: `./job\nrc=$?\n${QUIT} &\nexit $rc`, findings: ['unwrapped'] },
  { name: 'a quit sent in the background, then wait', script: `./job\nrc=$?\n${QUIT} &\nwait\nexit $rc`, findings: [] },
  {
    name: "a POST to Envoy's health port 15021",
    script: './job\nrc=$?\ncurl -XPOST localhost:15021/quitquitquit\nexit $rc',
    findings: ['quit-unheard', 'unwrapped'],
  },
  { name: 'set -e, then the quit', script: `set -e\n./job\n${QUIT}`, findings: ['quit-skipped-on-failure'] },
  {
    name: 'set -e, the job tested by if',
    script: `set -e\nif ./job; then echo ok; else echo failed; fi\n${QUIT}`,
    findings: ['exit-code-lost'],
  },
  { name: 'set -e, the job || true', script: `set -e\n./job || true\n${QUIT}`, findings: ['exit-code-lost'] },
  { name: 'a function that quits, called at the end', script: `quit() { ${QUIT}; }\n./job\nrc=$?\nquit\nexit $rc`, findings: [] },
  { name: 'a function that quits, never called', script: `quit() { ${QUIT}; }\n./job`, findings: ['unwrapped'] },
  { name: 'a subshell exit does not end the script', script: `./job\nrc=$?\n(exit 0)\n${QUIT}\nexit $rc`, findings: [] },
  { name: '! job flips the status: a failure saved as 0', script: `! ./job\nrc=$?\n${QUIT}\nexit $rc`, findings: ['exit-code-lost'] },
  { name: 'exec replaces the shell before the quit', script: `exec ./job\n${QUIT}`, findings: ['unwrapped'] },
  { name: 'a sourced file is read past', script: `. /etc/profile.d/x.sh\n./job\n${QUIT}\nexit 0`, findings: ['exit-code-lost'] },
  // The wrapper set not to quit.
  {
    name: 'istio-job-run --quit never',
    command: 'command: ["istio-job-run", "--quit", "never", "--", "./job"]',
    findings: ['wrapper-never-quits'],
  },
  {
    name: 'istio-job-run --quit=never',
    command: 'command: ["istio-job-run", "--quit=never", "--", "./job"]',
    findings: ['wrapper-never-quits'],
  },
  {
    name: 'ISTIO_JOB_RUN_QUIT=never',
    command: 'command: ["istio-job-run", "--", "./job"]',
    container: 'env: [{name: ISTIO_JOB_RUN_QUIT, value: never}]',
    findings: ['wrapper-never-quits'],
  },
  {
    name: 'istio-job-run --quit on-success under Never',
    command: 'command: ["istio-job-run", "--quit", "on-success", "--", "./job"]',
    findings: ['wrapper-never-quits'],
  },
  {
    name: 'istio-job-run --quit never under OnFailure',
    command: 'command: ["istio-job-run", "--quit", "never", "--", "./job"]',
    restartPolicy: 'OnFailure',
    findings: ['wrapper-never-quits'],
  },
  {
    name: 'istio-job-run --quit on-success under OnFailure',
    command: 'command: ["istio-job-run", "--quit", "on-success", "--", "./job"]',
    restartPolicy: 'OnFailure',
    findings: [],
  },
  // Input the old reading got wrong.
  { name: 'an unterminated heredoc runs to the end', script: `./job\nrc=$?\n${QUIT}\ncat <<EOF\nexit $rc`, findings: ['exit-code-lost'] },
  {
    name: 'a 100,000-statement script, its quit at the end',
    script: `${'echo step\n'.repeat(100_000)}./job\nrc=$?\n${QUIT}\nexit $rc`,
    findings: [],
  },
];

describe('--check on the shapes of scripts, as the shell runs them', () => {
  for (const entry of CASES) {
    test(`${entry.name}: ${entry.findings.length === 0 ? 'nothing' : entry.findings.join(', ')}`, () => {
      const yaml = manifest(entry);
      const found = [
        ...new Set(
          check(source(yaml))
            .filter((finding) => finding.level !== 'info')
            .map((finding) => finding.rule),
        ),
      ].sort();
      assert.deepEqual(found, [...entry.findings].sort(), yaml.length < 2000 ? yaml : entry.name);
    });
  }
});

describe('the outcome of a script', () => {
  const paths = (script: string, errexit = false) => readScript(script, { errexit }).outcome;
  test('the job failing ends with the status kept; succeeding, 0', () => {
    const outcome = paths(`./job\nrc=$?\n${QUIT}\nexit $rc`);
    assert.deepEqual(
      outcome.failure.map((path) => [path.status, path.events.map((event) => event.what)]),
      [[1, ['work', 'speak']]],
    );
    assert.deepEqual(
      outcome.success.map((path) => path.status),
      [0],
    );
  });
  test('a test the script cannot decide is followed both ways', () => {
    const outcome = paths(`if [ -f /data/x ]; then ./job; fi\n${QUIT}`);
    assert.equal(outcome.success.length, 2);
  });
  test('a sourced file leaves the outcome known', () => {
    assert.ok(paths('. ./env.sh\n./job').success.every((path) => path.unknown === undefined));
  });
  test('functions that each call the next twice, 20 levels deep, read in bounded time', () => {
    const script = `${Array.from({ length: 20 }, (_, i) => `f${i}() { f${i + 1}; f${i + 1}; }`).join('\n')}\nf20() { ${QUIT}; }\nf0\n`;
    const facts = readScript(script, { errexit: false });
    assert.ok(facts.outcome.unknown.success !== undefined);
    assert.equal(facts.requests.length, 1);
  });
});
