// npm run docs: the tables of the docs that restate the code's own tables, written from them: in README.md the
// options (src/config/options.ts, the table --help renders) and the sidecar kinds (src/config/kinds.ts), in
// docs/MANIFESTS.md the rules of --check (src/manifest/check/rules.ts) and the constructs each shell reads otherwise
// than bash (src/manifest/script/dialect.ts). Each sits between a pair of markers,
// <!-- generated: NAME (npm run docs) --> and <!-- end: NAME -->; nothing else of the file is touched.
// `npm run docs -- --check` writes nothing and exits 1 when a file differs from what it would write;
// test/scripts/docs.test.ts fails the same way.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RULE_SUMMARIES } from '../src/manifest/check/rules.ts';
import { type Behaviour, CONSTRUCTS, DIALECT_NAMES, type Dialect } from '../src/manifest/script/dialect.ts';
import { OUTPUT_FLAGS } from '../src/manifest/cli/flags.ts';
import { ruleAnchor } from '../src/manifest/cli/report.ts';
import { JSON_FIELDS, LEVELS, TOOL_FLAGS } from '../src/config/tool-flags.ts';
import { SPECS } from '../src/config/options.ts';
import { type Endpoint, type Reading, SIDECAR_KINDS, type SidecarKind } from '../src/config/kinds.ts';
import { root } from './root.ts';
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
    const variable = kind.template.quitUrlsVariable;
    const stops =
      variable === undefined
        ? endpoint(kind, kind.quit)
        : `${endpoint(kind, kind.quit)}; and each URL of ${code(variable)} in the job's environment (space-separated: its operator sets it)`;
    lines.push(row([code(kind.name), waits(kind), stops, cell(kind.docs.notEnabled), cell(kind.docs.forJobs)]));
  }
  return lines.join('\n');
}

/** Every rule of --check: its id (what a finding line names, with the anchor SARIF links to), its level and what it finds. */
export function rulesTable(): string {
  const lines = [row(['rule', 'level', 'finds']), row(['---', '---', '---'])];
  for (const [rule, { level, finds }] of Object.entries(RULE_SUMMARIES))
    lines.push(row([`<a id="${ruleAnchor(rule)}"></a>${code(rule)}`, cell(level), cell(finds)]));
  return lines.join('\n');
}

/** What a shell does with a construct, in a table's words. */
function behaviourText(behaviour: Behaviour): string {
  if (typeof behaviour === 'number') return `the command fails with ${behaviour}, and the shell goes on`;
  const texts: Readonly<Record<Exclude<Behaviour, number>, string>> = {
    ok: 'runs it as bash does',
    syntax: 'cannot parse it: ends with 2 before that line runs (its EXIT trap still runs)',
    fatal: 'ends with 2 when it runs',
    exit: 'ends as exit would',
    misread: 'reads it as something else',
    background: 'runs the command in the background',
  };
  return texts[behaviour];
}

/** The shells of the constructs table, in its columns' order. */
const TABLE_DIALECTS: readonly Dialect[] = ['dash', 'ash', 'bash-posix'];

/** Every construct of bash's that another shell reads otherwise: each shell's behaviour, and the portable form. */
export function constructsTable(): string {
  const lines = [
    row(['construct', ...TABLE_DIALECTS.map((dialect) => DIALECT_NAMES[dialect]), 'instead']),
    row(['---', ...TABLE_DIALECTS.map(() => '---'), '---']),
  ];
  for (const { written, fix, behaviour } of Object.values(CONSTRUCTS))
    lines.push(row([code(written), ...TABLE_DIALECTS.map((dialect) => cell(behaviourText(behaviour[dialect]))), cell(fix)]));
  return lines.join('\n');
}

/** The values a setting is on for, as its injector reads it. */
const onValues = (reading: Reading): string =>
  reading.otherwise === 'on'
    ? `anything but ${reading.off.map(code).join(', ')}`
    : `${reading.on.map(code).join(', ')}${reading.folds === true ? ' (any case)' : ''}`;

/** A two-column table of a record: its keys as code, its values as text. */
const recordTable = (heads: readonly [string, string], record: Readonly<Record<string, string>>): string =>
  [row([...heads]), row(['---', '---']), ...Object.entries(record).map(([key, value]) => row([code(key), cell(value)]))].join('\n');

/** --check's levels, and the flags of its output and suppressions, with their variables. */
export function checkOutputTable(): string {
  const lines = [row(['flag', 'environment variable', 'meaning']), row(['---', '---', '---'])];
  for (const { usage, variable, help } of OUTPUT_FLAGS)
    lines.push(row([code(usage), variable === undefined ? '' : code(variable), cell(help)]));
  return `${recordTable(['level', 'means'], LEVELS)}\n\n${lines.join('\n')}`;
}

/** Every flag of the manifest tools: which tool takes it, its variable and what it does (src/config/tool-flags.ts). */
export function toolFlagsTable(): string {
  const lines = [row(['flag', 'tool', 'environment variable', 'meaning']), row(['---', '---', '---', '---'])];
  for (const { flag, argument, tools, variable, help } of TOOL_FLAGS)
    lines.push(
      row([
        code(`${flag}${argument === undefined ? '' : ` ${argument}`}`),
        tools.map((tool) => code(`--${tool}`)).join(', '),
        variable === undefined ? '' : code(variable),
        cell(help),
      ]),
    );
  return lines.join('\n');
}

