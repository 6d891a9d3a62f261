// The cost of --check against its floor: the same file's YAML parsed alone (yaml-alone.ts), in the same Node.
// Manifests of many Jobs are written once per run, each Job with a script of its own (no two alike, so no cache
// of scripts helps): the shell recipe most Jobs carry (each one a finding, and --inject's advice computed for
// it), the same Jobs under the wrapper (nothing found), and Jobs whose scripts branch at every line, at two
// lengths, for how the cost grows with a script's length.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Build, PINNED_NODE, shuffled, timed } from './run.ts';
import { root } from '../root.ts';

type Samples = Record<string, number[]>;
const push = (samples: Samples, key: string, value: number): void => void (samples[key] ??= []).push(value);

const YAML_ALONE = join(root, 'scripts', 'bench', 'yaml-alone.ts');

function job(index: number, command: string, args: readonly string[], block = '|'): string {
  const lines = args.map((line) => `          ${line}`).join('\n');
  return [
    'apiVersion: batch/v1',
    'kind: Job',
    'metadata:',
    `  name: job-${index}`,
    'spec:',
    '  template:',
    '    metadata:',
    '      labels: {sidecar.istio.io/inject: "true"}',
    '    spec:',
    '      restartPolicy: Never',
    '      containers:',
    '      - name: job',
    `        image: example/job:${index}`,
    `        command: ${command}`,
    ...(args.length === 0 ? [] : ['        args:', `        - ${block}`, lines]),
  ].join('\n');
}

/** The shell recipe: wait, the job, its status saved (tee's, under sh without pipefail), the quit. */
const recipe = (index: number, block = '|'): string =>
  job(
    index,
    '["sh", "-c"]',
    [
      'set -e',
      'until curl -fsS http://127.0.0.1:15021/healthz/ready; do sleep 1; done',
      `./run-${index}.sh --batch ${index} | tee /tmp/log-${index}`,
      'rc=$?',
      'curl -fsS -X POST http://127.0.0.1:15020/quitquitquit',
      'exit $rc',
    ],
    block,
  );

/** The same in a folded block (`>`), which joins its lines into one command: a finding each, placed by line. */
const folded = (index: number): string => recipe(index, '>');

const wrapped = (index: number): string => job(index, `["istio-job-run", "--", "./run-${index}.sh", "--batch", "${index}"]`, []);

/** A script that branches on a file at each of BRANCHES lines, then quits by hand. */
const branching =
  (branches: number) =>
  (index: number): string =>
    job(index, '["sh", "-c"]', [
      'until curl -fsS http://127.0.0.1:15021/healthz/ready; do sleep 1; done',
      ...Array.from(
        { length: branches },
        (_, line) =>
          `if [ -f /data/${index}/${line} ]; then ./step-${line}.sh --in /data/${index}/${line} | tee -a /tmp/log-${index}; else echo "skip ${line}" >&2; fi`,
      ),
      'rc=$?',
      'curl -fsS -X POST http://127.0.0.1:15020/quitquitquit',
      'exit $rc',
    ]);

export interface CheckFile {
  readonly what: string;
  readonly jobs: number;
  readonly make: (index: number) => string;
}

/** The manifests checked, by id; JOBS scales the many-Job ones (the branching ones have a tenth as many). */
export const checkFiles = (jobs: number): Record<string, CheckFile> => ({
  recipe: { what: `${jobs} Jobs, the shell recipe (a finding each)`, jobs, make: (index) => recipe(index) },
  folded: { what: `${jobs} Jobs, the recipe in a folded block (>)`, jobs, make: folded },
  wrapped: { what: `${jobs} Jobs under the wrapper (no finding)`, jobs, make: wrapped },
  branch60: { what: `${jobs / 10} Jobs, 60 if-statements a script`, jobs: jobs / 10, make: branching(60) },
  branch120: { what: `${jobs / 10} Jobs, 120 if-statements a script`, jobs: jobs / 10, make: branching(120) },
});

/** CPU (ms) and peak RSS (KiB) of --check and of the YAML alone, per file, interleaved round by round. */
export async function check(build: Build, rounds: number, jobs: number): Promise<{ cpu: Samples; rss: Samples }> {
  const files = checkFiles(jobs);
  const paths: Record<string, string> = {};
  for (const [id, file] of Object.entries(files)) {
    paths[id] = join(build.dir, `check-${id}.yaml`);
    writeFileSync(paths[id], `${Array.from({ length: file.jobs }, (_, index) => file.make(index)).join('\n---\n')}\n`);
  }
  const variants = Object.keys(files).flatMap((id) => [`check:${id}`, `yaml:${id}`]);
  const cpu: Samples = {};
  const rss: Samples = {};
  for (let round = 0; round < rounds; round++) {
    for (const variant of shuffled(variants)) {
      const [how, id = ''] = variant.split(':');
      const path = paths[id] as string;
      const command = how === 'check' ? [build.wrapper, '--check', path] : [PINNED_NODE, YAML_ALONE, path];
      // The timer leaves its child no stdout: the findings go to /dev/null, through a shell that execs the command.
      const used = await timed(build, 'sh', ['-c', 'exec "$@" > /dev/null', 'sh', ...command], {}, 600_000);
      const expected = how === 'yaml' ? [0] : id === 'wrapped' ? [0] : [0, 1];
      if (!expected.includes(used.code)) throw new Error(`--check cost, ${variant}: exit ${used.code}`);
      push(cpu, variant, used.cpuMs);
      push(rss, variant, used.maxRssKiB);
    }
  }
  return { cpu, rss };
}
