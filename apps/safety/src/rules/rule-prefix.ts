import { parseRegExpLiteral, type AST } from '@eslint-community/regexpp';
import type { Rule } from './rule';

/**
 * Deterministic states built as the walks meet them. Bounded: past {@link MAX_DFA_STATES} the
 * table starts over (a text that keeps meeting new state sets costs rebuilds, never unbounded
 * memory: at most ~0.5 MB of transition tables per rule). Ordinary prose, source code and
 * credentials make ~450 for the generic `secret=` rule, a few dozen for the others.
 */
const MAX_DFA_STATES = 2048;

/**
 * Whether a rule could still match at a position of a stream once more text arrives: the rule's
 * own pattern, read as a prefix automaton. The pattern becomes a nondeterministic automaton
 * (bounded quantifiers unrolled: no backtracking, so a lazy `{0,100}?` costs at most its bound),
 * walked from each candidate start as a deterministic one built on the way (each set of automaton
 * states met is one state, its transitions remembered); a walk that needs a character past the end
 * of the text says that text still to come could complete a match from its start.
 *
 * Exact for the characters the pattern consumes (classes, literals, bounded quantifiers,
 * alternatives, case folding). Assertions (lookaheads) and back-references only ever widen the
 * answer: a lookahead is passed through, a back-reference matches what its group could, so the
 * answer may say "could match" where the real pattern cannot, never the reverse. The property
 * tests in output-frontier.spec.ts check this against the rules' scan, and rule-prefix.spec.ts
 * against the walk it replaced (a set of reached positions per piece of pattern, which cost ~2 µs
 * per start of `generic-secret-assignment`, opened by every word of prose: most of a streamed
 * batch's frontier).
 */
export class RulePrefix {
  private readonly nfa: Nfa;
  private readonly dfa: Dfa;
  /** ASCII characters a match can begin with (1): most starts are dropped here, before any walk. */
  private readonly first = new Uint8Array(128);

  /** `maxStates`: deterministic states kept before the table starts over (tests make it small). */
  constructor(
    readonly rule: Rule,
    maxStates = MAX_DFA_STATES,
  ) {
    const literal = parseRegExpLiteral(rule.pattern);
    this.nfa = new Nfa(rule.pattern.flags.replace(/[gy]/g, ''));
    const start = this.nfa.alternatives(literal.pattern.alternatives, this.nfa.accept);
    this.dfa = new Dfa(this.nfa, start, maxStates);
    for (let c = 0; c < 128; c++) this.first[c] = this.earliestOf(String.fromCharCode(c), [0]) === 0 ? 1 : 0;
  }

  /** Whether a match can begin with the ASCII character `code` (exact: the walk of it alone). */
  beginsWith(code: number): boolean {
    return this.first[code] === 1;
  }

  /**
   * Whether a match can begin with `quad` (a few characters): a walk of those alone, which is
   * exact (a walk that dies within them dies whatever follows).
   */
  opensWith(quad: string): boolean {
    return this.earliestOf(quad, [0]) === 0;
  }

  /**
   * The earliest start in `[from, to)` at which a match of the rule is still possible given more text: the
   * pattern runs into the end of `text` from there, or already matches (its match may still
   * change). Infinity when none is. One rule at a time: the reference for FrontierIndex
   * (output-frontier.ts), which filters the starts of all rules in one pass.
   */
  earliestOpen(text: string, from: number, to: number): number {
    const candidates: number[] = [];
    for (let s = from; s < to; s++) {
      const code = text.charCodeAt(s);
      if (code >= 128 || (this.first[code] === 1 && this.mayBegin(text, s))) candidates.push(s);
    }
    return this.earliestOf(text, candidates);
  }

  /** Near the end, or with a non-ASCII character among the four, a start is tried (as any walk would pass it). */
  private mayBegin(text: string, s: number): boolean {
    if (s + 4 > text.length) return true;
    for (let i = s; i < s + 4; i++) if (text.charCodeAt(i) >= 128) return true;
    return this.opensWith(text.slice(s, s + 4));
  }

