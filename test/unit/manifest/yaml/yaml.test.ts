// YAML as Kubernetes reads it, for --check and --inject: a key written twice keeps its last value, aliases and
// `<<` merge keys stand for what they name, and YAML inside an annotation is checked like the pod's own fields.
// A map of many keys: test/e2e/manifest-size.test.ts.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { inject } from '../../../../src/manifest/inject/inject.ts';
import { check } from '../../../../src/manifest/check/rules.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { get, getIn, text, valueLines } from '../../../../src/manifest/yaml/source.ts';
import { source } from '../../../support/manifest.ts';

await loadShellParser();

const rules = (yaml: string): string[] => check(source(yaml)).map((finding) => `${finding.line} ${finding.rule}`);

describe('duplicate keys', () => {
  test('the last value wins, one warning on its line, and the rest is still checked', () => {
    const yaml = [
      'kind: Job',
      'metadata: {name: j}',
      'spec:',
      '  template:',
      '    metadata:',
      '      labels:',
      '        sidecar.istio.io/inject: "false"',
      '        sidecar.istio.io/inject: "true"',
      '    spec:',
      '      restartPolicy: Never',
      '      containers:',
      '      - {name: job, image: x, command: [./task]}',
      '',
    ].join('\n');
    assert.deepEqual(rules(yaml), ['8 duplicate-key', '12 unwrapped']);
  });
});

describe('aliases and merge keys', () => {
  test('a pod template reached through an alias is read', () => {
    const yaml = [
      'kind: List',
      'items:',
      '- kind: Job',
      '  metadata: {name: first}',
      '  spec:',
      '    template: &pod',
      '      metadata: {annotations: {linkerd.io/inject: enabled}}',
      '      spec:',
      '        restartPolicy: Never',
      '        containers: [{name: job, image: x, command: [./task]}]',
      '- kind: Job',
      '  metadata: {name: second}',
      '  spec:',
      '    template: *pod',
      '',
    ].join('\n');
    const found = check(source(yaml)).map((finding) => `${finding.line} ${finding.rule} ${finding.problem.split(' ')[1]}`);
    assert.deepEqual(found, ['10 unwrapped first', '10 unwrapped second']);
  });
  test('<< merge keys add the keys a map does not write, its own first', () => {
    const parsed = source('defaults: &d {restartPolicy: OnFailure, dnsPolicy: Default}\nspec:\n  <<: *d\n  restartPolicy: Never\n');
    const spec = get(parsed.documents[0]?.contents, 'spec');
    assert.equal(text(get(spec, 'restartPolicy')), 'Never');
    assert.equal(text(get(spec, 'dnsPolicy')), 'Default');
  });
  test('a merged restartPolicy decides the rules that read it', () => {
    const yaml = [
      'kind: Job',
      'metadata: {name: j, labels: &never {restartPolicy: Never}}',
      'spec:',
      '  template:',
      '    spec:',
      '      <<: *never',
      '      containers:',
      '      - {name: job, image: x, command: [sh, -c, "./task && curl -XPOST localhost:15020/quitquitquit"]}',
      '',
    ].join('\n');
    assert.deepEqual(rules(yaml), ['8 quit-skipped-on-failure']);
    assert.equal(text(getIn(source(yaml).documents[0]?.contents, ['spec', 'template', 'spec', 'restartPolicy'])), 'Never');
  });
});

describe('YAML inside annotations', () => {
  test('a preStop quit inside an annotation is found on the annotation line', () => {
    const yaml = [
      'kind: Job',
      'metadata: {name: j}',
      'spec:',
      '  template:',
      '    metadata:',
      '      annotations:',
      '        sidecar.istio.io/inject: "true"',
      '        sidecar.istio.io/lifecycle: |',
      '          preStop:',
      '            exec: {command: [curl, -XPOST, "localhost:15020/quitquitquit"]}',
      '    spec:',
      '      restartPolicy: Never',
      '      containers: [{name: job, image: x, command: [/opt/istio-job-run, --, ./task]}]',
      '',
    ].join('\n');
    assert.deepEqual(rules(yaml), ['8 prestop-quit']);
  });
});

