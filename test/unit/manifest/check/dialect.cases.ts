// The cases of the dialect theme for test/unit/manifest/check/dialect.test.ts: manifests that trip each rule and manifests
// that must not. A rule's cases live in one theme's file.

import { type Case, INJECTED, job, pod } from './cases.ts';

const QUIT = 'curl -fsS -XPOST http://127.0.0.1:15020/quitquitquit';
/** A job whose script has LINE between the job and the quit, run by SHELL in IMAGE. */
export const scripted = (shell: string, image: string, line: string, first = ''): string =>
  job(
    pod(`command: ["${shell}", "-c"]\nargs:\n- |\n  ${first}./task.sh; rc=$?\n  ${line}\n  ${QUIT}\n  exit $rc\n`).replace(
      'image: example',
      `image: ${image}`,
    ),
    { podMeta: INJECTED },
  );

export const CASES: readonly Case[] = [
  {
    name: 'an array under sh in a Debian image: a syntax error before the quit',
    rule: 'bashism-under-sh',
    yaml: scripted('sh', 'debian:12', 'args=(--all --verbose)'),
    expect: { at: 'args=(', level: 'error' },
  },
  {
    name: '${PIPESTATUS[0]} under /bin/sh in an image not known: dash assumed, a bad substitution',
    rule: 'bashism-under-sh',
    yaml: scripted('/bin/sh', 'registry.example/app:1.0', 'echo "pipe: ${PIPESTATUS[0]}"'),
    expect: { at: 'PIPESTATUS', level: 'error' },
  },
  {
    name: 'a here-string under busybox sh',
    rule: 'bashism-under-sh',
    yaml: scripted('busybox', 'registry.example/app:1.0', 'cat <<< "done"').replace('["busybox", "-c"]', '["busybox", "sh", "-c"]'),
    expect: { at: '<<<', level: 'error' },
  },
  {
    name: '[[ ]] under sh in Ubuntu, which changes neither the quit nor the status: a warning',
    rule: 'bashism-under-sh',
    yaml: scripted('sh', 'ubuntu:24.04', '[[ -f /tmp/done ]] && echo done'),
    expect: { at: '[[', level: 'warning' },
  },
  {
    name: 'return outside a function under dash: it exits before the quit',
    rule: 'bashism-under-sh',
    yaml: scripted('dash', 'example', '[ "$rc" -eq 0 ] || return "$rc"'),
    expect: { at: 'return', level: 'error' },
  },
  {
    name: 'an array under sh, whose script starts #!/bin/bash: a comment to sh -c',
    rule: 'bashism-under-sh',
    yaml: scripted('sh', 'debian:12', 'args=(--all --verbose)', '#!/bin/bash\n  '),
    expect: { at: 'args=(', level: 'error' },
  },
  {
    name: 'an array under env bash',
    rule: 'bashism-under-sh',
    yaml: scripted('bash', 'debian:12', 'args=(--all --verbose)').replace('["bash", "-c"]', '["env", "bash", "-c"]'),
  },
  {
    name: 'an array under bash',
    rule: 'bashism-under-sh',
    yaml: scripted('bash', 'debian:12', 'args=(--all --verbose)'),
  },
  {
    name: '[[ ]] under sh in Alpine, whose ash has it',
    rule: 'bashism-under-sh',
    yaml: scripted('sh', 'alpine:3.20', '[[ -f /tmp/done ]] && echo done'),
  },
  {
    name: 'an array under sh in a UBI image, whose sh is bash',
    rule: 'bashism-under-sh',
    yaml: scripted('sh', 'registry.access.redhat.com/ubi9/ubi:9.4', 'args=(--all --verbose)'),
  },
  {
    name: 'local inside a function under sh',
    rule: 'bashism-under-sh',
    yaml: scripted('sh', 'debian:12', 'f() { local x=1; echo "$x"; }; f'),
  },
];
