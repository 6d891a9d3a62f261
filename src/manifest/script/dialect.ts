// The shells that run job scripts, and what each does with the constructs that are not in all of them: which
// shell a container's command starts (dash, busybox's ash, bash, or bash as sh; what sh is in an image is
// images.ts's), and one table of the constructs bash has and the others may not. Each cell of the table was found
// by running the construct in Debian's dash, bash (also with --posix, which is what bash does when started as sh)
// and busybox's ash, as test/unit/manifest/script/dialect.test.ts does again with the shells at hand.

import type { Syntax as SyntaxNode } from './syntax.ts';

/** A shell as the model runs a script: bash-posix is bash started as sh (RHEL's and Amazon Linux's sh). */
export type Dialect = 'dash' | 'ash' | 'bash' | 'bash-posix';

/** How messages name each shell. */
export const DIALECT_NAMES: Readonly<Record<Dialect, string>> = {
  dash: 'dash',
  ash: "busybox's ash",
  bash: 'bash',
  'bash-posix': 'bash (as sh)',
};

/**
 * What a shell does with a construct: runs it as bash does (ok); cannot parse it, so the shell ends with 2 before
 * the line that holds it runs (syntax; the EXIT trap still runs); ends with 2 when it runs (fatal); ends as `exit`
 * would (exit); reads it as something else, whose status is not known (misread); runs the command in the
 * background (`cmd &> file` is `cmd &` then `> file`); or fails the command with this status and goes on.
 */
export type Behaviour = 'ok' | 'syntax' | 'fatal' | 'exit' | 'misread' | 'background' | number;

/** A construct of bash's that another shell reads otherwise: how scripts write it, the portable form, and each shell's behaviour. */
export interface Construct {
  readonly written: string;
  readonly fix: string;
  readonly behaviour: Readonly<Record<Dialect, Behaviour>>;
}

const everywhere = (dash: Behaviour, ash: Behaviour, bash: Behaviour = 'ok', posix: Behaviour = bash) => ({
  dash,
  ash,
  bash,
  'bash-posix': posix,
});

/** The constructs, by id. */
export const CONSTRUCTS = {
  'double-bracket': { written: '[[ ... ]]', fix: 'write [ ... ]', behaviour: everywhere(127, 'ok') },
  'test-double-equals': { written: '== in [ ] or test', fix: 'write =', behaviour: everywhere(2, 'ok') },
  'function-keyword': { written: 'function NAME', fix: 'write NAME() { ...; }', behaviour: everywhere('syntax', 'ok') },
  'here-string': { written: '<<<', fix: 'use a here-document or printf ... |', behaviour: everywhere('syntax', 'syntax') },
  array: { written: 'NAME=(...)', fix: 'keep the words in a string, or in set --', behaviour: everywhere('syntax', 'syntax') },
  'process-substitution': { written: '<(...)', fix: 'use a pipe or a temporary file', behaviour: everywhere('syntax', 'ok') },
  select: { written: 'select', fix: 'use a for loop', behaviour: everywhere('syntax', 'syntax') },
  'arithmetic-command': {
    written: '(( ... ))',
    fix: 'write [ $((...)) -ne 0 ], or x=$((...))',
    behaviour: everywhere('misread', 'misread'),
  },
  'redirect-both': { written: '&>', fix: 'write >FILE 2>&1', behaviour: everywhere('background', 'ok') },
  'pattern-substitution': { written: '${NAME/a/b}', fix: 'use sed, or ${NAME#...} and ${NAME%...}', behaviour: everywhere('fatal', 'ok') },
  substring: { written: '${NAME:N:M}', fix: 'use cut, or ${NAME#...}', behaviour: everywhere('fatal', 'ok') },
  'case-conversion': { written: '${NAME^^} or ${NAME,,}', fix: 'use tr', behaviour: everywhere('fatal', 'fatal') },
  indirection: { written: '${!NAME}', fix: 'use eval', behaviour: everywhere('fatal', 'fatal') },
  subscript: {
    written: '${NAME[...]} (an array, PIPESTATUS)',
    fix: 'keep each value in a variable of its own',
    behaviour: everywhere('fatal', 'fatal'),
  },
  source: { written: 'source', fix: 'write .', behaviour: everywhere(127, 'ok') },
  let: { written: 'let', fix: 'write x=$((...))', behaviour: everywhere(127, 'ok') },
  declare: { written: 'declare or typeset', fix: 'write NAME=VALUE', behaviour: everywhere(127, 127) },
  shopt: { written: 'shopt', fix: 'drop it', behaviour: everywhere(127, 127) },
  'local-outside-function': {
    written: 'local outside a function',
    fix: 'write NAME=VALUE',
    behaviour: everywhere('fatal', 'fatal', 1),
  },
  'return-outside-function': { written: 'return outside a function', fix: 'write exit', behaviour: everywhere('exit', 'exit', 2, 'fatal') },
  'set-option': {
    written: 'set -o NAME of bash',
    fix: 'drop the option, or run the script with bash',
    behaviour: everywhere('fatal', 'ok'),
  },
} as const satisfies Record<string, Construct>;

