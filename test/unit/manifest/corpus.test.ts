// --check and --inject over the real manifests of ../shared/corpus (public repositories' Jobs, CronJobs and
// Pods, not kept here), against the judgement in test/corpus-judgement.txt: every finding there, on its line,
// and nothing else; --inject rewrites the files judged so, refuses those judged so, leaves the rest byte for
// byte, is idempotent, and leaves nothing for `unwrapped`. A clone without ../shared/corpus skips this and says so.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { inject } from '../../../src/manifest/inject/inject.ts';
import { check } from '../../../src/manifest/check/rules.ts';
import { loadShellParser } from '../../../src/manifest/script/shell.ts';
import { source } from '../../support/manifest.ts';
import { root } from '../../support/process.ts';

const CORPUS = join(root, '..', 'shared', 'corpus');
const IMAGE = 'registry.example/istio-job-run:9.9.9';

interface Judgement {
  readonly findings: string[];
  inject?: 'rewritten' | 'unchanged' | 'refused' | undefined;
}

function judgements(): Map<string, Judgement> {
  const map = new Map<string, Judgement>();
  for (const line of readFileSync(join(root, 'test', 'corpus-judgement.txt'), 'utf8').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const [file = '', ...rest] = line.split(/\s+/);
    const entry = map.get(file) ?? { findings: [] };
    map.set(file, entry);
    if (rest[0] === 'inject') entry.inject = rest[1] as Judgement['inject'];
    else if (rest[0] !== 'clean') entry.findings.push(rest.join(' '));
  }
  return map;
}

const available = existsSync(CORPUS);
if (!available) process.stderr.write(`corpus test skipped: ${CORPUS} is not there (it comes with the project's CI)\n`);

describe('the real manifests of ../shared/corpus, as a reviewer judged them', { skip: !available && `${CORPUS} is missing` }, () => {
  before(loadShellParser);
  const judged = judgements();
  const files = available ? readdirSync(CORPUS).filter((file) => /\.ya?ml$/.test(file)) : [];

  test('every file of the corpus is judged, and every judgement names a file of it', () => {
    assert.deepEqual([...judged.keys()].sort(), [...files].sort());
  });

  for (const file of files) {
    const text = readFileSync(join(CORPUS, file), 'utf8');
    const judgement = judged.get(file) ?? { findings: [] };
    test(`${file}: --check finds ${judgement.findings.length === 0 ? 'nothing' : judgement.findings.join(', ')}`, () => {
      const found = check(source(text, file)).map((finding) => `${finding.line} ${finding.rule}`);
      assert.deepEqual(found.sort(), [...judgement.findings].sort());
    });
    test(`${file}: --inject ${judgement.inject ?? 'unchanged'}${judgement.inject === 'refused' ? '' : ', idempotent'}`, () => {
      const once = inject(source(text, file), { image: IMAGE, native: false });
      if (judgement.inject === 'refused') {
        assert.equal(once.kind, 'refused');
        return;
      }
      assert.equal(once.kind, 'done', once.kind === 'refused' ? once.problems.join('\n') : '');
      const out = (once as { text: string }).text;
      if (judgement.inject === 'rewritten') {
        assert.notEqual(out, text);
        assert.deepEqual(
          check(source(out, file)).filter((finding) => finding.rule === 'unwrapped'),
          [],
          'nothing left for unwrapped',
        );
      } else assert.equal(out, text, 'byte for byte');
      const twice = inject(source(out, file), { image: IMAGE, native: false });
      assert.equal((twice as { text: string }).text, out);
    });
  }
});
