// The "hostile" section of docs/RELIABILITY.md: every case of the adversarial suite
// (test/support/hostile-cases.ts) in its long size, each try in a network namespace of its own, counted by
// what came back.

import { HOSTILE_CASES } from '../../test/support/hostile-cases.ts';
import { runHostile, type TryLine } from '../../test/support/hostile-run.ts';
import { simulatePods } from '../../test/support/pods.ts';

export interface HostileRow {
  readonly name: string;
  readonly about: string;
  readonly tries: number;
  readonly ok: number;
  /** Distinct outcomes, most frequent first: what came back and how often. */
  readonly outcomes: readonly { readonly got: string; readonly ok: boolean; readonly count: number; readonly example: string }[];
}

/** Runs every case (`tries` overrides each case's long count), `parallel` cases at a time. */
export async function runHostileSuite(parallel: number, tries?: number): Promise<HostileRow[]> {
  const rows = new Map<string, HostileRow>();
  await simulatePods(HOSTILE_CASES, parallel, async (hostile) => {
    const count = tries ?? hostile.tries.long;
    const lines = await runHostile('long', [hostile.name], { tries: count, timeoutMs: 120_000 + count * 30_000 });
    rows.set(hostile.name, {
      name: hostile.name,
      about: hostile.about,
      tries: lines.length,
      ok: lines.filter((l) => l.ok).length,
      outcomes: tally(lines),
    });
    process.stderr.write(`hostile: ${hostile.name}: ${lines.filter((l) => l.ok).length}/${lines.length}\n`);
  });
  return HOSTILE_CASES.map((hostile) => rows.get(hostile.name)).filter((row): row is HostileRow => row !== undefined);
}

function tally(lines: readonly TryLine[]): HostileRow['outcomes'] {
  const byGot = new Map<string, { got: string; ok: boolean; count: number; example: string }>();
  for (const line of lines) {
    const key = `${line.ok}\n${line.got}`;
    const entry = byGot.get(key) ?? { got: line.got, ok: line.ok, count: 0, example: line.sent };
    entry.count += 1;
    byGot.set(key, entry);
  }
  return [...byGot.values()].sort((a, b) => Number(a.ok) - Number(b.ok) || b.count - a.count);
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The section, from its heading on. */
export function hostileSection(rows: readonly HostileRow[]): string[] {
  const tries = rows.reduce((sum, row) => sum + row.tries, 0);
  const ok = rows.reduce((sum, row) => sum + row.ok, 0);
  const lines = [
    '## Hostile',
    '',
    `The adversarial suite (test/support/hostile-cases.ts; its short size runs in \`npm test\`): ${rows.length} cases, ${tries} tries, ` +
      `${ok} as expected, ${tries - ok} not. Every try drives the portable bundle (dist/bundle/istio-job-run) in a network namespace ` +
      'of its own, with the sidecar stand-in on the real ports 15020/15021; "as PID 1" means PID 1 of a new PID namespace; "loaded" ' +
      'means a busy loop per core while it runs. Signals sent during start-up are sent with every signal blocked at exec, so none is ' +
      "lost before the program's first instruction.",
    '',
    '| case | what was sent, and what must come back | tries | as expected | what came back (count: outcome, e.g. one try) |',
    '|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const outcomes = row.outcomes.map((o) => `${o.count}× ${o.ok ? '' : '**not as expected:** '}${o.got} (e.g. ${o.example})`).join('<br>');
    lines.push(`| ${cell(row.name)} | ${cell(row.about)} | ${row.tries} | ${row.ok} | ${cell(outcomes)} |`);
  }
  lines.push('');
  return lines;
}

/** `doc` with its hostile section replaced by `section` (or added at the end). */
export function spliceSection(doc: string, section: readonly string[]): string {
  const lines = doc.split('\n');
  const start = lines.indexOf('## Hostile');
  if (start < 0) return `${doc.replace(/\n*$/, '\n\n')}${section.join('\n')}`;
  const next = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  return [...lines.slice(0, start), ...section, ...(next < 0 ? [] : lines.slice(next))].join('\n');
}
