import bpeRanks from 'gpt-tokenizer/bpeRanks/o200k_base';
import fc from 'fast-check';
import { nonAsciiEntryRank } from './o200k-non-ascii-ranks';

const hasNonAscii = (text: string): boolean => /[^\0-\x7f]/.test(text);

describe('nonAsciiEntryRank', () => {
  it('finds every vocabulary entry with a non-ASCII unit at its rank', () => {
    bpeRanks.forEach((entry, rank) => {
      if (typeof entry === 'string' && hasNonAscii(entry) && nonAsciiEntryRank(entry) !== rank)
        throw new Error(`rank of ${JSON.stringify(entry)} is not ${rank}`);
    });
  });

  it('agrees with an exact string lookup on arbitrary pieces, and knows no ASCII entry', () => {
    const rankOf = new Map<string, number>();
    bpeRanks.forEach((entry, rank) => typeof entry === 'string' && hasNonAscii(entry) && rankOf.set(entry, rank));
    const nearEntry = fc.tuple(fc.nat(bpeRanks.length - 1), fc.string({ maxLength: 1 })).map(([rank, suffix]) => {
      const entry = bpeRanks[rank];
      return (typeof entry === 'string' ? entry : 'é') + suffix;
    });
    const piece = fc.oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }),
      nearEntry,
    );
    fc.assert(
      fc.property(piece, (text) => {
        expect(nonAsciiEntryRank(text)).toBe(rankOf.get(text) ?? -1);
      }),
      { numRuns: 5000 },
    );
  });
});
