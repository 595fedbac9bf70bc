import { RULES, type SafetyRule } from './rules';

/** A rule that matched one item; the text that matched is deliberately not kept. */
export interface RuleMatch {
  readonly ruleId: string;
  /** Index in the whole conversation (items already covered by the state + local index). */
  readonly itemIndex: number;
}

/** Rules whose patterns all match `text`, in rule-set order. */
export function matchingRules(text: string, rules: readonly SafetyRule[] = RULES): SafetyRule[] {
  const matched: SafetyRule[] = [];
  for (const rule of rules) {
    if (rule.patterns.every((p) => p.test(text))) matched.push(rule);
  }
  return matched;
}

/**
 * Scans each item on its own (no rule spans two items, which is what lets the state stay a few
 * bytes) and returns one match per (item, rule), ordered by item then rule.
 */
export function scanItems(
  items: readonly { readonly text: string }[],
  firstIndex: number,
  rules: readonly SafetyRule[] = RULES,
): RuleMatch[] {
  const matches: RuleMatch[] = [];
  items.forEach((item, i) => {
    for (const rule of matchingRules(item.text, rules)) matches.push({ ruleId: rule.id, itemIndex: firstIndex + i });
  });
  return matches;
}

/**
 * The user-facing text of a finding. Built from the rule's description only, so it can be shown
 * and logged: it never contains any of the matched text.
 */
export function findingMessage(match: RuleMatch, rule: SafetyRule | undefined): string {
  const what = rule?.description ?? 'a secret';
  return `Item ${match.itemIndex} contains what looks like ${what} (rule ${match.ruleId}); the value is not shown.`;
}
