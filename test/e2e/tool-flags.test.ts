// Every flag of the manifest tools' table (src/config/tool-flags.ts), through the built executable, before and
// after its tool's flag (`--format sarif --check job.yaml`, `--image-volume --inject job.yaml`) and as --flag=VALUE
// before it: the same exit, the same output, and never the wrapper's (which would run no command and exit 125).
// The launcher picks the tools from the same table (its generated list), so this also checks what it was given.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { TOOL_FLAG, TOOL_FLAGS } from '../../src/config/tool-flags.ts';
import { MIGRATE_JOB } from '../support/manifest.ts';
import { run } from '../support/process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-tool-flags-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const file = join(scratch, 'job.yaml');
writeFileSync(file, MIGRATE_JOB);
const config = join(scratch, 'profile.yaml');
writeFileSync(config, 'kubernetes: "1.31"\nmesh: [linkerd=2.20]\n');

/** A value each flag that takes one is given: a flag added to the table without one here fails the first test. */
const EXAMPLES: Readonly<Record<string, string>> = {
  '--image': 'mirror.example/istio-job-run:1',
  '--entrypoint': 'job=/app/migrate',
  '--injected-namespaces': 'istio=batch',
  '--namespace': 'batch',
  '--format': 'sarif',
  '--failure-threshold': 'none',
  '--ignore': 'unwrapped',
  '--api-version': 'v1beta1',
  '--namespace-selector': 'team=batch',
  '--kubernetes': '1.31',
  '--mesh': 'linkerd=2.20',
  '--config': config,
};

const options = TOOL_FLAGS.filter((row) => row.mode !== true);

describe('every flag of the table, before and after its tool', () => {
  test('each flag that takes a value has an example here', () => {
    const missing = options.filter((row) => row.argument !== undefined && EXAMPLES[row.flag] === undefined).map((row) => row.flag);
    assert.deepEqual(missing, []);
  });
  for (const { flag, argument, tools } of options) {
    for (const tool of tools) {
      test(`${flag} with ${TOOL_FLAG[tool]}`, async () => {
        const value = argument === undefined ? [] : [EXAMPLES[flag] as string];
        const given = [flag, ...value];
        // The policy reads no FILE.
        const mode = tool === 'policy' ? [TOOL_FLAG[tool]] : [TOOL_FLAG[tool], file];
        const forms = [[...given, ...mode], [...mode, ...given], ...(argument === undefined ? [] : [[`${flag}=${value[0]}`, ...mode]])];
        const [first, ...rest] = await Promise.all(forms.map((args) => run(args)));
        assert.ok(first !== undefined);
        assert.notEqual(first.code, 125, `${forms[0]?.join(' ')}: the wrapper ran\n${first.stderr}`);
        assert.doesNotMatch(first.stderr, /no command given|unknown option|not in a Kubernetes pod/, forms[0]?.join(' ') ?? '');
        // The tools' exits: 0 clean, 1 a finding or a refused pod.
        assert.ok(first.code === 0 || first.code === 1, `${forms[0]?.join(' ')}: exit ${first.code}\n${first.stderr}`);
        if (flag === '--help') assert.match(first.stdout, /the manifest tools/);
        rest.forEach((result, i) => {
          assert.deepEqual(
            [result.code, result.stdout, result.stderr],
            [first.code, first.stdout, first.stderr],
            `${forms[i + 1]?.join(' ')} differs from ${forms[0]?.join(' ')}`,
          );
        });
      });
    }
  }
});