export type ConstructId = keyof typeof CONSTRUCTS;

/** The status a shell ends with where `set -u` meets an unset variable. */
export const UNSET_STATUS: Readonly<Record<Dialect, number>> = { dash: 2, ash: 2, bash: 127, 'bash-posix': 127 };

/** The options dash's `set -o` takes (dash 0.5.12); any other ends it with 2, as pipefail does. */
const DASH_OPTIONS = new Set([
  'errexit',
  'noglob',
  'ignoreeof',
  'interactive',
  'monitor',
  'noexec',
  'stdin',
  'xtrace',
  'verbose',
  'vi',
  'emacs',
  'noclobber',
  'allexport',
  'notify',
  'nounset',
  'privileged',
  'nolog',
  'debug',
]);

/** Whether `set -o NAME` is one the shell lacks (pipefail is dash's refusal of its own: refusesPipefail). */
export const lacksOption = (dialect: Dialect, name: string): boolean =>
  dialect === 'dash' && name !== 'pipefail' && !DASH_OPTIONS.has(name);

/** What DIALECT does with construct ID. */
export const behaviourOf = (dialect: Dialect, id: ConstructId): Behaviour => CONSTRUCTS[id].behaviour[dialect];

/** Commands that are builtins of bash and not of every shell. */
const COMMANDS: Readonly<Record<string, ConstructId>> = {
  source: 'source',
  let: 'let',
  shopt: 'shopt',
  declare: 'declare',
  typeset: 'declare',
};

/** The construct a command's program is, when it is a builtin of bash's only. */
export const commandConstruct = (program: string): ConstructId | undefined =>
  Object.hasOwn(COMMANDS, program) ? COMMANDS[program] : undefined;

/** The construct a `${...}` expansion's text is, when it is not POSIX's. */
export function expansionConstruct(text: string): ConstructId | undefined {
  const inner = /^\$\{([\s\S]*)\}$/.exec(text)?.[1];
  if (inner === undefined) return undefined;
  if (inner.startsWith('!') && inner.length > 1) return 'indirection';
  const rest = /^#?(?:[A-Za-z_]\w*|\d+|[@*#?$!-])([\s\S]*)$/.exec(inner)?.[1];
  if (rest === undefined || rest === '') return undefined;
  if (rest.startsWith('[')) return 'subscript';
  if (rest.startsWith('/')) return 'pattern-substitution';
  if (/^:[^-=?+]/.test(rest)) return 'substring';
  if (/^[\^,]/.test(rest)) return 'case-conversion';
  return undefined;
}

/** A construct of a node itself (not of its children), as the tree shows it; undefined: none. */
export function nodeConstruct(node: SyntaxNode): ConstructId | undefined {
  switch (node.type) {
    case 'test_command': {
      if (node.child(0)?.type === '[[') return 'double-bracket';
      const expression = node.namedChildren[0];
      return expression?.type === 'binary_expression' && expression.child(1)?.type === '==' ? 'test-double-equals' : undefined;
    }
    case 'function_definition':
      return node.child(0)?.type === 'function' ? 'function-keyword' : undefined;
    case 'herestring_redirect':
      return 'here-string';
    case 'array':
      return 'array';
    case 'process_substitution':
      return 'process-substitution';
    case 'for_statement':
      return node.child(0)?.type === 'select' ? 'select' : undefined;
    case 'compound_statement':
      return node.child(0)?.type === '((' ? 'arithmetic-command' : undefined;
    case 'file_redirect':
      return node.child(0)?.type === '&>' ? 'redirect-both' : undefined;
    case 'expansion':
      return expansionConstruct(node.text);
    default:
      return undefined;
  }
}

