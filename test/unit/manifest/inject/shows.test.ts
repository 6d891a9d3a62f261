// A sidecar shows itself: a script's quit of its endpoint or process, or the sidecar's own settings on the pod
// template, give the pod that sidecar (unless the template declines it, or Istio runs ambient). --check and
// --inject then agree: a pod --check calls broken, or whose own quit works without the wrapper's wait before the
// job, is rewritten, or --inject says why it cannot, and --check's
// advice to run --inject is said only where --inject rewrites that pod. One row per shape.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ManifestIo, runManifest } from '../../../../src/manifest/cli/cli.ts';
import { INJECT_ADVICE, messageOf } from '../../../../src/manifest/check/finding.ts';
import { check } from '../../../../src/manifest/check/rules.ts';
import { inject } from '../../../../src/manifest/inject/inject.ts';
import { readPod } from '../../../../src/manifest/pod/pod.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { workloads } from '../../../../src/manifest/yaml/workloads.ts';
import { source } from '../../../support/manifest.ts';
import { SHAPES } from '../../../support/sidecar-shapes.ts';

await loadShellParser();
const IMAGE = 'registry.example/istio-job-run:9.9.9';

/** Each of --check's findings that advises --inject (an error, or the advice to replace a quit that works), and every error, of a text. */
const errorsOf = (text: string): { advising: string[]; all: string[] } => {
  const found = check(source(text));
  const errors = found.filter((finding) => finding.level === 'error');
  return {
    advising: found.filter((finding) => finding.advisesInject && finding.level !== 'warning').map((finding) => finding.rule),
    all: errors.map((f) => f.rule),
  };
};

/** The CLI's --check of TEXT: its lines. */
async function cliCheck(text: string): Promise<string> {
  let out = '';
  const io: ManifestIo = {
    readFile: () => text,
    listDir: () => undefined,
    stdout: (written) => {
      out += written;
    },
    stderr: () => {},
  };
  await runManifest(['--check', 'job.yaml'], 'istio-job-run', '9.9.9', io);
  return out;
}

describe('a sidecar shows itself, and --inject agrees with --check', () => {
  for (const shape of SHAPES) {
    test(shape.name, async () => {
      const [workload] = workloads(source(shape.yaml));
      assert.ok(workload !== undefined);
      const sidecars = readPod(workload, new Map(), undefined)
        .sidecars.filter((sidecar) => sidecar.known)
        .map((sidecar) => `${sidecar.kind.name} ${sidecar.form}`);
      assert.deepEqual(sidecars, shape.sidecar === undefined ? [] : [shape.sidecar], 'the sidecars the pod has');

      const before = errorsOf(shape.yaml);
      const result = inject(source(shape.yaml), { image: IMAGE, native: false });
      const printed = await cliCheck(shape.yaml);
      if (shape.inject === 'unchanged') {
        assert.deepEqual(before.all, [], '--check finds no error');
        assert.equal(result.kind === 'done' && result.text, shape.yaml, 'byte for byte');
        return;
      }
      assert.notDeepEqual(before.advising, [], '--check advises --inject');
      if (shape.inject === 'rewritten') {
        assert.equal(result.kind, 'done', result.kind === 'refused' ? result.problems.join('\n') : '');
        const out = (result as { text: string }).text;
        assert.notEqual(out, shape.yaml);
        assert.ok(printed.includes(INJECT_ADVICE), printed);
        const after = check(source(out)).filter((finding) => finding.level === 'error');
        assert.deepEqual(after.filter((finding) => finding.rule === 'unwrapped').map(messageOf), [], 'nothing left unstopped');
        assert.ok(!(await cliCheck(out)).includes(INJECT_ADVICE), 'no advice to run --inject on its output');
      } else {
        assert.equal(result.kind, 'refused');
        const problems = (result as { problems: readonly string[] }).problems;
        assert.equal(problems.length, 1, problems.join('\n'));
        assert.match(problems[0] ?? '', /^test\.yaml:1: (Cron)?Job task: /);
        assert.ok(problems[0]?.includes(shape.inject.refused), problems.join('\n'));
        assert.ok(!printed.includes(INJECT_ADVICE), printed);
        assert.match(printed, /\("istio-job-run --inject FILE" refuses this pod: [^\n]+\)\n/);
        assert.ok(printed.includes(shape.inject.refused), printed);
      }
    });
  }
});
