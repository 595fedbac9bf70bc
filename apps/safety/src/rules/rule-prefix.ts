import { parseRegExpLiteral, type AST } from '@eslint-community/regexpp';
import type { Rule } from './rule';

/** Positions in the text reached after a piece of pattern, and whether some path needed text past its end. */
interface Run {
  hitEnd: boolean;
}

/** Advances a set of positions through one piece of pattern. */
type Step = (text: string, from: readonly number[], run: Run) => number[];

/**
 * Whether a rule could still match at a position of a stream once more text arrives: the rule's
 * own pattern, read as a prefix automaton. The pattern is walked over the text with a set of
 * positions (no backtracking, so a lazy `{0,100}?` costs at most its bound); a path that needs a
 * character past the end of the text says that text still to come could complete a match there.
 *
 * Exact for the characters the pattern consumes (classes, literals, bounded quantifiers,
 * alternatives, case folding). Assertions (lookaheads) and back-references only ever widen the
 * answer: a lookahead is passed through, a back-reference matches what its group could, so the
 * answer may say "could match" where the real pattern cannot, never the reverse. The property
 * tests in output-frontier.spec.ts check this against the rules' scan.
 */
export class RulePrefix {
  private readonly step: Step;

  constructor(readonly rule: Rule) {
    const literal = parseRegExpLiteral(rule.pattern);
    this.step = compileAlternatives(literal.pattern.alternatives, rule.pattern.flags.replace(/[gy]/g, ''));
  }

  /**
   * True when a match of the rule starting at `at` is still possible given more text: the pattern
   * runs into the end of `text` from `at`, or already matches there (its match may still change).
   */
  open(text: string, at: number): boolean {
    const run: Run = { hitEnd: false };
    const done = this.step(text, [at], run);
    return run.hitEnd || done.length > 0;
  }
}

function compileAlternatives(alternatives: readonly AST.Alternative[], flags: string): Step {
  const steps = alternatives.map((a) => compileSequence(a.elements, flags));
  if (steps.length === 1) return steps[0];
  return (text, from, run) => union(steps.map((s) => s(text, from, run)));
}

function compileSequence(elements: readonly AST.Element[], flags: string): Step {
  const steps = elements.map((e) => compileElement(e, flags));
  return (text, from, run) => {
    let cur = from as number[];
    for (const s of steps) {
      if (cur.length === 0) break;
      cur = s(text, cur, run);
    }
    return cur;
  };
}

function compileElement(e: AST.Element, flags: string): Step {
  switch (e.type) {
    case 'Character':
    case 'CharacterClass':
    case 'CharacterSet':
    case 'ExpressionCharacterClass':
      return consume(charTest(e.raw, flags));
    case 'Group':
    case 'CapturingGroup':
      return compileAlternatives(e.alternatives, flags);
    case 'Quantifier':
      return repeat(compileElement(e.element, flags), e.min, e.max);
    case 'Backreference': {
      // The group's text again: what the group could match (a superset of the one text it did match).
      const groups = Array.isArray(e.resolved) ? e.resolved : [e.resolved];
      const steps = groups.map((g: AST.CapturingGroup) => compileAlternatives(g.alternatives, flags));
      return (text, from, run) => union(steps.map((s) => s(text, from, run)));
    }
    default:
      // Assertions (lookarounds, boundaries, anchors) constrain, never consume: passing them through widens.
      return (_text, from) => from as number[];
  }
}

/** One character that `test` accepts; at the end of the text, the path needs more text. */
function consume(test: (code: number, ch: string) => boolean): Step {
  return (text, from, run) => {
    const out: number[] = [];
    for (const p of from) {
      if (p >= text.length) run.hitEnd = true;
      else if (test(text.charCodeAt(p), text[p])) out.push(p + 1);
    }
    return out;
  };
}

/** Positions after `min` to `max` repetitions. */
function repeat(step: Step, min: number, max: number): Step {
  return (text, from, run) => {
    const reached = new Set<number>();
    let cur = from as number[];
    for (let i = 0; ; i++) {
      if (i >= min) for (const p of cur) reached.add(p);
      if (i >= max || cur.length === 0) break;
      const next = step(text, cur, run);
      // An unbounded repetition ends once it reaches nothing new.
      cur = i >= min && max === Infinity ? next.filter((p) => !reached.has(p)) : next;
    }
    return [...reached].sort((a, b) => a - b);
  };
}

/** A one-character test with the pattern's own semantics (flags, classes), ASCII from a table. */
function charTest(raw: string, flags: string): (code: number, ch: string) => boolean {
  const re = new RegExp(`^(?:${raw})$`, flags);
  const ascii = new Uint8Array(128);
  for (let c = 0; c < 128; c++) ascii[c] = re.test(String.fromCharCode(c)) ? 1 : 0;
  return (code, ch) => (code < 128 ? ascii[code] === 1 : re.test(ch));
}

function union(sets: number[][]): number[] {
  if (sets.length === 1) return sets[0];
  return [...new Set(sets.flat())].sort((a, b) => a - b);
}
