// --check's rule of bash's constructs in a script that another shell runs (sh in the image, dash, busybox's ash),
// from manifests that trip it and manifests that must not; the shells' behaviour is the table's
// (src/manifest/script/dialect.ts, proven against the shells by test/unit/manifest/script/dialect.test.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { check } from '../../../../src/manifest/check/rules.ts';
import { messageOf } from '../../../../src/manifest/check/finding.ts';
import { source } from '../../../support/manifest.ts';
import { type Case, checkCases, INJECTED, job, pod } from './cases.ts';

const QUIT = 'curl -fsS -XPOST http://127.0.0.1:15020/quitquitquit';
/** A job whose script has LINE between the job and the quit, run by SHELL in IMAGE. */
const scripted = (shell: string, image: string, line: string, first = ''): string =>
  job(
    pod(`command: ["${shell}", "-c"]\nargs:\n- |\n  ${first}./task.sh; rc=$?\n  ${line}\n  ${QUIT}\n  exit $rc\n`).replace(
      'image: example',
      `image: ${image}`,
    ),
    { podMeta: INJECTED },
  );

const CASES: readonly Case[] = [
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

checkCases('dialect', CASES);

test('the message names the shell, why it is that one, and a #! line the shell reads as a comment', () => {
  const said = (yaml: string): string[] =>
    check(source(yaml))
      .filter((one) => one.rule === 'bashism-under-sh')
      .map(messageOf);
  assert.match(
    said(scripted('sh', 'registry.example/app:1.0', 'args=(a b)'))[0] ?? '',
    /sh here is taken to be dash .*does not say which sh/,
  );
  assert.match(said(scripted('sh', 'debian:12', 'args=(a b)', '#!/bin/bash\n  '))[0] ?? '', /#! line is a comment/);
  assert.match(said(scripted('sh', 'alpine:3.20', 'args=(a b)'))[0] ?? '', /sh in alpine:3\.20 is busybox's ash/);
});
