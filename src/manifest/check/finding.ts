// A finding of --check: where it is, its rule and level, what it says, and what --inject does with its pod; and
// how --check prints it.

import type { Node, Pair } from 'yaml';
import { PROGRAM } from '../../bundle/self.ts';
import type { Level } from '../../config/tool-flags.ts';
import type { RuleId } from './rules.ts';

export interface Finding {
  readonly line: number;
  /** The column, from 1, when the finding is at a YAML node. */
  readonly column?: number;
  readonly level: Level;
  readonly rule: RuleId;
  readonly message: string;
  /** The message advises the wrapper, which --inject puts in: it is then to rewrite the pod or say why it cannot. */
  readonly advisesInject: boolean;
  /** What --inject does with the finding's pod, where the finding advises it and --inject was asked (inject.ts). */
  readonly inject?: InjectVerdict;
}

/** What --inject does with a pod: rewrites it, or refuses it, and why. */
export type InjectVerdict = { readonly will: 'rewrite' } | { readonly will: 'refuse'; readonly why: string };

/** The text of a finding as --check prints it: its message, then what --inject does for its pod, where it advises it. */
export function said(finding: Finding): string {
  const verdict = finding.inject;
  if (verdict === undefined) return finding.message;
  if (verdict.will === 'rewrite') return `${finding.message} ${INJECT_ADVICE}`;
  return `${finding.message} ("${PROGRAM} --inject FILE" refuses this pod: ${verdict.why})`;
}

/** A finding at a line (a node's, a pair's key's, or a number), at the rule's level unless told. */
export type Report = (at: Node | Pair | number | null | undefined, message: string, level?: Level) => void;

/** Said after a finding's message where --inject rewrites its pod (said()). */
export const INJECT_ADVICE = `("${PROGRAM} --inject FILE" rewrites the manifest)`;
/** What to run instead, said by most rules: a finding that says it advises --inject. */
export const WRAP = `run the job's command under ${PROGRAM}`;
