import { alt, cls, EMPTY, lit, repeat, seq, type GNode } from './gbnf';

/**
 * Grammars of JSON numbers within bounds, written one way only: no exponent, no leading zeros, no
 * `-0`, and a fraction that ends in a non-zero digit (`1.5`, never `1.50` or `15e-1`). At most 15
 * significant digits, so every number sampled survives JSON.parse exactly enough that a bound it
 * keeps in decimal it keeps as a double (13.9999999999999999 would parse to 14).
 */
export const MAX_DIGITS = 15;
/** A number with a fraction has at most 9 integer and 6 fraction digits (15 significant). */
export const MAX_FRACTION_DIGITS = 6;
const LARGEST_WITH_FRACTION = 999_999_999;

const DIGIT = cls([[0x30, 0x39]]);
const NON_ZERO = cls([[0x31, 0x39]]);
const LARGEST = 10 ** MAX_DIGITS - 1;

/** Bounds on a value: `undefined` = unbounded on that side. */
export interface NumberBounds {
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}

/** Whole numbers within `bounds` (fractional bounds round inwards); undefined when none exist. */
export function integerNode(bounds: NumberBounds): GNode | undefined {
  const { lo, hi } = integerRange(bounds);
  const parts: GNode[] = [];
  if (hi >= 0) {
    const n = naturals(Math.max(lo, 0), hi);
    if (n) parts.push(n);
  }
  if (lo < 0) {
    const n = naturals(Math.max(1, -hi), -lo);
    if (n) parts.push(seq(lit('-'), n));
  }
  return parts.length > 0 ? alt(...parts) : undefined;
}

/**
 * Numbers within `bounds`, which must be whole numbers (or absent). A value is an integer part I
 * and a fraction f (0 or in (0, 1)): with f = 0 the bounds apply to I as to an integer; with f > 0,
 * lo ≤ I + f ≤ hi holds exactly when lo ≤ I ≤ hi - 1 (and likewise for the negative side), and an
 * exclusive bound excludes nothing a fraction could reach.
 */
export function numberNode(bounds: NumberBounds): GNode | undefined {
  const whole = integerRange(bounds);
  const lo = wholeBound(bounds.minimum, bounds.exclusiveMinimum, 'lo');
  const hi = wholeBound(bounds.maximum, bounds.exclusiveMaximum, 'hi');
  const fraction = seq(lit('.'), repeat(DIGIT, 0, MAX_FRACTION_DIGITS - 1), NON_ZERO);
  const fractional = (a: number, b: number) => naturals(a, Math.min(b, LARGEST_WITH_FRACTION));
  const parts: GNode[] = [];
  const add = (node: GNode | undefined, negative: boolean, fractional: boolean) => {
    if (node) parts.push(seq(negative ? lit('-') : EMPTY, node, fractional ? fraction : EMPTY));
  };
  if (whole.hi >= 0) add(naturals(Math.max(whole.lo, 0), whole.hi), false, false);
  if (whole.lo < 0) add(naturals(Math.max(1, -whole.hi), -whole.lo), true, false);
  if (hi - 1 >= 0) add(fractional(Math.max(lo, 0), hi - 1), false, true);
  if (-lo - 1 >= 0) add(fractional(Math.max(0, -hi), -lo - 1), true, true);
  return parts.length > 0 ? alt(...parts) : undefined;
}

/** The whole numbers the bounds admit, as [lo, hi] clamped to what fits {@link MAX_DIGITS} digits. */
function integerRange(bounds: NumberBounds): { lo: number; hi: number } {
  let lo = -LARGEST;
  let hi = LARGEST;
  if (bounds.minimum !== undefined) lo = Math.max(lo, Math.ceil(bounds.minimum));
  if (bounds.exclusiveMinimum !== undefined) lo = Math.max(lo, Math.floor(bounds.exclusiveMinimum) + 1);
  if (bounds.maximum !== undefined) hi = Math.min(hi, Math.floor(bounds.maximum));
  if (bounds.exclusiveMaximum !== undefined) hi = Math.min(hi, Math.ceil(bounds.exclusiveMaximum) - 1);
  return { lo, hi };
}

/** The tighter of an inclusive and an exclusive whole-number bound (a fraction never reaches either). */
function wholeBound(inclusive: number | undefined, exclusive: number | undefined, side: 'lo' | 'hi'): number {
  const values = [inclusive, exclusive].filter((v): v is number => v !== undefined);
  if (values.some((v) => !Number.isInteger(v))) throw new Error('number bounds must be whole numbers');
  if (values.length === 0) return side === 'lo' ? -LARGEST : LARGEST;
  return side === 'lo' ? Math.max(...values, -LARGEST) : Math.min(...values, LARGEST);
}

/** Decimal numerals of the whole numbers a..b (0 ≤ a), without leading zeros; undefined when a > b. */
export function naturals(a: number, b: number): GNode | undefined {
  if (a > b || b < 0) return undefined;
  const parts: GNode[] = [];
  if (a === 0) {
    parts.push(lit('0'));
    a = 1;
  }
  const la = String(a).length;
  const lb = String(b).length;
  // Lengths whose every numeral is in range share one node: [1-9][0-9]{m,n}.
  let full: [number, number] | undefined;
  for (let len = la; len <= lb && a <= b; len++) {
    const from = len === la ? String(a) : `1${'0'.repeat(len - 1)}`;
    const to = len === lb ? String(b) : '9'.repeat(len);
    if (/^10*$/.test(from) && /^9+$/.test(to)) full = full ? [full[0], len] : [len, len];
    else parts.push(sameLength(from, to));
  }
  if (full) parts.push(seq(NON_ZERO, repeat(DIGIT, full[0] - 1, full[1] - 1)));
  return parts.length > 0 ? alt(...parts) : undefined;
}

/** Digit strings of one length from `lo` to `hi` (lo ≤ hi), digit by digit. */
function sameLength(lo: string, hi: string): GNode {
  if (lo.length === 0) return EMPTY;
  if (lo === hi) return lit(lo);
  const rest = lo.length - 1;
  const a = Number(lo[0]);
  const b = Number(hi[0]);
  const loRest = lo.slice(1);
  const hiRest = hi.slice(1);
  if (a === b) return seq(lit(lo[0]), sameLength(loRest, hiRest));
  const any = repeat(DIGIT, rest, rest);
  const parts: GNode[] = [];
  // The first digit's full range is whatever digit is neither lo's nor hi's, plus theirs when the
  // rest of lo is all zeros (or the rest of hi all nines).
  const first = /^0*$/.test(loRest) ? a : a + 1;
  const last = /^9*$/.test(hiRest) ? b : b - 1;
  if (first > a) parts.push(seq(lit(lo[0]), sameLength(loRest, '9'.repeat(rest))));
  if (first <= last) parts.push(seq(digits(first, last), any));
  if (last < b) parts.push(seq(lit(hi[0]), sameLength('0'.repeat(rest), hiRest)));
  return alt(...parts);
}

function digits(from: number, to: number): GNode {
  return from === to ? lit(String(from)) : cls([[0x30 + from, 0x30 + to]]);
}

/** Any JSON number in canonical form (integer part at most {@link MAX_DIGITS} digits). */
export const ANY_NUMBER: GNode = numberNode({})!;
/** Any whole number in canonical form. */
export const ANY_INTEGER: GNode = integerNode({})!;
