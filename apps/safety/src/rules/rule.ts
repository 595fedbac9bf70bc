/** What a rule detects; actions are configured per category. */
export type RuleCategory = 'secret' | 'injection' | 'policy';

/**
 * One detection rule, matched over a stream's text (the concatenation of its items' texts, so a
 * value split across two items or two turns is one match).
 *
 * The incremental scan is exact only because every rule reads a bounded window: whether the rule
 * matches at position `s` (and where the match ends) depends only on `text[s, s + window)`. The
 * pattern must therefore have no lookbehind, only bounded quantifiers, and lookaheads that stay
 * inside the window. `window` is checked against the pattern in rules.spec.ts.
 */
export interface Rule {
  /** Stable id, reported in findings and metrics; never reuse an id for a different meaning. */
  readonly id: string;
  readonly category: RuleCategory;
  /** What the rule detects, in words a user can read (used in finding messages). */
  readonly description: string;
  /**
   * Lower-case literals, one of which every match contains: the scan runs the pattern only over
   * regions where a keyword occurs (a cheap `indexOf` pre-filter). Empty: always run the pattern.
   */
  readonly keywords: readonly string[];
  /** Sticky (`y`) so it can be tried at one position; linear-time (no nested quantifiers). */
  readonly pattern: RegExp;
  /** Most characters the pattern reads from a match's start (lookaheads included). */
  readonly window: number;
  /** Rejects matches the pattern cannot (checksums, placeholders, low entropy). */
  readonly verify?: (match: string) => boolean;
  /** Characters of context at the match's start that are not part of the reported span (default 0). */
  readonly lead?: number;
  /**
   * Reads the original text, not the normalised view (normalise.ts): for signals that look for
   * the invisible characters the view drops.
   */
  readonly raw?: boolean;
  /** Injection rules: points added to the stream's score per match (threshold in the policy). */
  readonly weight?: number;
}

/** Largest window any rule may have: the tail carried per stream is one less than this. */
export const MAX_WINDOW = 256;

/** Builds a rule's sticky pattern from a source (flags other than `i` are not allowed). */
export function sticky(source: string, ignoreCase = false): RegExp {
  return new RegExp(source, ignoreCase ? 'iy' : 'y');
}
