// One line per answer of the queries that --check's rules and --inject ask of a script's paths (check/paths.ts), in
// the manner of the shell model's one-line rules: a script run by sh in a pod with Istio (`./job` the job's work,
// failing in the failing run; Q a quit sent to the sidecar), the query, and its answer written short:
// - judged: the paths judged in the succeeding run and in the failing one (their counts), `none` without a script;
// - quitIn, quitIn after work: per judged path, `q` where it sends a quit and `-` where not, succeeding / failing;
// - statusLost (every failing path of a script that quits ends with 0), statusLostToWrapper (some failing path of a
//   script known to its end ends with 0): `lost` on the line the status is lost, or `kept`.

import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { ContainerFacts } from '../../../../src/manifest/pod/containers.ts';
import { readPod } from '../../../../src/manifest/pod/pod.ts';
import { judged, quitIn, scriptLine, statusLost, statusLostToWrapper } from '../../../../src/manifest/check/paths.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { workloads } from '../../../../src/manifest/yaml/workloads.ts';
import { source } from '../../../support/manifest.ts';
import { INJECTED, job, pod } from './cases.ts';

before(loadShellParser);

const QUIT = 'curl -fsS -XPOST http://127.0.0.1:15020/quitquitquit';

/** The job container of a Job with Istio whose sh runs SCRIPT, and the manifest's line before the script's first. */
function container(script: string): { facts: ContainerFacts; before: number } {
  const yaml = job(pod(`command: [sh, -c]\nargs:\n- |\n${script.replaceAll('Q', QUIT).replace(/^/gm, '  ')}`), { podMeta: INJECTED });
  const [workload] = workloads(source(yaml));
  const found = workload === undefined ? undefined : readPod(workload, new Map(), undefined).jobs[0];
  assert.ok(found !== undefined, yaml);
  return { facts: found, before: yaml.split('\n').findIndex((line) => line.trim() === '- |') + 1 };
}

type Query = 'judged' | 'quitIn' | 'quitIn after work' | 'statusLost' | 'statusLostToWrapper';

/** The answer of QUERY for SCRIPT, written short (see the top of the file). */
function answer(query: Query, script: string): string {
  const { facts, before } = container(script);
  const paths = judged(facts);
  if (query === 'judged') return paths === undefined ? 'none' : `${paths.success.length} ${paths.failure.length}`;
  if (query === 'quitIn' || query === 'quitIn after work') {
    const sent = (run: readonly Parameters<typeof quitIn>[1][]): string =>
      run.map((path) => (quitIn(facts, path, undefined, query === 'quitIn after work') === undefined ? '-' : 'q')).join(',');
    return paths === undefined ? 'none' : `${sent(paths.success)} / ${sent(paths.failure)}`;
  }
  const lost = query === 'statusLost' ? statusLost(facts) : statusLostToWrapper(facts);
  if (lost === undefined) return 'kept';
  return `lost on ${lost.statusAt === undefined ? '?' : scriptLine(facts, lost.statusAt.row, lost.statusAt.column) - before}`;
}

/** A line: its name, the query, the script (Q for the quit), the answer. */
type Line = readonly [name: string, query: Query, script: string, answer: string];

const LINES: readonly Line[] = [
  // judged: the paths where the job ran, and failed in the failing run
  ['a script that runs the job is judged in both runs', 'judged', './job\nQ', '1 1'],
  ['a path that never reaches the job is not judged', 'judged', 'exit 0\n./job', '0 0'],
  ['a run not known to its end (a function that calls itself) is judged on no path', 'judged', 'f() { f; }\n./job\nf\nQ', '0 0'],
  // quitIn: the first quit a path sends
  ['a quit after the job is sent on both runs', 'quitIn', './job\nQ', 'q / q'],
  ['a quit after && is sent on success only', 'quitIn', './job && Q', 'q / -'],
  ['a quit in a trap on EXIT is sent on both runs', 'quitIn', "trap 'Q' EXIT\n./job", 'q / q'],
  ['a quit left in the background is not sent', 'quitIn', './job\nQ &', '- / -'],
  ['a quit before the job counts', 'quitIn', 'Q\n./job', 'q / q'],
  ['after work: a quit before the job does not count', 'quitIn after work', 'Q\n./job', '- / -'],
  // statusLost: every failing path of a script that quits ends with 0
  ["the quit last: its status is the script's, and the job's is lost", 'statusLost', './job\nQ', 'lost on 2'],
  ['rc=$? kept and exit $rc: kept', 'statusLost', './job\nrc=$?\nQ\nexit $rc', 'kept'],
  ['exit 0 after the quit: lost', 'statusLost', './job\nQ\nexit 0', 'lost on 3'],
  ["a script without a quit: not this query's", 'statusLost', './job | tee log', 'kept'],
  // statusLostToWrapper: some failing path of a script known to its end ends with 0
  ["a pipeline without pipefail loses the job's status", 'statusLostToWrapper', './job | tee log', 'lost on 1'],
  ['a redirection keeps it', 'statusLostToWrapper', './job > log 2>&1', 'kept'],
  ['an echo after the job loses it', 'statusLostToWrapper', './job\necho done', 'lost on 2'],
];

for (const [name, query, script, expected] of LINES) {
  test(`${query}: ${name}`, () => assert.equal(answer(query, script), expected, script));
}
