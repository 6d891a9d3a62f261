// npm run docs: the tables of README.md that restate the code's own tables, written from them: the options
// (src/options-table.ts, the table --help renders) and the sidecar kinds (src/sidecar-kinds.ts). Each sits
// between a pair of markers, <!-- generated: NAME (npm run docs) --> and <!-- end: NAME -->; nothing else of the
// file is touched. `npm run docs -- --check` writes nothing and exits 1 when the file differs from what it would
// write; test/unit/docs.test.ts fails the same way.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SPECS } from '../src/options-table.ts';
import { type Endpoint, SIDECAR_KINDS, type SidecarKind } from '../src/sidecar-kinds.ts';
import { root } from './pinned-node.ts';
import { runMain, StepError } from './tools.ts';

/** A table cell: pipes escaped, so a usage like `auto|classic` stays one cell. */
const cell = (text: string): string => text.replaceAll('|', '\\|');
const code = (text: string): string => `\`${cell(text)}\``;
const row = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;

/** Every option of the table, in its order: flag, variable, default, meaning (the --help text). */
export function optionsTable(): string {
  const lines = [row(['flag', 'environment variable', 'default', 'meaning']), row(['---', '---', '---', '---'])];
  for (const [, spec] of SPECS) {
    const list = spec.kind === 'list';
    lines.push(
      row([
        `${code(spec.usage)}${list ? ' (repeatable)' : ''}`,
        `${code(spec.env)}${list ? ' (comma-separated)' : ''}`,
        code(spec.defaultText),
        cell(spec.help),
      ]),
    );
  }
  return lines.join('\n');
}

const endpoint = (kind: SidecarKind, { listener, path }: Endpoint): string =>
  code(`127.0.0.1:${kind.listeners[listener]?.port ?? '?'}${path}`);

/** The readiness URL and what the row adds to it, or only what it says when there is no URL. */
const waits = (kind: SidecarKind): string => {
  const said = kind.docs.waits === undefined ? '' : cell(kind.docs.waits);
  if (kind.ready === undefined) return said === '' ? 'nothing' : said;
  return said === '' ? endpoint(kind, kind.ready) : `${endpoint(kind, kind.ready)} ${said}`;
};

/** Every sidecar kind: where it is waited for and stopped, what "switched off" looks like, how its project wants Jobs. */
export function kindsTable(): string {
  const lines = [
    row([
      'name',
      'waits for (GET until 2xx)',
      'tells it to stop (POST)',
      'when stopping is switched off',
      'how its project wants it set up for Jobs',
    ]),
    row(['---', '---', '---', '---', '---']),
  ];
  for (const kind of SIDECAR_KINDS as readonly SidecarKind[]) {
    lines.push(row([code(kind.name), waits(kind), endpoint(kind, kind.quit), cell(kind.docs.notEnabled), cell(kind.docs.forJobs)]));
  }
  return lines.join('\n');
}

export const TABLES: Readonly<Record<string, () => string>> = { options: optionsTable, 'sidecar-kinds': kindsTable };

/** TEXT with each marked table replaced by what its function writes now; an error names a missing marker. */
export function withTables(text: string, file: string): string {
  for (const [name, render] of Object.entries(TABLES)) {
    const begin = `<!-- generated: ${name} (npm run docs) -->\n`;
    const end = `<!-- end: ${name} -->`;
    const from = text.indexOf(begin);
    const to = text.indexOf(end, from);
    if (from < 0 || to < 0) throw new StepError(`${file} has no "${begin.trim()}" ... "${end}" region`);
    text = `${text.slice(0, from + begin.length)}${render()}\n${text.slice(to)}`;
  }
  return text;
}

export const README = join(root, 'README.md');

if (import.meta.main) {
  await runMain('docs', async () => {
    const check = process.argv.includes('--check');
    const now = readFileSync(README, 'utf8');
    const next = withTables(now, 'README.md');
    if (next === now) return;
    if (check) throw new StepError('README.md differs from what `npm run docs` writes: run it and commit the result');
    writeFileSync(README, next);
    process.stderr.write('docs: wrote the tables of README.md\n');
  });
}
