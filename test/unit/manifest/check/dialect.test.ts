// --check's rule of bash's constructs in a script that another shell runs (sh in the image, dash, busybox's ash),
// from manifests that trip it and manifests that must not; the shells' behaviour is the table's
// (src/manifest/script/dialect.ts, proven against the shells by test/unit/manifest/script/dialect.test.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { check } from '../../../../src/manifest/check/rules.ts';
import { messageOf } from '../../../../src/manifest/check/finding.ts';
import { source } from '../../../support/manifest.ts';
import { CASES, scripted } from './dialect.cases.ts';
import { checkCases } from './cases.ts';

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
