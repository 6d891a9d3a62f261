// One line per rule of the shell that the model follows, in the manner of shellcheck's property tests
// (`prop_checkX = verify checkX "script"`): a script and the fact the model must give for it, for the job
// succeeding / for it failing. `./job` is the job's work (it fails in the failing run), `Q` a quit sent to the
// sidecar. A path is written `STATUS EVENTS END`: the status the shell ends with (? not known); its events in
// order, `w` the job's work and `q` the quit (`@EXIT`, `@ERR`: in that trap; `&`: in the background, never
// waited for; `*`: in a loop), `-` none; how it ended (end, exit, errexit, exec), `?` after it when the path is
// not known to its end. Paths of one run are joined by `|`; a trap on a signal adds `~ SIGNAL`. Where a run has
// one path with a known status, dash and bash end with that status after those events, unless the name says
// which shell the rule is of.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { Outcome, Path } from '../../../../src/manifest/script/state.ts';
import { loadShellParser, readScript, type ShellOptions } from '../../../../src/manifest/script/shell.ts';

before(loadShellParser);

const QUIT = 'curl -fsS -XPOST http://127.0.0.1:15020/quitquitquit';

/** A path as one short line (see the top of the file). */
function line(path: Path): string {
  const events = path.events.map(
    (event) =>
      `${event.what === 'work' ? 'w' : 'q'}${event.trap === undefined ? '' : `@${event.trap}`}${event.background === true ? '&' : ''}${event.looped === true ? '*' : ''}`,
  );
  return `${path.status ?? '?'} ${events.length === 0 ? '-' : events.join(',')} ${path.end}${path.unknown === undefined ? '' : '?'}`;
}

/** The outcome as one short line: the succeeding run's paths / the failing run's. */
function fact(outcome: Outcome): string {
  const run = (paths: readonly Path[]): string => paths.map(line).join(' | ');
  const signals = [...new Set(outcome.onSignal.map((said) => said.trap))];
  return `${run(outcome.success)} / ${run(outcome.failure)}${signals.length === 0 ? '' : ` ~ ${signals.join(' ')}`}`;
}

/** A rule: its name, the script (Q for the quit), the fact, and the shell's options when not the default (sh, no -e). */
type Rule = readonly [name: string, script: string, fact: string, options?: Partial<ShellOptions>];