  /** Whether the pattern, run from `s`, runs into the end of `text` or matches. */
  opensAt(text: string, s: number): boolean {
    return this.dfa.opensAt(text, s);
  }

  /** The earliest of `starts` (ascending) from which the pattern runs into the end of `text` or matches, else Infinity. */
  earliestOf(text: string, starts: readonly number[]): number {
    let earliest = Infinity;
    for (const s of starts) if (s < earliest && this.dfa.opensAt(text, s)) earliest = s;
    return earliest;
  }
}

/** A one-character test with the pattern's own semantics (flags, classes), ASCII from a table. */
type CharTest = (code: number, ch: string) => boolean;

/**
 * The pattern as states: a character state consumes one character its test accepts and goes on to
 * `next`; a split goes on to each of `outs` without consuming; `accept` ends a match.
 */
class Nfa {
  readonly tests: (CharTest | undefined)[] = [];
  readonly next: number[] = [];
  readonly outs: (number[] | undefined)[] = [];
  readonly accept: number;

  constructor(private readonly flags: string) {
    this.accept = this.add(undefined, -1, undefined);
  }

  private add(test: CharTest | undefined, next: number, outs: number[] | undefined): number {
    this.tests.push(test);
    this.next.push(next);
    this.outs.push(outs);
    return this.tests.length - 1;
  }

  /** The states of `alternatives`, each going on to `next`; returns the state to enter them by. */
  alternatives(alternatives: readonly AST.Alternative[], next: number): number {
    const starts = alternatives.map((a) => this.sequence(a.elements, next));
    return starts.length === 1 ? starts[0] : this.add(undefined, -1, starts);
  }

  private sequence(elements: readonly AST.Element[], next: number): number {
    let at = next;
    for (let i = elements.length - 1; i >= 0; i--) at = this.element(elements[i], at);
    return at;
  }

  private element(e: AST.Element, next: number): number {
    switch (e.type) {
      case 'Character':
      case 'CharacterClass':
      case 'CharacterSet':
      case 'ExpressionCharacterClass':
        return this.add(charTest(e.raw, this.flags), next, undefined);
      case 'Quantifier':
        return this.quantifier(e, next);
      case 'Group':
      case 'CapturingGroup':
        return this.alternatives(e.alternatives, next);
      case 'Backreference': {
        // The group's text again: what the group could match (a superset of the one text it did match).
        const groups = Array.isArray(e.resolved) ? e.resolved : [e.resolved];
        const starts = groups.map((g: AST.CapturingGroup) => this.alternatives(g.alternatives, next));
        return starts.length === 1 ? starts[0] : this.add(undefined, -1, starts);
      }
      default:
        // Assertions (lookarounds, boundaries, anchors) constrain, never consume: passing them through widens.
        return next;
    }
  }

  /** `min` copies of the element, then `max - min` optional ones (or a loop, unbounded); greedy or lazy alike. */
  private quantifier(q: AST.Quantifier, next: number): number {
    let at: number;
    if (q.max === Infinity) {
      const loop = this.add(undefined, -1, []);
      this.outs[loop] = [this.element(q.element, loop), next];
      at = loop;
    } else {
      at = next;
      for (let i = q.min; i < q.max; i++) at = this.add(undefined, -1, [this.element(q.element, at), next]);
    }
    for (let i = 0; i < q.min; i++) at = this.element(q.element, at);
    return at;
  }

  /** The character states and whether `accept` is reached from `from` without consuming. */
  closure(from: readonly number[]): { chars: number[]; accepting: boolean } {
    const seen = new Set<number>();
    const chars: number[] = [];
    let accepting = false;
    const stack = [...from];
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (seen.has(s)) continue;
      seen.add(s);
      if (s === this.accept) accepting = true;
      else if (this.tests[s]) chars.push(s);
      else for (const o of this.outs[s]!) stack.push(o);
    }
    return { chars: chars.sort((a, b) => a - b), accepting };
  }
}

