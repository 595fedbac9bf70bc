import { codePointEnd, normalise, viewIndex, type TextView } from './normalise';
import { keywordIndexOf } from './keyword-index';
import { MAX_WINDOW, type Rule } from './rule';

/** A rule match in a stream, in stream coordinates (UTF-16 code units from the stream's start). */
export interface StreamMatch {
  readonly rule: Rule;
  /** Index of the rule in the rule set: the tie-break for matches at the same start. */
  readonly ruleIndex: number;
  readonly start: number;
  readonly end: number;
  /**
   * The match starts within the last window of the text seen so far, so text still to come may
   * change or remove it (a longer token, an `…EXAMPLE` suffix). It is reported now, so nothing
   * reaches the model unjudged, and again, settled, once the window is complete.
   */
  readonly provisional: boolean;
  /**
   * Stream length from which text to come can no longer change this match (its start plus its
   * rule's window, counted in view characters for a rule that reads the view). Streamed output
   * reports a match only from there.
   */
  readonly fixedAt: number;
}

/**
 * Finds every start position at which a rule matches `text`, where `text` sits at stream
 * position `base` and the stream currently ends at `base + text.length`.
 *
 * Why this equals a full scan: a rule's match at `s` depends only on `text[s, s + MAX_WINDOW)`
 * (the {@link Rule} contract), and every start is tried (overlapping matches included), so the
 * result for any start does not depend on where scanning began. A caller that keeps the last
 * `MAX_WINDOW - 1` characters and rescans them with the new text therefore finds exactly the
 * matches a scan of the whole stream would find at those starts.
 */
export function scanStream(text: string, base: number, rules: readonly Rule[]): StreamMatch[] {
  const matches: StreamMatch[] = [];
  collectMatches(text, base, text.length, base + text.length, rules, matches);
  return matches.sort(byPosition);
}

/**
 * {@link scanStream} in slices of `sliceChars` characters, yielding between slices so that a
 * caller can let other work run (the safety service serves other tenants' calls there). The
 * matches are exactly {@link scanStream}'s: the slice `[a, b)` is scanned with the next
 * `MAX_WINDOW` characters after it and keeps the matches that start inside it, and a match at `s`
 * reads only `text[s, s + MAX_WINDOW)` (proved by a property test in rules.spec.ts).
 */
export function* scanStreamSteps(
  text: string,
  base: number,
  rules: readonly Rule[],
  sliceChars: number,
): Generator<void, StreamMatch[], void> {
  if (text.length <= sliceChars) return scanStream(text, base, rules);
  const end = base + text.length;
  const matches: StreamMatch[] = [];
  for (let from = 0; from < text.length; from += sliceChars) {
    const to = Math.min(text.length, from + sliceChars);
    const slice: StreamMatch[] = [];
    collectMatches(text.slice(from, Math.min(text.length, to + MAX_WINDOW)), base + from, to - from, end, rules, slice);
    // Sorted a slice at a time: one sort of a wall of keys' ~150,000 matches took ~100 ms.
    for (const m of slice.sort(byPosition)) matches.push(m);
    if (to < text.length) yield;
  }
  // Slices hold matches by where the pattern matched; a rule's `lead` moves the reported start
  // past that, so across a slice boundary the order can (rarely) need a full sort.
  for (let i = 1; i < matches.length; i++)
    if (byPosition(matches[i - 1], matches[i]) > 0) return matches.sort(byPosition);
  return matches;
}

/**
 * The matches starting in `text[0, starts)`, where `text` sits at stream position `base` and the
 * stream ends at `end`. Rules read the normalised view of `text` ({@link normalise}), except
 * `raw` ones (hidden-text signals, which look for the very characters the view drops).
 */
function collectMatches(
  text: string,
  base: number,
  starts: number,
  end: number,
  rules: readonly Rule[],
  matches: StreamMatch[],
): void {
  const view = normalise(text);
  const chunk: Chunk = { text, view, base, starts, end, matches, found: new Map() };
  // The keywords of the lower-cased texts, found once, and only in texts some rule's keywords are looked up in.
  const index = keywordIndexOf(rules);
  let presentRaw: ReadonlySet<string> | undefined;
  let presentView: ReadonlySet<string> | undefined;
  // Plain loops, no closure: the bundles (and tsx) name every closure made with a defineProperty.
  for (let ruleIndex = 0; ruleIndex < rules.length; ruleIndex++) {
    const rule = rules[ruleIndex];
    const raw = rule.raw === true || view.at === null;
    if (rule.keywords.length > 0) {
      const present = raw
        ? (presentRaw ??= index.present(text.toLowerCase()))
        : (presentView ??= index.present(view.text.toLowerCase()));
      if (!hasAny(present, rule.keywords)) continue;
    }
    if (raw) rawMatches(chunk, rule, ruleIndex, rule.raw !== true);
    else viewMatches(chunk, rule, ruleIndex);
  }
}