/** How --check and --inject recognise each kind in a pod template, from the kinds table's template markers. */
export function markersTable(): string {
  const lines = [row(['sidecar', 'the pod gets it when', 'native when', 'its quit answers when']), row(['---', '---', '---', '---'])];
  for (const kind of SIDECAR_KINDS as readonly SidecarKind[]) {
    const markers = kind.template;
    const asked: string[] = [];
    if (markers.inject !== undefined) {
      const keys = [
        ...markers.inject.labels.map((key) => `label ${code(key)}`),
        ...markers.inject.annotations.map((key) => `annotation ${code(key)}`),
      ];
      asked.push(`${keys.join(' or ')} (first found) is ${onValues(markers.inject.reading)}`);
    }
    if (markers.revisionLabel !== undefined) asked.push(`label ${code(markers.revisionLabel)} is set`);
    if (markers.injectedAnnotation !== undefined) asked.push(`already injected (${code(markers.injectedAnnotation)})`);
    if (markers.container !== undefined) {
      asked.push(
        `a container runs image ${markers.container.images.map(code).join(', ')} or program ${markers.container.programs.map(code).join(', ')}`,
      );
    }
    if (markers.inject !== undefined) {
      // What on the namespace stands for --injected-namespaces in --admission-policy's policy.
      const marks = (markers.namespace ?? []).map(
        (rule) =>
          `${rule.label !== undefined ? `label ${code(rule.label)}` : `annotation ${code(rule.annotation ?? '')}`}` +
          `${rule.values === undefined ? ' is set' : ` is ${rule.values.map(code).join(', ')}`}` +
          `${rule.unless === undefined ? '' : ` without label ${code(rule.unless)}`}`,
      );
      asked.push(
        `its namespace is in \`--injected-namespaces\`${marks.length === 0 ? '' : ` (for \`--admission-policy\`: or its namespace's ${marks.join(', or ')})`}`,
      );
    }
    if (markers.settings !== undefined)
      asked.push(`an annotation of its own settings (domain ${markers.settings.map(code).join(', ')} or a subdomain)`);
    const native = [
      ...(markers.native === undefined
        ? []
        : [`${markers.native.keys.map(code).join(' or ')} (first found) is ${onValues(markers.native.reading)}`]),
      ...(markers.container === undefined ? [] : ['an init container with `restartPolicy: Always`']),
    ];
    const quitSwitch = markers.quitSwitch;
    const quit =
      quitSwitch === 'always'
        ? 'always'
        : 'flag' in quitSwitch
          ? `its container has ${code(quitSwitch.flag)}`
          : `${code(quitSwitch.annotation)} is ${onValues(quitSwitch.reading)}${quitSwitch.byDefault ? ' or unset' : ''}`;
    const none = [
      ...(markers.initOnly === undefined
        ? []
        : [`; none when ${code(markers.initOnly.annotation)} is ${onValues(markers.initOnly.reading)}`]),
      ...(markers.sidecarless === undefined
        ? []
        : [
            `; none, unless the template asks for it, when label ${code(markers.sidecarless.label)} is exactly ${code(markers.sidecarless.value)}`,
          ]),
    ].join('');
    lines.push(row([code(kind.name), cell(asked.join('; ') + none), cell(native.join(', ') || 'never'), cell(quit)]));
  }
  return lines.join('\n');
}

type Tables = Readonly<Record<string, () => string>>;

/** Each file with generated tables (its path from the repository's root), and its tables by region name. */
export const DOCS: readonly { readonly file: string; readonly tables: Tables }[] = [
  { file: 'README.md', tables: { options: optionsTable, 'sidecar-kinds': kindsTable } },
  {
    file: 'docs/MANIFESTS.md',
    tables: {
      'tool-flags': toolFlagsTable,
      'check-rules': rulesTable,
      'shell-constructs': constructsTable,
      'check-output': checkOutputTable,
      'check-json': () => recordTable(['field', 'holds'], JSON_FIELDS),
      'sidecar-markers': markersTable,
    },
  },
];

/** TEXT with each marked table of TABLES replaced by what its function writes now; an error names a missing marker. */
export function withTables(text: string, file: string, tables: Tables): string {
  for (const [name, render] of Object.entries(tables)) {
    const begin = `<!-- generated: ${name} (npm run docs) -->\n`;
    const end = `<!-- end: ${name} -->`;
    const from = text.indexOf(begin);
    const to = text.indexOf(end, from);
    if (from < 0 || to < 0) throw new StepError(`${file} has no "${begin.trim()}" ... "${end}" region`);
    text = `${text.slice(0, from + begin.length)}${render()}\n${text.slice(to)}`;
  }
  return text;
}

if (import.meta.main) {
  await runMain('docs', async () => {
    const check = process.argv.includes('--check');
    for (const { file, tables } of DOCS) {
      const now = readFileSync(join(root, file), 'utf8');
      const next = withTables(now, file, tables);
      if (next === now) continue;
      if (check) throw new StepError(`${file} differs from what \`npm run docs\` writes: run it and commit the result`);
      writeFileSync(join(root, file), next);
      process.stderr.write(`docs: wrote the tables of ${file}\n`);
    }
  });
}
