import fc from 'fast-check';
import { grammarRegExp } from '../../testing/grammar-walk';
import type { GNode } from './gbnf';
import { integerNode, naturals, numberNode, type NumberBounds } from './number-grammar';

const regexOf = (node: GNode | undefined) => (node ? grammarRegExp({ rules: new Map([['root', node]]) }) : /(?!)/);

function within(v: number, b: NumberBounds): boolean {
  return (
    (b.minimum === undefined || v >= b.minimum) &&
    (b.maximum === undefined || v <= b.maximum) &&
    (b.exclusiveMinimum === undefined || v > b.exclusiveMinimum) &&
    (b.exclusiveMaximum === undefined || v < b.exclusiveMaximum)
  );
}

const bound = fc.option(fc.integer({ min: -1200, max: 1200 }), { nil: undefined });
const bounds = fc.record({ minimum: bound, maximum: bound, exclusiveMinimum: bound, exclusiveMaximum: bound });

describe('number grammars', () => {
  it('write the numerals of exactly the whole numbers a..b', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 5000 }), (a, b) => {
        const re = regexOf(naturals(a, b));
        for (let n = 0; n <= 5100; n += n < 1200 ? 1 : 37) expect(re.test(String(n))).toBe(n >= a && n <= b);
        expect(re.test('007')).toBe(false);
      }),
      { numRuns: 60 },
    );
  });

  it('accept an integer exactly when it is within the bounds (fractional bounds round inwards)', () => {
    fc.assert(
      fc.property(bounds, fc.boolean(), (b, fractional) => {
        const shifted = fractional ? { ...b, minimum: b.minimum === undefined ? undefined : b.minimum + 0.5 } : b;
        const re = regexOf(integerNode(shifted));
        for (let n = -1300; n <= 1300; n++) expect(re.test(String(n))).toBe(within(n, shifted));
        expect(re.test('-0')).toBe(false);
        expect(re.test('1.5')).toBe(false);
        expect(re.test('1e3')).toBe(false);
      }),
      { numRuns: 80 },
    );
  });

  it('accept a number exactly when it is within whole-number bounds, in one canonical spelling', () => {
    fc.assert(
      fc.property(bounds, (b) => {
        const re = regexOf(numberNode(b));
        for (let tenths = -3000; tenths <= 3000; tenths += 7) {
          const v = tenths / 10;
          expect(re.test(String(v))).toBe(within(v, b));
        }
        for (const v of [0.001, -0.999, 12.25, -12.75, 1199.9999]) expect(re.test(String(v))).toBe(within(v, b));
        for (const text of ['1.50', '-0', '01', '1.', '.5', '2e1']) expect(re.test(text)).toBe(false);
      }),
      { numRuns: 80 },
    );
  });

  it('reach the largest magnitudes a double holds exactly, and no further', () => {
    const re = regexOf(integerNode({}));
    expect(re.test('999999999999999')).toBe(true);
    expect(re.test('-999999999999999')).toBe(true);
    expect(re.test('1000000000000000')).toBe(false);
  });

  it('have nothing to offer for empty ranges', () => {
    expect(integerNode({ minimum: 3, maximum: 2 })).toBeUndefined();
    expect(integerNode({ exclusiveMinimum: 1, exclusiveMaximum: 2 })).toBeUndefined();
    expect(numberNode({ exclusiveMinimum: 1, exclusiveMaximum: 2 })).toBeDefined(); // 1.5
    expect(() => numberNode({ minimum: 0.5 })).toThrow('whole numbers');
  });
});