const RULES: readonly Rule[] = [
  // The status of a script is its last command's.
  ['the last command sets the status', './job\nQ', '0 w,q end / 0 w,q end'],
  ['false fails, true and : succeed', 'false\nexit $?', '1 - exit / 1 - exit'],
  ['bookkeeping succeeds and replaces the status', './job\necho done\nrc=$?\nexit $rc', '0 w exit / 0 w exit'],
  // rc=$?
  ['rc=$? keeps the job status', './job\nrc=$?\nQ\nexit $rc', '0 w,q exit / 1 w,q exit'],
  // set -e
  ['set -e ends the shell at a failure', 'set -e\n./job\nQ', '0 w,q end / 1 w errexit'],
  ['set -e from the command line', './job\nQ', '0 w,q end / 1 w errexit', { errexit: true }],
  ['set +e turns it off', 'set -e\nset +e\n./job\nQ', '0 w,q end / 0 w,q end'],
  ['set -e spares the left of ||', 'set -e\n./job || true\nQ', '0 w,q end / 0 w,q end'],
  ['set -e spares a command under !', 'set -e\n! ./job\nQ', '0 w,q end / 0 w,q end'],
  ['set -e spares an if condition', 'set -e\nif ./job; then Q; fi', '0 w,q end / 0 w end'],
  ['set -e ends at a function that fails', 'set -e\nf() { ./job; }\nf\nQ', '0 w,q end / 1 w errexit'],
  // && and ||
  ['&& runs the right on success', './job && Q', '0 w,q end / 1 w end'],
  ['|| runs the right on failure', './job || Q', '0 w end / 0 w,q end'],
  // !
  ['! inverts the status', '! ./job\nexit $?', '1 w exit / 0 w exit'],
  // if
  ['if picks its branch by the condition', 'if ./job; then Q; else exit 3; fi', '0 w,q end / 3 w exit'],
  ['if on a test not known follows both ways', 'if [ -f /data/x ]; then ./job; fi\nQ', '0 w,q end | 0 q end / 0 w,q end | 0 q end'],
  ['a test known from the script decides', 'x=1\nif [ "$x" = 1 ]; then ./job; fi', '0 w end / 1 w end'],
  ['[ N -eq N ] compares numbers', '[ 10 -eq 010 ] && ./job', '0 w end / 1 w end'],
  // case
  ['case runs the first clause that matches', 'x=b\ncase $x in a) ./job ;; b|c) exit 4 ;; esac', '4 - exit / 4 - exit'],
  ['case with no clause that matches is 0', 'x=z\ncase $x in a) exit 4 ;; esac\nexit $?', '0 - exit / 0 - exit'],
  ['case matches a glob', 'x=prod-1\ncase $x in prod-*) ./job ;; esac', '0 w end / 1 w end'],
  // while and until
  ['until stops when the condition succeeds', 'until Q; do sleep 1; done\n./job', '0 q*,w end / 1 q*,w end'],
  ['while false never runs its body', 'while false; do ./job; done\nQ', '0 q end / 0 q end'],
  ["pgrep of a sidecar's process finds it: the sidecar runs while the job does", 'pgrep -f pilot-agent\nexit $?', '0 - exit / 0 - exit'],
  ['pgrep of another process may find it or not', 'pgrep -x job\nexit $?', '0 - exit | 1 - exit / 0 - exit | 1 - exit'],
  ["pgrep -f of what the script's text holds finds the shell itself", 'pgrep -f job\nexit $?', '0 - exit / 0 - exit'],
  [
    'pgrep of another container where the pod does not share its processes finds none',
    'pgrep -x job\nexit $?',
    '1 - exit / 1 - exit',
    { sharesProcesses: false },
  ],
  // Each turn of a loop whose condition is not known may be its last; past a few turns the path is not known.
  [
    'pgrep may find the process or not: a polling loop ends',
    'while pgrep -x job >/dev/null; do sleep 5; done\nQ',
    `${'0 q end | '.repeat(4)}? - exit? / ${'0 q end | '.repeat(4)}? - exit?`,
  ],
  ['a loop that may not end is not known', 'while true; do ./job && break; done\nQ', '0 w,q end / ? w,w,w,w exit?'],
  // for
  ['for runs its body once per known word', 'for i in 1 2 3; do ./job; done\nQ', '0 w,w,w,q end / 0 w,w,w,q end'],
  ['for over words not known runs no time or once', 'for i in $LIST; do ./job; done', '0 - end | 0 w end / 0 - end | 1 w end'],
  ['for over the quit URLs runs once', 'for url in $CSQL_PROXY_QUIT_URLS; do curl -XPOST $url; done', '0 q* end / 0 q* end'],
  ['break leaves the loop, its status 0', 'for i in 1 2 3; do ./job; break; done', '0 w end / 0 w end'],
  // functions and return
  ['return sets a function status', 'f() { ./job; return 5; }\nf\nexit $?', '5 w exit / 5 w exit'],
  ['a function status feeds ||', 'f() { return 3; }\nf || Q', '0 q end / 0 q end'],
  [
    'return outside a function exits (as in dash; bash refuses it and goes on)',
    './job\nreturn 2\nQ',
    '2 w exit / 2 w exit',
    { dialect: 'dash' },
  ],
  ['bash refuses a return outside a function and goes on', './job\nreturn 2\nQ', '0 w,q end / 0 w,q end', { dialect: 'bash' }],
  ['return of a word that is no number: dash ends with 2', 'return abc\nQ', '2 - exit / 2 - exit', { dialect: 'dash' }],
  // subshells
  ['exit in a subshell ends only it', '(./job; exit 7)\nrc=$?\nQ\nexit $rc', '7 w,q exit / 7 w,q exit'],
  ['set -e sees a subshell fail', 'set -e\n(./job)\nQ', '0 w,q end / 1 w errexit'],
  ['a subshell variable stays in it', 'x=1\n(x=2)\nexit $x', '1 - exit / 1 - exit'],
  // $( )
  ['an assignment takes its substitution status', 'out=$(./job)\nrc=$?\nQ\nexit $rc', '0 w,q exit / 1 w,q exit'],
  ['$(echo N) is known', 'x=$(echo 3)\nexit $x', '3 - exit / 3 - exit'],
  // pipelines and pipefail
  ['a pipeline has its last command status', './job | tee log\nrc=$?\nQ\nexit $rc', '0 w,q exit / 0 w,q exit'],
  [
    'pipefail keeps a failure in a pipeline (bash; dash refuses it, below)',
    'set -o pipefail\n./job | tee log\nexit $?',
    '0 w exit / 1 w exit',
  ],
  ['pipefail from the command line', './job | tee log\nexit $?', '0 w exit / 1 w exit', { pipefail: true }],
  ['dash refuses set -o pipefail and ends with 2', 'set -o pipefail\n./job', '2 - exit / 2 - exit', { dialect: 'dash' }],
  ['! before a pipeline inverts the whole', '! ./job | tee log\nexit $?', '1 w exit / 1 w exit'],
  // exit
  ['exit with no number keeps the last status', './job\nexit', '0 w exit / 1 w exit'],
  ['exit N is taken modulo 256', './job\nexit 300', '44 w exit / 44 w exit'],
  ['exit with a value not known', './job\nexit $CODE', '? w exit / ? w exit'],
  // & and wait
  ['a quit in the background never waited for', `${'Q'} &\n./job`, '0 q&,w end / 1 q&,w end'],
  ['wait waits for the background', 'Q &\nwait\n./job', '0 q,w end / 1 q,w end'],
  ['wait $! gives the background status', './job &\nwait $!\nrc=$?\nQ\nexit $rc', '0 w,q exit / 1 w,q exit'],
  ['& sets the status 0', './job &\nexit $?', '0 w& exit / 0 w& exit'],
  // traps
  ['an EXIT trap runs at the end and keeps the status', "trap 'Q' EXIT\n./job", '0 w,q@EXIT end / 1 w,q@EXIT end'],
  ['an EXIT trap runs after set -e', "set -e\ntrap 'Q' EXIT\n./job\nexit 0", '0 w,q@EXIT exit / 1 w,q@EXIT errexit'],
  ['an exit in an EXIT trap sets the status', "trap 'Q; exit 9' EXIT\n./job", '9 w,q@EXIT exit / 9 w,q@EXIT exit'],
  ['trap 0 is EXIT', "trap 'Q' 0\n./job", '0 w,q@EXIT end / 1 w,q@EXIT end'],
  ['trap - EXIT clears it', "trap 'Q' EXIT\ntrap - EXIT\n./job", '0 w end / 1 w end'],
  ['an ERR trap runs on a failure (bash; dash has none)', "trap 'Q' ERR\n./job", '0 w end / 1 w,q@ERR end'],
  ['an ERR trap is spared where set -e is', "trap 'Q' ERR\n./job || true", '0 w end / 0 w end'],
  [
    'an ERR trap is not run inside a function without set -E (bash)',
    "trap 'Q' ERR\nf() { ./job; echo on; }\nf",
    '0 w end / 0 w end',
    { dialect: 'bash' },
  ],
  [
    'set -E runs an ERR trap inside a function (bash)',
    "set -E\ntrap 'Q' ERR\nf() { ./job; echo on; }\nf",
    '0 w end / 0 w,q@ERR end',
    { dialect: 'bash' },
  ],
  ['a trap on a signal never runs at a normal end', "trap 'Q' TERM\n./job", '0 w end / 1 w end ~ TERM'],
  ['exec skips the EXIT trap', "trap 'Q' EXIT\nexec ./job", '0 w exec / 1 w exec'],
  // exec, timeout, env and other wrappers
  ['exec replaces the shell', 'exec ./job\nQ', '0 w exec / 1 w exec'],
  ['exec with only redirections runs nothing and goes on', 'exec >/tmp/log 2>&1\n./job\nQ', '0 w,q end / 0 w,q end'],
  ['exec of an fd alone goes on too', 'exec 3>&1\nexit $?', '0 - exit / 0 - exit'],
  ['exec with the redirection first replaces the shell too', 'exec 2>&1 ./job\nQ', '0 w exec / 1 w exec'],
  [
    "the words after a redirection's target are the command's",
    './job\nrc=$?\ncurl -s 2>/dev/null -XPOST localhost:15020/quitquitquit\nexit $rc',
    '0 w,q exit / 1 w,q exit',
  ],
  ['timeout runs its command', 'timeout 60 ./job\nexit $?', '0 w exit / 1 w exit'],
  ['env runs its command', 'env A=1 ./job && Q', '0 w,q end / 1 w end'],
  ['nice and exec in front', 'exec nice -n 5 ./job', '0 w exec / 1 w exec'],
  // sh -c
  ['sh -c runs its script in a child shell', "sh -c './job && exit 4'\nrc=$?\nQ\nexit $rc", '4 w,q exit / 1 w,q exit'],
  ['sh -ec has set -e', "sh -ec './job; Q'", '0 w,q end / 1 w end'],
  ['an exit in sh -c ends only the child', "sh -c 'exit 3'\nQ", '0 q end / 0 q end'],
  // A call of the job's own through loopback (an app's API, a sidecar's API) is work; a quit or a probe is not.
  ['a loopback call that neither quits nor probes is the job', 'curl -fsS -XPOST localhost:8080/api/run\nQ', '0 q,w,q end / 0 q,w,q end'],
  [
    'a loopback call is the job: its status is kept',
    'curl -fsS localhost:3500/v1.0/publish/p/t -d x\nrc=$?\nQ\nexit $rc',
    '0 q,w,q exit / 1 q,w,q exit',
  ],
  ['a readiness probe is not the job', 'curl -fsS localhost:15021/healthz/ready\nexit $?', '0 q exit / 0 q exit'],
  ['sh -c -- SCRIPT: the script is after the --', "sh -c -- 'exit 4'\nexit $?", '4 - exit / 4 - exit'],
  // bash's (( ))
  [
    '(( )) of known values has a known status (bash)',
    'n=0\n((n++))\nrc=$?\n(( n > 0 )) && exit $rc\nexit 9',
    '1 - exit / 1 - exit',
    { dialect: 'bash' },
  ],
  [
    '(( )) of a value not known is either way (bash)',
    '(( N > 0 )) && exit 3\nexit 4',
    '3 - exit | 4 - exit / 3 - exit | 4 - exit',
    { dialect: 'bash' },
  ],
  [
    'a loop with a counter it keeps runs to its end (bash)',
    'n=0\nuntil ./job; do\n  n=$((n+1))\n  (( n >= 30 )) && exit 5\n  sleep 1\ndone\nQ',
    '0 w,q end / 5 w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w,w exit',
    { dialect: 'bash' },
  ],
  // a program that reads its code from a here-document
  [
    'python3 - with a here-document that quits is a quit',
    './job\npython3 - <<\'EOF\'\nimport http.client\nc = http.client.HTTPConnection("localhost", 15020, timeout=2)\nc.request("POST", "/quitquitquit")\nEOF\nexit 0',
    '0 w,q exit / 0 w,q exit',
  ],
  ["a read of Envoy's admin state is not the job", 'curl -s localhost:15000/server_info\nexit $?', '0 q exit / 0 q exit'],
  // eval and source
  ['eval of known words runs them here', "eval './job; exit 6'", '6 w exit / 6 w exit'],
  ['eval of what is not known', 'eval "$CMD"\n./job', '0 w end? / 1 w end?'],
  ['a sourced file is read past: the rest runs', '. ./env.sh\n./job', '0 w end / 1 w end'],
  [
    'a sourced file sets variables not known, those set before it too',
    'code=3\nsource /vault/secrets/config\nexit $code',
    '? - exit / ? - exit',
  ],
  ['a sourced file leaves the job and the quit after it', '. ./env.sh\n./job\nQ', '0 w,q end / 0 w,q end'],
  // variables
  ['${X:-word} takes the word when X is empty', 'CODE=\nexit ${CODE:-5}', '5 - exit / 5 - exit'],
  ['a variable from outside is not known', 'exit ${CODE:-5}', '? - exit / ? - exit'],
  ['a variable set in the script is known', 'code=3\nexit "$code"', '3 - exit / 3 - exit'],
];

describe("the shell's rules, one script each (the succeeding run / the failing run)", () => {
  for (const [name, script, expected, options] of RULES) {
    test(`${name}: ${script.replaceAll('\n', '; ')} => ${expected}`, () => {
      const text = script.replaceAll(/\bQ\b/g, QUIT);
      assert.equal(fact(readScript(text, { errexit: false, ...options }).outcome), expected);
    });
  }
});
