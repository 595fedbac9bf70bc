import type { Rule } from './rule';
import { normalise, viewIndex } from './normalise';
import { RulePrefix } from './rule-prefix';

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
 * that died inside the text dies with any more text; a settled start stays settled). Cost: one
 * pass over the starts tried, most dropped by one lookup for all rules ({@link FrontierIndex}), and
 * one walk per rule with starts left. `rules` should be one array per rule list (indexes are kept
 * per array).
 */
export function outputFrontier(text: string, base: number, rules: readonly Rule[], from = 0): number {
  const view = normalise(text);
  const index = indexesOf(rules);
  let frontier = base + (view.at === null ? index.all : index.raw).frontierIn(text, from);
  if (view.at === null) return frontier;
  // The same on the view, placed back on the text: a start is the first view character of its
  // code point, so everything before it (dropped characters included) can be shown.
  const { at } = view;
  // A lead is counted in view characters there: dropped characters may sit between it and the start.
  const j = index.view.frontierIn(view.text, viewIndex(at, from));
  frontier = Math.min(frontier, base + at[j]);
  // A high surrogate at the end is half of a letter still to come: held with it.
  const last = text.charCodeAt(text.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) frontier = Math.min(frontier, base + text.length - 1);
  return frontier;
}

interface Indexes {
  /** Every rule, for a text the view leaves as it is. */
  all: FrontierIndex;
  /** The rules that read the text itself, and those that read its normalised view. */
  raw: FrontierIndex;
  view: FrontierIndex;
}

const indexes = new WeakMap<readonly Rule[], Indexes>();

function indexesOf(rules: readonly Rule[]): Indexes {
  let found = indexes.get(rules);
  if (!found) {
    found = {
      all: new FrontierIndex(rules),
      raw: new FrontierIndex(rules.filter((r) => r.raw)),
      view: new FrontierIndex(rules.filter((r) => !r.raw)),
    };
    indexes.set(rules, found);
  }
  return found;
}

const prefixes = new WeakMap<Rule, RulePrefix>();

/** The rule's prefix automaton, compiled once per rule (policies, and so their rules, are cached). */
export function prefixOf(rule: Rule): RulePrefix {
  let p = prefixes.get(rule);
  if (!p) prefixes.set(rule, (p = new RulePrefix(rule)));
  return p;
}

/** {@link FrontierIndex}'s pair table: not yet walked, no rule begins so, some rule may. */
const PAIR_UNKNOWN = 0;
const PAIR_CLOSED = 1;
const PAIR_MAY_OPEN = 2;

/** No rule (shared: never written to). */
const NONE: readonly number[] = [];

/**
 * Four-character beginnings remembered, over every index at once (a few thousand per rule list in
 * prose); then they all start over. One bound for the process: there is an index per rule list,
 * and so per configured policy, and a bound per index would grow with the tenants.
 */
const MAX_QUADS = 262_144;
/** Every index's quad table, weakly: an index lives as long as its rule list. */
const quadTables = new Set<WeakRef<Map<number, readonly number[]>>>();
let quadsHeld = 0;

function rememberQuad(table: Map<number, readonly number[]>, key: number, open: readonly number[]): void {
  if (quadsHeld >= MAX_QUADS) {
    for (const ref of quadTables) {
      const t = ref.deref();
      if (t) t.clear();
      else quadTables.delete(ref);
    }
    quadsHeld = 0;
  }
  table.set(key, open);
  quadsHeld++;
}

/**
 * The frontier of a list of rules, each start tried once for all of them. Which rules a match can
 * begin with at a start is read off its first character, and for four ASCII characters from a
 * table learnt from walking those four alone (exact: a walk that dies within them dies whatever
 * follows); prose repeats few such beginnings, so a start costs one lookup however many rules
 * there are, where trying each rule at each start cost a lookup per rule (issue 21: ~60% of a
 * streamed output's Classify call). A start left is walked at once, in order, so a rule's first
 * open start ends its search and the starts stop at the frontier found so far (collecting every
 * start first and walking them per rule afterwards made a 70-character output batch's Classify
 * ~40% dearer); the property test compares the result with RulePrefix.earliestOpen, one rule at a
 * time.
 */
