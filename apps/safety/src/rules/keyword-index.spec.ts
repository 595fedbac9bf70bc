import fc from 'fast-check';
import { KeywordIndex, keywordIndexOf } from './keyword-index';

/** What the scan's pre-filter asked before the index: each keyword looked up on its own. */
const byIncludes = (keywords: readonly string[], text: string) => new Set(keywords.filter((k) => text.includes(k)));

describe('KeywordIndex', () => {
  it('finds exactly the keywords String#includes finds, overlapping, nested and special ones included', () => {
    const alphabet = fc.constantFrom('a', 'b', 'k', 'e', 'y', '_', '-', '.', '*', '(', '\\', 'é', '🦀', '\uD800', ' ');
    const word = fc.array(alphabet, { minLength: 0, maxLength: 6 }).map((units) => units.join(''));
    // Texts made of the keywords' own pieces and stray units, so keywords occur, overlap and nest.
    const piece = (keywords: string[]) =>
      fc.oneof(
        alphabet,
        fc.constantFrom('', ...keywords).chain((k) => fc.integer({ min: 0, max: k.length }).map((i) => k.slice(i))),
        fc.constantFrom('', ...keywords),
      );
    const case_ = fc
      .array(word, { maxLength: 12 })
      .chain((keywords) => fc.tuple(fc.constant(keywords), fc.array(piece(keywords), { maxLength: 60 })));
    fc.assert(
      fc.property(case_, ([keywords, pieces]) => {
        const text = pieces.join('');
        expect(new KeywordIndex(keywords).present(text)).toEqual(byIncludes(keywords, text));
      }),
      { numRuns: 2_000 },
    );
  });

  it('sees keywords that start inside another match, and one that is a prefix of another', () => {
    const index = new KeywordIndex(['api_key', 'key', 'pass', 'password', 'sword']);
    expect(index.present('my api_key and password')).toEqual(new Set(['api_key', 'key', 'pass', 'password', 'sword']));
    expect(index.present('nothing here')).toEqual(new Set());
  });

  it('is built once per rule list', () => {
    const rules = [{ keywords: ['token'] }, { keywords: ['secret', 'token'] }];
    expect(keywordIndexOf(rules)).toBe(keywordIndexOf(rules));
    expect(keywordIndexOf(rules).present('a secret')).toEqual(new Set(['secret']));
  });
});