/** Texts that may hold a construct of the table: a script without any is read without the walk below. */
const MAYBE =
  /\[\[|==|\bfunction\b|<<<|=\(|[<>]\(|\bselect\b|\(\(|&>|\$\{|\bsource\b|\blet\b|\bdeclare\b|\btypeset\b|\bshopt\b|\blocal\b|\breturn\b|\bset\b/;

/** A construct found in a script: where, and its id. */
export interface Found {
  readonly id: ConstructId;
  readonly node: SyntaxNode;
}

/**
 * The constructs of the table in a tree that DIALECT does not run as bash does, in the order of the text; the
 * commands among them are read by name (`local` and `return` outside a function only where they are not inside one).
 */
export function constructsIn(root: SyntaxNode, dialect: Dialect): Found[] {
  if (dialect === 'bash' || !MAYBE.test(root.text)) return [];
  const found: Found[] = [];
  const visit = (node: SyntaxNode, inFunction: boolean): void => {
    let id = nodeConstruct(node);
    if (id === undefined && (node.type === 'command' || node.type === 'declaration_command')) {
      const program = node.type === 'command' ? (node.childForFieldName('name')?.text ?? '') : (node.child(0)?.type ?? '');
      id = commandConstruct(program);
      if (!inFunction && program === 'local') id = 'local-outside-function';
      if (!inFunction && program === 'return') id = 'return-outside-function';
      if (program === 'set') {
        const words = node.childrenForFieldName('argument').map((word) => word?.text ?? '');
        const at = words.findIndex((word) => /^[-+]\w*o$/.test(word));
        if (at >= 0 && lacksOption(dialect, words[at + 1] ?? '')) id = 'set-option';
      }
    }
    if (id !== undefined && behaviourOf(dialect, id) !== 'ok') found.push({ id, node });
    const inside = inFunction || node.type === 'function_definition';
    for (const child of node.namedChildren) if (child !== null) visit(child, inside);
  };
  visit(root, false);
  return found;
}

/**
 * Where DIALECT stops a script it cannot parse: the index of the first top-level statement of the first line
 * (a shell reads a line, and the whole of any compound command it starts, before it runs any of it) that holds a
 * construct it has no syntax for, and the construct; undefined: it parses the whole.
 */
export function syntaxStop(root: SyntaxNode, dialect: Dialect): { readonly at: number; readonly found: Found } | undefined {
  const first = constructsIn(root, dialect).find((one) => behaviourOf(dialect, one.id) === 'syntax');
  if (first === undefined) return undefined;
  const statements = root.namedChildren.filter((child): child is SyntaxNode => child !== null);
  let unit = 0;
  for (let i = 0; i < statements.length; i++) {
    const statement = statements[i] as SyntaxNode;
    const previous = statements[i - 1];
    if (previous !== undefined && statement.startPosition.row > endRow(previous)) unit = i;
    if (first.node.startIndex >= statement.startIndex && first.node.startIndex < statement.endIndex) return { at: unit, found: first };
  }
  return undefined;
}

/** The row a node ends on. */
const endRow = (node: SyntaxNode): number => node.startPosition.row + (node.text.match(/\n/g)?.length ?? 0);

/** The dialect a shell's program name runs, SH standing for what `sh` is here; undefined: not one of these shells. */
export function dialectOfProgram(program: string, sh: Dialect, viaBusybox = false): Dialect | undefined {
  if (viaBusybox) return 'ash';
  if (program === 'bash') return 'bash';
  if (program === 'dash') return 'dash';
  if (program === 'ash') return 'ash';
  if (program === 'sh') return sh;
  return undefined;
}