/** One state of the deterministic walk: a set of character states of the automaton. */
interface DfaState {
  /** The automaton's character states, ascending. */
  readonly chars: readonly number[];
  /** A match has ended here: it may still change, so the start is held. */
  readonly accepting: boolean;
  /** Next state index per ASCII character (-1: not computed yet). */
  readonly ascii: Int16Array;
  /** Next state index per other character. */
  readonly other: Map<number, number>;
}

/** The state with no character states: every walk that reaches it has died. */
const DEAD = 0;

class Dfa {
  private states: DfaState[] = [];
  private readonly byKey = new Map<string, number>();
  private start = DEAD;

  constructor(
    private readonly nfa: Nfa,
    private readonly entry: number,
    private readonly maxStates: number,
  ) {
    this.reset();
  }

  private reset(): void {
    this.states = [];
    this.byKey.clear();
    this.intern([], false);
    const { chars, accepting } = this.nfa.closure([this.entry]);
    this.start = this.intern(chars, accepting);
  }

  private intern(chars: number[], accepting: boolean): number {
    const key = `${accepting ? 'a' : ''}${chars.join(',')}`;
    let index = this.byKey.get(key);
    if (index === undefined) {
      index = this.states.length;
      this.states.push({ chars, accepting, ascii: new Int16Array(128).fill(-1), other: new Map() });
      this.byKey.set(key, index);
    }
    return index;
  }

  /** Whether the walk from `s` runs into the end of `text` (a character is still wanted) or matches. */
  opensAt(text: string, s: number): boolean {
    let state = this.states[this.start];
    for (let p = s; ; p++) {
      if (state.accepting) return true;
      if (state.chars.length === 0) return false;
      if (p >= text.length) return true;
      const code = text.charCodeAt(p);
      let next = code < 128 ? state.ascii[code] : (state.other.get(code) ?? -1);
      if (next < 0) {
        next = this.step(state, code, text[p]);
        // A rebuild drops every state: the walk goes on from the one just made, which the rebuild kept.
        if (next < 0) {
          state = this.states[-next - 1];
          continue;
        }
        if (code < 128) state.ascii[code] = next;
        else state.other.set(code, next);
      }
      state = this.states[next];
    }
  }

  /** The state after `state` reads one character; negative (−index − 1) when the table was rebuilt to make room. */
  private step(state: DfaState, code: number, ch: string): number {
    const to: number[] = [];
    for (const c of state.chars) if (this.nfa.tests[c]!(code, ch)) to.push(this.nfa.next[c]);
    const { chars, accepting } = this.nfa.closure(to);
    if (this.states.length < this.maxStates) return this.intern(chars, accepting);
    this.reset();
    return -this.intern(chars, accepting) - 1;
  }
}

/**
 * One test per character class and flags, shared by every element and rule that has it: an
 * unrolled `[A-Za-z0-9+/]{40,}` is forty elements of one class, and compiling each again made
 * the encoded-run rule take 6 ms to build. Bounded: tenants' policy terms bring classes of their own.
 */
const charTests = new Map<string, CharTest>();
const MAX_CHAR_TESTS = 4096;

function charTest(raw: string, flags: string): CharTest {
  const key = `${flags}/${raw}`;
  let test = charTests.get(key);
  if (!test) {
    if (charTests.size >= MAX_CHAR_TESTS) charTests.clear();
    charTests.set(key, (test = compileCharTest(raw, flags)));
  }
  return test;
}

function compileCharTest(raw: string, flags: string): CharTest {
  const re = new RegExp(`^(?:${raw})$`, flags);
  const ascii = new Uint8Array(128);
  for (let c = 0; c < 128; c++) ascii[c] = re.test(String.fromCharCode(c)) ? 1 : 0;
  return (code, ch) => (code < 128 ? ascii[code] === 1 : re.test(ch));
}
