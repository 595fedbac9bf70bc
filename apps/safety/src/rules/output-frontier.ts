import type { Rule } from './rule';
import { normalise, viewIndex } from './normalise';
import { RulePrefix } from './rule-prefix';

const prefixes = new WeakMap<Rule, RulePrefix>();

/** The rule's prefix automaton, compiled once per rule (policies, and so their rules, are cached). */
export function prefixOf(rule: Rule): RulePrefix {
  let p = prefixes.get(rule);
  if (!p) prefixes.set(rule, (p = new RulePrefix(rule)));
  return p;
}

/**
 * Where streamed output stops being safe to show: the stream position of the first character
 * that a match of one of `rules` could still cover once more text comes, or the end of the text.
 * Rules read the normalised view (normalise.ts) as the scan does, `raw` ones the text.
 *
 * `text` is the stream's carried tail plus its new text, starting at stream position `base`. A
 * rule's match at `at` depends only on `text[at, at + window)` (the Rule contract), so starts with
 * `at + window <= end` are settled (the scan has reported them or they never match) and only the
 * last `window - 1` starts of each rule are tried; a start is held when the rule's pattern, run
 * from it, reaches the end of the text (a prefix of a match) or matches already (a match that may
 * still change). A rule's `lead` characters are context, not part of what it reports, so they are
 * not held. Starts more than a rule's lead before `from` (in `text`) are not tried: a caller passes
 * where an earlier frontier of the same stream stood, since every such start was ruled out for good (a walk
 * that died inside the text dies with any more text; a settled start stays settled). Cost: one walk per rule over at most its window, most starts dropped at their first character.
 */
export function outputFrontier(text: string, base: number, rules: readonly Rule[], from = 0): number {
  const view = normalise(text);
  const raw = view.at === null ? rules : rules.filter((r) => r.raw);
  let frontier = base + frontierIn(text, raw, from);
  if (view.at === null) return frontier;
  // The same on the view, placed back on the text: a start is the first view character of its
  // code point, so everything before it (dropped characters included) can be shown.
  const { at } = view;
  // A lead is counted in view characters there: dropped characters may sit between it and the start.
  const j = frontierIn(
    view.text,
    rules.filter((r) => !r.raw),
    viewIndex(at, from),
  );
  frontier = Math.min(frontier, base + at[j]);
  // A high surrogate at the end is half of a letter still to come: held with it.
  const last = text.charCodeAt(text.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) frontier = Math.min(frontier, base + text.length - 1);
  return frontier;
}

/** The frontier of `rules` in `text`, as an index in it. */
function frontierIn(text: string, rules: readonly Rule[], from: number): number {
  let frontier = text.length;
  for (const rule of rules) {
    const lead = rule.lead ?? 0;
    const first = Math.max(0, from - lead, text.length - rule.window + 1);
    const last = frontier - lead; // starts from here on could only hold what is held already
    if (first < last) frontier = Math.min(frontier, prefixOf(rule).earliestOpen(text, first, last) + lead);
  }
  return frontier;
}