describe('--inject and anchors', () => {
  const shared = [
    'kind: List',
    'items:',
    '- kind: Job',
    '  metadata: {name: j}',
    '  spec:',
    '    template:',
    '      metadata: {labels: {sidecar.istio.io/inject: "true"}}',
    '      spec:',
    '        restartPolicy: Never',
    '        containers:',
    '        - name: job',
    '          image: x',
    '          command: &cmd ["./task"]',
    '- kind: Deployment',
    '  metadata: {name: d}',
    '  spec:',
    '    template:',
    '      spec:',
    '        containers: [{name: web, image: x, command: *cmd}]',
    '',
  ].join('\n');
  test('a command another document shares through an alias is never changed: the pod is refused, naming the anchor', () => {
    const result = inject(source(shared), { image: 'i', native: false });
    assert.equal(result.kind, 'refused');
    assert.match(
      result.kind === 'refused' ? (result.problems[0] ?? '') : '',
      /Job j: .*inside &cmd \(line 13\), which an alias uses elsewhere/,
    );
  });
  test('an anchor nothing else uses is edited as any node', () => {
    const result = inject(source(shared.replace('command: *cmd}', 'command: [./serve]}')), { image: 'i', native: false });
    assert.equal(result.kind, 'done');
  });
});

describe('a long block scalar', () => {
  test("each of 300,000 lines is found in the file (no call with a line per argument, which the stack can't hold)", () => {
    const lines = Array.from({ length: 300_000 }, (_, index) => `    echo ${index}`);
    const parsed = source(['script: |', ...lines, 'after: 1'].join('\n'));
    const node = get(parsed.documents[0]?.contents, 'script');
    assert.ok(node !== undefined && node !== null);
    const found = valueLines(parsed, node as Parameters<typeof valueLines>[1]);
    assert.equal(found.lineAt(0, 0), 2);
    assert.equal(found.lineAt(299_999, 4), 300_001);
    assert.deepEqual(found.rows[0]?.pieces, [{ column: 0, line: 2 }]);
    assert.deepEqual(found.rows[299_999]?.pieces, [{ column: 0, line: 300_001 }]);
  });
});

describe('the lines of a block scalar', () => {
  const headers = ['|', '|-', '|+', '|2', '| # the script', '>', '>-', '>+'];
  const bodies = [['set -e', 'job', 'curl -X POST x'], ['a', '', '  indented', '', '', 'b'], ['first', 'second', '', ''], [''], ['only']];
  test("each line of the value is found on the file's line that holds it, as the YAML parser reads the value", () => {
    let compared = 0;
    for (const header of headers) {
      for (const body of bodies) {
        for (const newline of ['\n', '\r\n']) {
          const yaml = ['spec:', `  script: ${header}`, ...body.map((line) => (line === '' ? '' : `    ${line}`)), '  after: 1', ''].join(
            newline,
          );
          const parsed = source(yaml);
          const node = getIn(parsed.documents[0]?.contents, ['spec', 'script']);
          assert.ok(node !== undefined && node !== null, yaml);
          const found = valueLines(parsed, node as Parameters<typeof valueLines>[1]);
          const fileLines = yaml.split(newline);
          const value = String((node as { value: unknown }).value);
          value.split('\n').forEach((row, index) => {
            if (row.trim() === '') return;
            const line = found.lineAt(index, 0);
            assert.ok(line !== undefined, `${JSON.stringify(yaml)} row ${index}`);
            assert.ok(
              (fileLines[line - 1] ?? '').includes(row.trim().split(' ')[0] ?? ''),
              `${JSON.stringify(yaml)} row ${index}: line ${line}`,
            );
            // The rows listed say the same.
            assert.equal(found.rows[index]?.pieces[0]?.line, line, `${JSON.stringify(yaml)} row ${index}: the rows`);
            compared++;
          });
          // Past the last row: the last row's line, as the rows say.
          assert.equal(found.lineAt(found.rows.length + 2, 0), found.rows.at(-1)?.pieces[0]?.line, `${JSON.stringify(yaml)}: past the end`);
        }
      }
    }
    assert.ok(compared > 100, `${compared} lines compared`);
  });
});
