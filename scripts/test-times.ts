// npm run test:times [-- SCRIPT]: runs `npm run SCRIPT` (default test:all) and says where its time goes: the wall
// time of every npm script it runs, nested as they ran, and of every test file node --test runs (the slowest
// first), with the machine it ran on. npm runs each script through a timing shell of this script's own
// (npm's script-shell setting, passed on to the npm runs inside), which also gives every `node --test` and
// `node scripts/unit.ts` of a script the reporter scripts/test-times-reporter.ts beside the usual spec output;
// nothing else of a run changes.
// The report goes to stdout; when SCRIPT is test:all and it passed, also to docs/TEST-TIMES.md, the one place
// that says how long the whole suite takes. The exit status is the run's.

import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { markdownTable } from 'markdown-table';
import { root } from './root.ts';
import { runAttached } from './tools.ts';

const WHOLE = 'test:all';
/** How many test files the report names. */
const SLOWEST = 25;

// npm starts it as `SHELL -c COMMAND`. Each run appends a line to scripts.tsv when it ends.
const SHELL = `#!/bin/sh
start=$(date +%s%N)
command=$(printf '%s\\n' "$2" | sed 's#node \\(--test\\|scripts/unit\\.ts\\) #node \\1 --test-reporter=spec --test-reporter-destination=stdout --test-reporter="$TEST_TIMES_REPORTER" --test-reporter-destination="$TEST_TIMES_DIR/files.$npm_lifecycle_event.$$" #g')
/bin/sh -c "$command"
status=$?
printf '%s\\t%s\\t%s\\t%s\\t%s\\n' "$npm_lifecycle_event" "$PWD" "$start" "$(date +%s%N)" "$status" >>"$TEST_TIMES_DIR/scripts.tsv"
exit $status
`;

/** Writes the timing shell into DIR (where its runs record what they measured) and gives its path. */
export function timingShell(dir: string): string {
  const shell = join(dir, 'shell');
  writeFileSync(shell, SHELL);
  chmodSync(shell, 0o755);
  return shell;
}

interface Script {
  readonly name: string;
  readonly dir: string;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly status: number;
}
interface File {
  readonly file: string;
  readonly ms: number;
  readonly passed: boolean;
  readonly script: string;
}

const lines = (text: string): string[][] =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t'));
const seconds = (ns: bigint): number => Number(ns / 1_000_000n) / 1000;
const clock = (s: number): string => `${Math.floor(s / 60)}:${(s % 60).toFixed(1).padStart(4, '0')}`;

/** The npm scripts the timing shell ran, in the order they started. */
export function readScripts(dir: string): Script[] {
  let text = '';
  try {
    text = readFileSync(join(dir, 'scripts.tsv'), 'utf8');
  } catch {}
  return lines(text)
    .map(([name = '', where = '', start = '0', end = '0', status = '0']) => ({
      name,
      dir: where,
      startNs: BigInt(start),
      endNs: BigInt(end),
      status: Number(status),
    }))
    .sort((a, b) => (a.startNs === b.startNs ? Number(b.endNs - a.endNs) : Number(a.startNs - b.startNs)));
}

/** The test files the reporter saw, with the npm script that ran each. */
export function readFiles(dir: string): File[] {
  return readdirSync(dir)
    .filter((name) => name.startsWith('files.'))
    .flatMap((name) =>
      lines(readFileSync(join(dir, name), 'utf8')).map(([file = '', ms = '0', verdict]) => ({
        file: relative(root, file),
        ms: Number(ms),
        passed: verdict === 'passed',
        script: name.slice('files.'.length, name.lastIndexOf('.')),
      })),
    );
}

/** Each script with its depth (the scripts whose run holds its run) and its own time (less its children's). */
export function nested(scripts: readonly Script[]): string[][] {
  const rows: string[][] = [];
  const open: { script: Script; children: bigint; row: string[] }[] = [];
  const close = (): void => {
    const done = open.pop()!;
    const whole = done.script.endNs - done.script.startNs;
    done.row[3] = clock(seconds(whole - done.children));
    const parent = open.at(-1);
    if (parent !== undefined) parent.children += whole;
  };
  for (const script of scripts) {
    while (open.length > 0 && open.at(-1)!.script.endNs < script.endNs) close();
    const where = relative(root, script.dir);
    const name = `${'&nbsp;'.repeat(4 * open.length)}\`${script.name}\`${where === '' ? '' : ` (in ${where})`}`;
    const row = [name, clock(seconds(script.endNs - script.startNs)), script.status === 0 ? 'passed' : `exit ${script.status}`, ''];
    rows.push(row);
    open.push({ script, children: 0n, row });
  }
  while (open.length > 0) close();
  return rows;
}

function machine(): string {
  const model = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const memory = (totalmem() / 2 ** 30).toFixed(1);
  let os = 'Linux';
  try {
    os = /^PRETTY_NAME="?([^"\n]*)/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? os;
  } catch {}
  return `${availableParallelism()} CPUs (${model}), ${memory} GiB of memory, ${os}`;
}

function report(script: string, status: number, wallS: number, loadAtStart: number[], dir: string): string {
  const load = (numbers: number[]): string => numbers.map((n) => n.toFixed(1)).join(', ');
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  const files = readFiles(dir).sort((a, b) => b.ms - a.ms);
  const scriptRows = nested(readScripts(dir));
  return `<!-- Generated by scripts/test-times.ts (npm run test:times): do not edit by hand. -->
# How long the tests take

**\`npm run ${script}\`: ${Math.floor(Math.round(wallS) / 60)} min ${Math.round(wallS) % 60} s** (${status === 0 ? 'passed' : `exit ${status}`}), measured in one run
by \`npm run test:times\` on ${new Date().toISOString().slice(0, 10)} at commit ${commit}, with Node ${process.version}, on
${machine()}; load average (1, 5, 15 min) ${load(loadAtStart)} at the start, ${load(loadavg())} at the end. Other
work on the machine makes it slower.

## Each npm script

Nested as they ran; "own" is the script's time less that of the scripts inside it.

${markdownTable([['script', 'wall (min:s)', 'result', 'own (min:s)'], ...scriptRows], { align: ['l', 'r', 'l', 'r'] })}

## The slowest test files

Of ${files.length} test file runs, ${(files.reduce((sum, file) => sum + file.ms, 0) / 60_000).toFixed(1)} minutes in all: each file's process from start to end.

${markdownTable(
  [
    ['file', 'seconds', 'script', 'result'],
    ...files
      .slice(0, SLOWEST)
      .map((file) => [file.file, (file.ms / 1000).toFixed(1), `\`${file.script}\``, file.passed ? 'passed' : 'failed']),
  ],
  { align: ['l', 'r', 'l', 'l'] },
)}
`;
}

async function main(): Promise<number> {
  const script = process.argv[2] ?? WHOLE;
  const dir = mkdtempSync(join(tmpdir(), 'istio-job-run-test-times-'));
  try {
    const shell = timingShell(dir);
    const loadAtStart = loadavg();
    const began = performance.now();
    const status = await runAttached('npm', ['run', script], {
      cwd: root,
      env: {
        ...process.env,
        npm_config_script_shell: shell,
        TEST_TIMES_DIR: dir,
        TEST_TIMES_REPORTER: join(root, 'scripts', 'test-times-reporter.ts'),
      },
    });
    const text = report(script, status, (performance.now() - began) / 1000, loadAtStart, dir);
    process.stdout.write(`\n${text}`);
    if (script === WHOLE && status === 0) writeFileSync(join(root, 'docs', 'TEST-TIMES.md'), text);
    return status;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) process.exitCode = await main();
