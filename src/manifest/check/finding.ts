// A finding of --check as data: where it is, its rule and level, the problem, what to do instead, and what
// --inject does with its pod; its message is composed from them when it is printed (said()), and JSON's
// `instead` is the field, never read back out of the text; and the shape of the row of a rule (rules.ts) that
// reports it.

import type { Node, Pair } from 'yaml';
import { PROGRAM } from '../../bundle/self.ts';
import type { Level } from '../../config/tool-flags.ts';
import type { Profile } from '../../config/profile.ts';
import type { Pod } from '../pod/pod.ts';
import type { Source } from '../yaml/source.ts';
import type { RuleId } from './rules.ts';

export interface Finding {
  readonly line: number;
  /** The column, from 1, when the finding is at a YAML node. */
  readonly column?: number;
  readonly level: Level;
  readonly rule: RuleId;
  /** What is wrong, and what comes of it. */
  readonly problem: string;
  /** What to do instead; none where the finding says only what a field needs. */
  readonly instead?: string;
  /** What the message puts between the problem and what to do instead (the rule's row says; ': ' unless told). */
  readonly joins?: string;
  /** Its rule's remedy is the wrapper, which --inject puts in: --inject is then to rewrite the pod or say why it cannot. */
  readonly advisesInject: boolean;
  /** What --inject does with the finding's pod, where the finding advises it and --inject was asked (inject.ts). */
  readonly inject?: InjectVerdict;
}

/** What --inject does with a pod: rewrites it, or refuses it, and why. */
export type InjectVerdict = { readonly will: 'rewrite' } | { readonly will: 'refuse'; readonly why: string };

/**
 * What --inject does with a pod that has a rule's error (the rule's row says): `setting`, what stops no sidecar (a
 * setting, a quit that never arrives or never runs), which the wrapper in front makes harmless (it stays for the
 * author to remove); `script`, a script's own quit gone wrong, which --inject takes out, proves the rest, and wraps;
 * `refuse`, what no wrapper changes (the row says why). None: not for --inject to fix (it leaves or refuses the pod
 * on what else it finds).
 */
export type InjectAction = 'setting' | 'script' | 'refuse';

/** The message of a finding: the problem, then what to do instead. */
export const messageOf = (finding: Finding): string =>
  finding.instead === undefined ? finding.problem : `${finding.problem}${finding.joins ?? ': '}${finding.instead}`;

/** What --check says after a finding's message of what --inject does for its pod, where the finding advises it. */
function verdictSaid(finding: Finding): string {
  const verdict = finding.inject;
  if (verdict === undefined) return '';
  if (verdict.will === 'rewrite') return ` ${INJECT_ADVICE}`;
  return ` ("${PROGRAM} --inject FILE" refuses this pod: ${verdict.why})`;
}

/** The text of a finding as --check prints it: its message, then what --inject does for its pod, where it advises it. */
export const said = (finding: Finding): string => `${messageOf(finding)}${verdictSaid(finding)}`;

/** What to do instead as JSON's `instead` says it: the field, then what --inject does for its pod, as said(). */
export const insteadSaid = (finding: Finding): string | undefined =>
  finding.instead === undefined ? undefined : `${finding.instead}${verdictSaid(finding)}`;

/**
 * A finding at a line (a node's, a pair's key's, or a number): the problem, what to do instead (none where the
 * finding says only what a field needs), at the rule's level unless told.
 */
export type Report = (at: Node | Pair | number | null | undefined, problem: string, instead: string | undefined, level?: Level) => void;

/** What a check reads: the file, each of its pods, and the cluster's profile where one is stated. */
interface Subject {
  readonly source: Source;
  readonly pods: readonly Pod[];
  readonly profile?: Profile;
}

/** A rule's row (rules.ts): its id and level, what it finds, its advice, what --inject does with it, and its check. */
export interface Rule {
  readonly id: string;
  readonly level: Level;
  /** What it finds, in a few words (the table of rules in docs/MANIFESTS.md and --help). */
  readonly finds: string;
  /** Its remedy is the wrapper (WRAP, in what to do instead), which --inject puts in: its findings advise --inject. */
  readonly advises?: true;
  /** What --inject does with a pod that has the rule's error (InjectAction); none: not for --inject to fix. */
  readonly inject?: InjectAction;
  /** Where --inject refuses: why no wrapper changes what the rule finds, and what to do first. */
  readonly refuses?: string;
  /** What the message puts between the problem and what to do instead, where not ': '. */
  readonly joins?: string;
  readonly check: (subject: Subject, report: Report) => void;
}

/** A rule's row as data: its level, what it finds, whether its remedy is the wrapper, what --inject does with its error. */
export interface RuleSummary {
  readonly level: Level;
  readonly finds: string;
  readonly advises: boolean;
  readonly inject?: InjectAction;
  readonly refuses?: string;
}

/** Said after a finding's message where --inject rewrites its pod (said()). */
export const INJECT_ADVICE = `("${PROGRAM} --inject FILE" rewrites the manifest)`;
/** What to run instead, said by the rules whose row advises --inject. */
export const WRAP = `run the job's command under ${PROGRAM}`;
