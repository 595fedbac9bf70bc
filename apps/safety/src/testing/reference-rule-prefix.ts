/**
 * The walk of a rule's pattern as a set of reached positions per piece of pattern, from every start
 * at once: what RulePrefix (rules/rule-prefix.ts) answered before it ran as an automaton. Kept for
 * the property test that compares the two on every rule; not used by the service.
 */
import { parseRegExpLiteral, type AST } from '@eslint-community/regexpp';
import type { Rule } from '../rules/rule';

/**
 * Positions in the text a piece of pattern has reached, each with the earliest start it was
 * reached from: two starts that reach the same position at the same point of the pattern have the
 * same future, so only the earlier one matters.
 */
type Reached = Map<number, number>;

/** Where some path needed text past the end of the text: the earliest start it came from. */
interface Run {
  hitEnd: number;
}

/** Advances the reached positions through one piece of pattern. */
type Step = (text: string, from: Reached, run: Run) => Reached;

/**
 * The walk: the pattern over the text with the set of positions reached (no backtracking), from
 * every start at once; a path that needs a character past the end of the text says that text still
 * to come could complete a match from its start. Lookaheads are passed through, a back-reference
 * matches what its group could (as RulePrefix does). No pre-filter of starts: every start given is
 * walked, so the test also checks RulePrefix's filters drop no open start.
 */
export class ReferenceRulePrefix {
  private readonly step: Step;

  constructor(readonly rule: Rule) {
    const literal = parseRegExpLiteral(rule.pattern);
    this.step = compileAlternatives(literal.pattern.alternatives, rule.pattern.flags.replace(/[gy]/g, ''));
  }

  /**
   * The earliest of `starts` from which the pattern runs into the end of `text` or matches, else
   * Infinity. Two starts reaching the same point keep the earlier, so over a union of start sets
   * this is the minimum of its value over each set.
   */
  earliestOf(text: string, starts: readonly number[]): number {
    if (starts.length === 0) return Infinity;
    const from: Reached = new Map();
    for (const s of starts) from.set(s, s);
    const run: Run = { hitEnd: Infinity };
    let earliest = run.hitEnd;
    for (const s of this.step(text, from, run).values()) earliest = Math.min(earliest, s);
    return Math.min(earliest, run.hitEnd);
  }
}

/** No position reached (shared: never written to). */
const NONE: Reached = new Map();

function compileAlternatives(alternatives: readonly AST.Alternative[], flags: string): Step {
  const steps = alternatives.map((a) => compileSequence(a.elements, flags));
  if (steps.length === 1) return steps[0];
  return (text, from, run) => union(steps.map((s) => s(text, from, run)));
}

function compileSequence(elements: readonly AST.Element[], flags: string): Step {
  const steps = elements.map((e) => compileElement(e, flags));
  return (text, from, run) => {
    let cur = from;
    for (const s of steps) {
      if (cur.size === 0) break;
      cur = s(text, cur, run);
    }
    return cur;
  };
}

const CHAR_TYPES = new Set(['Character', 'CharacterClass', 'CharacterSet', 'ExpressionCharacterClass']);

function compileElement(e: AST.Element, flags: string): Step {
  switch (e.type) {
    case 'Character':
    case 'CharacterClass':
    case 'CharacterSet':
    case 'ExpressionCharacterClass':
      return consume(charTest(e.raw, flags));
    case 'Quantifier':
      // A run of one class (`[A-Za-z0-9]{36}`, `\s{0,3}`): walked along the text, no set per repetition.
      if (CHAR_TYPES.has(e.element.type)) return repeatChar(charTest(e.element.raw, flags), e.min, e.max);
      return repeat(compileElement(e.element, flags), e.min, e.max);
    case 'Group':
    case 'CapturingGroup':
      return compileAlternatives(e.alternatives, flags);
    case 'Backreference': {
      // The group's text again: what the group could match (a superset of the one text it did match).
      const groups = Array.isArray(e.resolved) ? e.resolved : [e.resolved];
      const steps = groups.map((g: AST.CapturingGroup) => compileAlternatives(g.alternatives, flags));
      return (text, from, run) => union(steps.map((s) => s(text, from, run)));
    }
    default:
      // Assertions (lookarounds, boundaries, anchors) constrain, never consume: passing them through widens.
      return (_text, from) => from;
  }
}

/** One character that `test` accepts; at the end of the text, the path needs more text. */
function consume(test: (code: number, ch: string) => boolean): Step {
  return (text, from, run) => {
    // Most paths die at once: no map unless one goes on.
    let out: Reached | undefined;
    for (const [p, s] of from) {
      if (p >= text.length) run.hitEnd = Math.min(run.hitEnd, s);
      else if (test(text.charCodeAt(p), text[p])) (out ??= new Map()).set(p + 1, s); // one position in, one out
    }
    return out ?? NONE;
  };
}

/** Positions after `min` to `max` characters that `test` accepts: {@link repeat} of {@link consume}, along the text. */
function repeatChar(test: (code: number, ch: string) => boolean, min: number, max: number): Step {
  return (text, from, run) => {
    let out: Reached | undefined;
    for (const [p, s] of from) {
      for (let i = 0, q = p; ; i++, q++) {
        if (i >= min && s < ((out ??= new Map()).get(q) ?? Infinity)) out.set(q, s);
        if (i >= max) break;
        if (q >= text.length) {
          run.hitEnd = Math.min(run.hitEnd, s);
          break;
        }
        if (!test(text.charCodeAt(q), text[q])) break;
      }
    }
    return out ?? NONE;
  };
}

/** Positions after `min` to `max` repetitions. */
function repeat(step: Step, min: number, max: number): Step {
  return (text, from, run) => {
    const reached: Reached = new Map();
    let cur = from;
    for (let i = 0; ; i++) {
      if (i >= min) merge(reached, cur);
      if (i >= max || cur.size === 0) break;
      const next = step(text, cur, run);
      // An unbounded repetition ends once it reaches nothing new.
      if (i >= min && max === Infinity)
        for (const [p, s] of next) if ((reached.get(p) ?? Infinity) <= s) next.delete(p);
      cur = next;
    }
    return reached;
  };
}

/** A one-character test with the pattern's own semantics (flags, classes), ASCII from a table. */
function charTest(raw: string, flags: string): (code: number, ch: string) => boolean {
  const re = new RegExp(`^(?:${raw})$`, flags);
  const ascii = new Uint8Array(128);
  for (let c = 0; c < 128; c++) ascii[c] = re.test(String.fromCharCode(c)) ? 1 : 0;
  return (code, ch) => (code < 128 ? ascii[code] === 1 : re.test(ch));
}

function merge(into: Reached, from: Reached): void {
  for (const [p, s] of from) if (s < (into.get(p) ?? Infinity)) into.set(p, s);
}

function union(sets: Reached[]): Reached {
  if (sets.length === 1) return sets[0];
  const out: Reached = new Map();
  for (const set of sets) merge(out, set);
  return out;
}
