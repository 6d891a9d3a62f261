// The cases of the script theme for test/unit/manifest/check/script.test.ts: manifests that trip each rule and manifests
// that must not. A rule's cases live in one theme's file.

import { type Case, INJECTED, job, pod, TRAP, WRAPPED } from './cases.ts';

export const CASES: readonly Case[] = [
  // exit-code-lost
  {
    name: 'a script whose last command is the quit',
    rule: 'exit-code-lost',
    yaml: job(pod('command: ["sh", "-c", "./task.sh; curl -X POST http://127.0.0.1:15020/quitquitquit"]'), { podMeta: INJECTED }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a quit that swallows its own failure, on the last line of a literal block',
    rule: 'exit-code-lost',
    yaml: job(pod('command: ["/bin/bash", "-c"]\nargs:\n- |\n  ./task.sh\n  curl -s -XPOST localhost:15020/quitquitquit || true\n')),
    expect: { at: 'curl -s', level: 'error' },
  },
  {
    name: 'a trap that quits, then exits 0',
    rule: 'exit-code-lost',
    yaml: job(
      pod(
        'command: ["bash", "-c"]\nargs:\n- |\n  quit() {\n    curl -XPOST 127.0.0.1:15020/quitquitquit\n    exit 0\n  }\n  trap quit ERR EXIT\n  ./task.sh\n',
      ),
    ),
    expect: { at: 'exit 0', level: 'error' },
  },
  {
    name: 'a file sourced before the job (rendered secrets), then the quit last',
    rule: 'exit-code-lost',
    yaml: job(
      pod(
        'command: ["/bin/sh", "-c"]\nargs:\n- |\n  . /vault/secrets/config\n  ./task.sh\n  curl -fsS -X POST http://127.0.0.1:15020/quitquitquit',
      ),
    ),
    expect: { at: 'curl -fsS', level: 'error' },
  },
  {
    name: 'a script that keeps its code',
    rule: 'exit-code-lost',
    yaml: job(
      pod(
        'command: ["/bin/sh", "-c"]\nargs:\n- |\n  ./task.sh\n  code=$?\n  curl -fsS -X POST http://127.0.0.1:15020/quitquitquit\n  exit $code',
      ),
    ),
  },
  {
    name: 'a script under sh -ec whose last command is the quit',
    rule: 'exit-code-lost',
    yaml: job(pod('command: ["sh", "-ec", "./task.sh; curl -X POST http://127.0.0.1:15020/quitquitquit"]'), { restartPolicy: 'OnFailure' }),
  },
  {
    name: 'a script under set -e whose last line is the quit',
    rule: 'exit-code-lost',
    yaml: job(
      pod(
        'command: ["bash", "-c"]\nargs:\n- |\n  set -euo pipefail\n  ./task.sh\n  curl -X POST http://127.0.0.1:15020/quitquitquit\n',
        'OnFailure',
      ),
    ),
  },
  {
    name: 'a trap on EXIT that keeps the status',
    rule: 'exit-code-lost',
    yaml: job(
      pod(
        'command: ["bash", "-c"]\nargs:\n- |\n  trap "rc=\\$?; curl -XPOST localhost:15020/quitquitquit; exit \\$rc" EXIT\n  ./task.sh\n',
      ),
    ),
  },
  {
    name: 'a semicolon inside quotes',
    rule: 'exit-code-lost',
    yaml: job(pod('command: ["sh", "-c", "curl -XPOST \\"localhost:15020/quitquitquit;\\"; ./task.sh"]')),
  },
  // quit-skipped-on-failure
  {
    name: 'a quit after && under restartPolicy Never',
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["/bin/bash", "-c"]\nargs:\n- |\n  ./task.sh && curl -XPOST localhost:15020/quitquitquit # stop the proxy\n')),
    expect: { at: './task.sh &&', level: 'error' },
  },
  {
    name: 'a quit at the end of a set -e script under Never',
    rule: 'quit-skipped-on-failure',
    yaml: job(
      pod('command: ["sh", "-c"]\nargs:\n- |\n  set -e\n  ./migrate\n  wget -q -O- --post-data= http://127.0.0.1:15020/quitquitquit\n'),
    ),
    expect: { at: 'wget', level: 'error' },
  },
  {
    name: "a quit after the job's || exit",
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["sh", "-c", "./task || exit 3\\ncurl -XPOST localhost:15020/quitquitquit"]')),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a Dapr shutdown after &&',
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["sh", "-c", "./task && curl -X POST localhost:3500/v1.0/shutdown"]'), {
      podMeta: 'annotations:\n  dapr.io/enabled: "true"',
    }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'bash -eo pipefail -c: a failed job in a pipeline ends the script before the quit',
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["bash", "-eo", "pipefail", "-c", "./task | tee /tmp/log; curl -XPOST localhost:15020/quitquitquit"]')),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'bash -e -c without pipefail: a failed job in a pipeline goes on to the quit',
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["bash", "-e", "-c", "./task | tee /tmp/log; curl -XPOST localhost:15020/quitquitquit"]')),
  },
  {
    name: 'a quit after && under OnFailure',
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["sh", "-c", "./task && curl -XPOST localhost:15020/quitquitquit"]', 'OnFailure')),
  },
  {
    name: 'a quit in a trap on EXIT under set -e',
    rule: 'quit-skipped-on-failure',
    yaml: job(pod('command: ["sh", "-ec", "trap \'curl -XPOST localhost:15020/quitquitquit\' EXIT; ./task"]')),
  },
  // quit-in-exec-args
  {
    name: 'a quit as more args after a program',
    rule: 'quit-in-exec-args',
    yaml: job(pod('command: ["/app/wait-for-deps", "&&", "curl", "-XPOST", "localhost:15020/quitquitquit"]'), { podMeta: INJECTED }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a quit in the script of sh -c',
    rule: 'quit-in-exec-args',
    yaml: job(pod('command: ["sh", "-c", "./task; curl -XPOST localhost:15020/quitquitquit"]')),
  },
  // folded-script
  {
    name: 'a folded script of two commands',
    rule: 'folded-script',
    yaml: job(pod('command:\n- sh\n- -c\n- >\n  ./task --host=127.0.0.1\n  curl http://localhost:9091/quitquitquit\n')),
    expect: { at: 'curl http', level: 'error' },
  },
  {
    name: 'a folded script whose joined loop the shell rejects',
    rule: 'folded-script',
    yaml: job(pod('command:\n- sh\n- -c\n- >\n  ./task\n  for url in $CSQL_PROXY_QUIT_URLS ; do\n    curl $url\n  done\n')),
    expect: { at: 'for url', level: 'error' },
  },
  {
    name: 'a folded command continued by its options',
    rule: 'folded-script',
    yaml: job(pod('command:\n- sh\n- -c\n- >\n  exec ./task\n  --host=127.0.0.1\n  --port=5432\n')),
  },
  {
    name: 'a literal script of two commands',
    rule: 'folded-script',
    yaml: job(pod('command:\n- sh\n- -c\n- |\n  ./task\n  echo done\n')),
  },
  // duplicate-key
  {
    name: 'a name written twice',
    rule: 'duplicate-key',
    yaml: job(pod(WRAPPED), { jobMeta: 'labels: {a: b}\nname: again' }),
    expect: { at: 'name: again', level: 'warning' },
  },
  { name: 'each key once', rule: 'duplicate-key', yaml: job(pod(WRAPPED)) },
  // wait-after-work
  {
    name: 'a readiness wait after the work',
    rule: 'wait-after-work',
    yaml: job(
      pod(
        `command: ["bash", "-ec"]\nargs:\n- |\n  psql -c 'select 1'\n  until curl -fsI http://localhost:15021/healthz/ready; do sleep 3; done\n  curl -X POST http://localhost:15020/quitquitquit\n`,
        'OnFailure',
      ),
    ),
    expect: { at: 'until curl', level: 'warning' },
  },
  {
    name: 'a readiness wait before the work',
    rule: 'wait-after-work',
    yaml: job(
      pod(
        `command: ["bash", "-ec"]\nargs:\n- |\n  until curl -fsI http://localhost:15021/healthz/ready; do sleep 3; done\n  psql -c 'select 1'\n  curl -X POST http://localhost:15020/quitquitquit\n`,
        'OnFailure',
      ),
    ),
  },
  // shell-syntax
  {
    name: 'an if without fi',
    rule: 'shell-syntax',
    yaml: job(pod('command: ["sh", "-c", "if ./task; then echo ok"]')),
    expect: { at: 'command:', level: 'warning' },
  },
  { name: 'a script the shell reads', rule: 'shell-syntax', yaml: job(pod('command: ["sh", "-c", "if ./task; then echo ok; fi"]')) },
  {
    name: 'a script ending in a line continuation',
    rule: 'shell-syntax',
    yaml: job(pod('command: ["sh", "-ec"]\nargs:\n- |\n  exec ./task \\\n    --flag \\\n')),
  },
  // quit-before-job
  {
    name: 'a quit before the job',
    rule: 'quit-before-job',
    yaml: job(pod('command: ["/bin/sh", "-c", "curl -XPOST localhost:15020/quitquitquit; ./task.sh"]'), { podMeta: INJECTED }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a quit after the job',
    rule: 'quit-before-job',
    yaml: job(pod('command: ["/bin/sh", "-c", "./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
  },
  // sh-pipefail
  {
    name: 'set -eo pipefail under sh -ec',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["sh", "-ec", "set -eo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
    expect: { at: 'command:', level: 'warning' },
  },
  {
    name: 'set -o pipefail under sh -c, without -e',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["/bin/sh", "-c", "set -o pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
    expect: { at: 'command:', level: 'warning' },
  },
  {
    name: 'set -euo pipefail under dash',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["dash", "-c", "set -euo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
    expect: { at: 'command:', level: 'warning' },
  },
  {
    name: 'set -o pipefail -e under sh',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["sh", "-c", "set -o pipefail -e; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
    expect: { at: 'command:', level: 'warning' },
  },
  {
    name: 'set -eo pipefail under sh in a Debian image',
    rule: 'sh-pipefail',
    yaml: job(
      pod('command: ["sh", "-ec", "set -eo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]').replace(
        'image: example',
        'image: docker.io/library/debian:12',
      ),
      { podMeta: INJECTED },
    ),
    expect: { at: 'command:', level: 'warning' },
  },
  ...['alpine:3.20', 'docker.io/library/busybox:1.36', 'python:3.12-alpine', 'curlimages/curl:8.6.0'].map((image) => ({
    name: `set -eo pipefail under sh in ${image}, whose sh is ash`,
    rule: 'sh-pipefail' as const,
    yaml: job(
      pod('command: ["sh", "-ec", "set -eo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]').replace(
        'image: example',
        `image: ${image}`,
      ),
      { podMeta: INJECTED },
    ),
  })),
  {
    name: 'set -eo pipefail under bash',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["bash", "-c", "set -eo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
  },
  {
    name: 'set -eo pipefail under ash',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["ash", "-c", "set -eo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
  },
  {
    name: 'set +o pipefail under sh',
    rule: 'sh-pipefail',
    yaml: job(pod('command: ["sh", "-c", "set +o pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }),
  },
  {
    name: 'set -eo pipefail under busybox sh',
    rule: 'sh-pipefail',
    yaml: job(
      pod('command: ["busybox", "sh", "-c", "set -eo pipefail; ./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'),
      { podMeta: INJECTED },
    ),
  },
  // quit-only-on-signal
  {
    name: 'a quit only in a trap on TERM',
    rule: 'quit-only-on-signal',
    yaml: job(pod(`command: ["/bin/sh", "-c", "trap 'curl -XPOST localhost:15020/quitquitquit' TERM; ./task.sh"]`), { podMeta: INJECTED }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a quit in a trap on TERM and EXIT',
    rule: 'quit-only-on-signal',
    yaml: job(pod(`command: ["/bin/sh", "-c", "trap 'curl -XPOST localhost:15020/quitquitquit' TERM EXIT; ./task.sh"]`), {
      podMeta: INJECTED,
    }),
  },
  // wrapper-never-quits
  {
    name: 'istio-job-run --quit never under Never',
    rule: 'wrapper-never-quits',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit", "never", "--"]\nargs: ["./task.sh"]'), { podMeta: INJECTED }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'istio-job-run --quit on-success under OnFailure',
    rule: 'wrapper-never-quits',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit", "on-success", "--"]\nargs: ["./task.sh"]', 'OnFailure'), {
      podMeta: INJECTED,
    }),
  },

  // hand-rolled-quit
  {
    name: 'a quit that works, with no wait before the job: it lacks the wait, the retry and needs curl',
    rule: 'hand-rolled-quit',
    yaml: job(
      pod('command: ["/bin/sh", "-c"]\nargs:\n- |\n  ./task.sh; rc=$?\n  curl -fsS -XPOST http://127.0.0.1:15020/quitquitquit\n  exit $rc'),
      {
        podMeta: INJECTED,
      },
    ),
    expect: { at: 'curl -fsS', level: 'info' },
  },
  {
    name: 'a quit in a trap on EXIT after one wait that is not retried',
    rule: 'hand-rolled-quit',
    yaml: job(
      pod(
        `command: ["sh", "-c"]\nargs:\n- |\n  ${TRAP('localhost:15020/quitquitquit')}\n  wget -q -O- localhost:15021/healthz/ready\n  ./task.sh`,
      ),
      { podMeta: INJECTED },
    ),
    expect: { at: 'trap', level: 'info' },
  },
  {
    name: 'a script that waits in a loop (retries) and quits in a trap: silent',
    rule: 'hand-rolled-quit',
    yaml: job(
      pod(
        `command: ["sh", "-c"]\nargs:\n- |\n  ${TRAP('localhost:15020/quitquitquit')}\n  until curl -fs localhost:15021/healthz/ready; do sleep 1; done\n  ./task.sh`,
      ),
      { podMeta: INJECTED },
    ),
  },
  {
    name: 'a quit of a container that never starts (bash in an Alpine image): shell-missing says so, not this',
    rule: 'hand-rolled-quit',
    yaml: job(pod('command: ["bash", "-c", "./task.sh; rc=$?; wget -qO- --post-data= http://127.0.0.1:15020/quitquitquit; exit $rc"]'), {
      podMeta: INJECTED,
    }).replace('image: example', 'image: alpine:3.20'),
  },
  {
    name: 'a quit that does not work (after &&): its error says so, not this',
    rule: 'hand-rolled-quit',
    yaml: job(pod('command: ["sh", "-c", "./task.sh && curl -XPOST localhost:15020/quitquitquit"]'), { podMeta: INJECTED }),
  },
  {
    name: 'a quit to a native sidecar: native-quit says so, not this',
    rule: 'hand-rolled-quit',
    yaml: job(pod('command: ["sh", "-c", "./task.sh; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: `${INJECTED}\n  sidecar.istio.io/nativeSidecar: "true"`,
    }),
  },
];