export class FrontierIndex {
  private readonly prefixes: RulePrefix[];
  private readonly leads: number[];
  private readonly windows: number[];
  /** Per rule, its first start tried in the current call (scratch: a call runs to its end at once). */
  private readonly firsts: Int32Array;
  /** Per ASCII character, the rules (indices) a match can begin with there. */
  private readonly byFirst: number[][] = [];
  private readonly every: number[];
  /** Per two ASCII characters (first * 128 + second): whether any rule may begin with them. */
  private readonly pairs = new Uint8Array(128 * 128);
  /** Which rules may begin with a quad, by its four codes packed in 28 bits (see {@link rememberQuad}). */
  private readonly quads = new Map<number, readonly number[]>();

  constructor(readonly rules: readonly Rule[]) {
    this.prefixes = rules.map(prefixOf);
    this.leads = rules.map((r) => r.lead ?? 0);
    this.windows = rules.map((r) => r.window);
    this.every = rules.map((_, i) => i);
    this.firsts = new Int32Array(rules.length);
    quadTables.add(new WeakRef(this.quads));
    for (let c = 0; c < 128; c++) this.byFirst.push(this.every.filter((i) => this.prefixes[i].beginsWith(c)));
  }

  /**
   * The frontier in `text`, as an index in it: the earliest start (plus its rule's lead) at which
   * a rule could still match given more text, else the text's length. Starts more than a rule's
   * lead before `from` are settled (see {@link outputFrontier}) and not tried.
   */
  frontierIn(text: string, from: number): number {
    const n = this.rules.length;
    const len = text.length;
    const { firsts, leads } = this;
    let lo = len;
    for (let i = 0; i < n; i++) {
      firsts[i] = Math.max(0, from - leads[i], len - this.windows[i] + 1);
      if (firsts[i] < lo) lo = firsts[i];
    }
    // Starts in order, each walked as it comes: the first open start of a rule is its earliest,
    // and once the starts reach the frontier found so far, later ones can only hold what is held.
    let frontier = len;
    for (let s = lo; s < frontier; s++) {
      const open = this.openAt(text, s);
      for (let k = 0; k < open.length; k++) {
        const i = open[k];
        const at = s + leads[i];
        if (s >= firsts[i] && at < frontier && s < len - leads[i] && this.prefixes[i].opensAt(text, s)) frontier = at;
      }
    }
    return frontier;
  }

  /** The rules a match could begin with at `s`: all at a non-ASCII character, else by its first four. */
  private openAt(text: string, s: number): readonly number[] {
    const code = text.charCodeAt(s);
    if (code >= 128) return this.every;
    if (s + 4 > text.length) return this.byFirst[code];
    const c1 = text.charCodeAt(s + 1);
    const c2 = text.charCodeAt(s + 2);
    const c3 = text.charCodeAt(s + 3);
    if (c1 >= 128 || c2 >= 128 || c3 >= 128) return this.byFirst[code];
    // Most starts inside a word open no rule with their first two characters (an identifier
    // rule wants a boundary before it): a table of pairs drops them before the quads' Map.
    const pair = code * 128 + c1;
    let pairOpen = this.pairs[pair];
    if (pairOpen === PAIR_UNKNOWN) {
      const two = text.slice(s, s + 2);
      this.pairs[pair] = pairOpen = this.byFirst[code].some((i) => this.prefixes[i].opensWith(two))
        ? PAIR_MAY_OPEN
        : PAIR_CLOSED;
    }
    if (pairOpen === PAIR_CLOSED) return NONE;
    const key = ((code * 128 + c1) * 128 + c2) * 128 + c3;
    let open = this.quads.get(key);
    if (open === undefined) {
      const quad = text.slice(s, s + 4);
      open = this.byFirst[code].filter((i) => this.prefixes[i].opensWith(quad));
      rememberQuad(this.quads, key, (open = open.length === 0 ? NONE : open));
    }
    return open;
  }
}
