// The config file (`--config FILE`, else .istio-job-run.yaml in the current directory, else at the top of its git
// work tree): the cluster profile and --check's defaults, as kube-linter's and hadolint's files hold theirs. Its keys
// are the long names of the flags it stands for, without the dashes; a value is written as on the command line, a
// list for a repeatable flag. A key it does not know, or a value its flag refuses, is one line naming the file, the
// line and what is allowed.

import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { CONFIG_FILE, TOOL_FLAGS } from '../../config/tool-flags.ts';

/** The flags the file can hold, by key: each flag's long name without the dashes. */
const KEYS: ReadonlyMap<string, { readonly flag: string; readonly repeatable: boolean }> = new Map(
  ['--kubernetes', '--mesh', '--format', '--failure-threshold', '--ignore'].map((flag) => [
    flag.slice(2),
    { flag, repeatable: flag === '--mesh' || flag === '--ignore' },
  ]),
);

/** What the file says: each flag's values in the order written, with the line of each. */
export interface ConfigValues {
  readonly name: string;
  readonly values: ReadonlyMap<string, readonly { readonly value: string; readonly line: number }[]>;
}

/** How the tools find and read the file. */
export interface ConfigFiles {
  /** The current directory. */
  readonly cwd: string;
  /** The file's text; undefined when there is no such file (anything else throws). */
  readonly read: (path: string) => string | undefined;
  /** Whether PATH (a directory's entry) exists. */
  readonly exists: (path: string) => boolean;
}

/** The default file: in the current directory, else at the top of the git work tree it is in; undefined: none. */
export function defaultConfig(files: ConfigFiles): string | undefined {
  const here = `${files.cwd.replace(/\/+$/, '')}/${CONFIG_FILE}`;
  if (files.exists(here)) return here;
  for (let dir = files.cwd.replace(/\/+$/, ''); dir !== ''; dir = dir.slice(0, dir.lastIndexOf('/'))) {
    if (!files.exists(`${dir}/.git`)) continue;
    const top = `${dir}/${CONFIG_FILE}`;
    return files.exists(top) ? top : undefined;
  }
  return undefined;
}

/** The file's values, or one line saying what is wrong in it. */
export function readConfig(name: string, text: string): ConfigValues | string {
  const counter = new LineCounter();
  const document = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  const lineOf = (node: Node | null | undefined): number => counter.linePos(node?.range?.[0] ?? 0).line;
  const error = document.errors[0];
  if (error !== undefined) return `${name}:${counter.linePos(error.pos[0]).line}: not YAML: ${error.message.split('\n')[0]}`;
  const values = new Map<string, { value: string; line: number }[]>();
  const root = document.contents;
  if (root === null || (isScalar(root) && root.value === null)) return { name, values };
  if (!isMap(root)) return `${name}:${lineOf(root)}: not a map of settings (${[...KEYS.keys()].join(', ')})`;
  for (const pair of root.items) {
    const keyNode = pair.key as Node | null;
    const key = isScalar(keyNode) ? String(keyNode.value) : '';
    const line = lineOf(keyNode);
    const known = KEYS.get(key);
    if (known === undefined) {
      const flag = TOOL_FLAGS.some((row) => row.flag === `--${key}`) ? ` (--${key} is for the command line only)` : '';
      return `${name}:${line}: ${JSON.stringify(key)} is not a setting of the file${flag}: one of ${[...KEYS.keys()].join(', ')}`;
    }
    const value = pair.value as Node | null;
    const entries = isSeq(value) ? (value.items as (Node | null)[]) : [value];
    if (isSeq(value) && !known.repeatable)
      return `${name}:${lineOf(value)}: ${key} takes one value, not a list (${key}: VALUE, as ${known.flag} VALUE)`;
    const read: { value: string; line: number }[] = [];
    for (const entry of entries) {
      // As written: 1.30 is the release 1.30, not the number 1.3.
      const written =
        isScalar(entry) && entry.value !== null && typeof entry.value !== 'object' ? (entry.source ?? String(entry.value)) : undefined;
      if (written === undefined || written === '')
        return `${name}:${lineOf(entry ?? keyNode)}: ${key} needs ${known.repeatable ? 'a value or a list of values' : 'a value'}, as ${known.flag} takes it`;
      read.push({ value: String(written), line: lineOf(entry) });
    }
    values.set(known.flag, read);
  }
  return { name, values };
}