function hasAny(present: ReadonlySet<string>, keywords: readonly string[]): boolean {
  for (const k of keywords) if (present.has(k)) return true;
  return false;
}

/** What {@link collectMatches} scans: `text` at stream position `base`, matches starting in `text[0, starts)`. */
interface Chunk {
  readonly text: string;
  readonly view: TextView;
  readonly base: number;
  readonly starts: number;
  /** Where the stream ends (a match whose window reaches past it is provisional). */
  readonly end: number;
  readonly matches: StreamMatch[];
  /** Pattern matches per pattern object, for rules that share one (the encoded-run rules). */
  readonly found: Map<RegExp, { subject: string; list: RegExpExecArray[] }>;
}

/**
 * A rule's matches on the text itself: a `raw` rule's, or any rule's where the text is its own
 * view. Then, as on a view, a match starts at a code point, not inside a surrogate pair: a view
 * of a tail cut inside a pair drops the half, so a start there would exist on one path only.
 */
function rawMatches(
  { text, base, starts, end, matches, found }: Chunk,
  rule: Rule,
  ruleIndex: number,
  codePoints: boolean,
): void {
  for (const m of patternMatches(found, rule.pattern, text, (index) => index < starts)) {
    if (codePoints && insidePair(text, m.index)) continue;
    if (rule.verify && !rule.verify(m[0])) continue;
    const at = base + m.index;
    const start = at + (rule.lead ?? 0);
    const provisional = at + MAX_WINDOW > end;
    matches.push({ rule, ruleIndex, start, end: at + m[0].length, provisional, fixedAt: at + rule.window });
  }
}

/**
 * Every start at which `re` matches `subject` while `inRange(start)`, each start tried (the next
 * search begins one past a match's start, not its end). Computed once per pattern object and
 * chunk: rules that share a pattern (the two encoded-run rules) share its pass over the text.
 */
function patternMatches(
  found: Chunk['found'],
  re: RegExp,
  subject: string,
  inRange: (index: number) => boolean,
): RegExpExecArray[] {
  const known = found.get(re);
  if (known?.subject === subject) return known.list;
  const list: RegExpExecArray[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(subject); m !== null && inRange(m.index); m = re.exec(subject)) {
    re.lastIndex = m.index + 1;
    list.push(m);
  }
  found.set(re, { subject, list });
  return list;
}

/**
 * A rule's matches on the view, placed on the original text. The Rule contract holds in original
 * positions: the rule's decision at a code point `s` reads the view of `text[s, s + MAX_WINDOW)`
 * only. When that view is shorter than the rule's window although the text goes on (invisible
 * characters are dropped, a pair of code units is one letter), the rule cannot see its whole
 * window there and does not match; otherwise it reads at most `window` view characters, all
 * inside. So a match spans at most MAX_WINDOW original characters, the carried tail suffices, and
 * a start in a view is a match exactly when it is one in the view of the whole stream. Only the
 * first view character of a code point starts a match (`ﬁ` → `fi` starts once).
 */
function viewMatches({ text, view, base, starts, end, matches, found }: Chunk, rule: Rule, ruleIndex: number): void {
  const at = view.at as Int32Array;
  for (const m of patternMatches(found, rule.pattern, view.text, (index) => at[index] < starts)) {
    const j = m.index;
    if ((j > 0 && at[j - 1] === at[j]) || insidePair(text, at[j])) continue;
    const s = at[j];
    const seen = viewIndex(at, Math.min(s + MAX_WINDOW, text.length)) - j; // view characters of the window so far
    if (seen < rule.window && s + MAX_WINDOW <= text.length) continue;
    if (rule.verify && !rule.verify(m[0])) continue;
    const start = base + at[j + (rule.lead ?? 0)];
    const last = base + codePointEnd(text, at[j + m[0].length - 1]);
    // Fixed once the rule's window is all in view, or once the original window is complete (and drops it).
    const fixedAt = base + (seen >= rule.window ? codePointEnd(text, at[j + rule.window - 1]) : s + MAX_WINDOW);
    matches.push({ rule, ruleIndex, start, end: last, provisional: base + s + MAX_WINDOW > end, fixedAt });
  }
}

/** Whether `pos` is the second half of a surrogate pair. */
function insidePair(text: string, pos: number): boolean {
  return pos > 0 && codePointEnd(text, pos - 1) === pos + 1;
}

/** Report order: stream position, then rule order. */
export function byPosition(
  a: Pick<StreamMatch, 'start' | 'ruleIndex'>,
  b: Pick<StreamMatch, 'start' | 'ruleIndex'>,
): number {
  return a.start - b.start || a.ruleIndex - b.ruleIndex;
}

/** The characters of a stream a later scan must see again: its last `MAX_WINDOW - 1`. */
export function tailOf(text: string): string {
  return text.length < MAX_WINDOW ? text : text.slice(text.length - (MAX_WINDOW - 1));
}
