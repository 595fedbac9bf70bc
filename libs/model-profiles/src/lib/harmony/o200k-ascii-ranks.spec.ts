import bpeRanks from 'gpt-tokenizer/bpeRanks/o200k_base';
import fc from 'fast-check';
import { asciiPieceRank } from './o200k-ascii-ranks';

const isAscii = (text: string): boolean => /^[\0-\x7f]*$/.test(text);

describe('asciiPieceRank', () => {
  it('finds every ASCII vocabulary entry at its rank, also inside a longer text', () => {
    bpeRanks.forEach((entry, rank) => {
      if (typeof entry !== 'string' || !isAscii(entry)) return;
      if (asciiPieceRank(entry, 0, entry.length) !== rank)
        throw new Error(`rank of ${JSON.stringify(entry)} is not ${rank}`);
      if (asciiPieceRank(`<${entry}>`, 1, entry.length + 1) !== rank)
        throw new Error(`rank of ${JSON.stringify(entry)} inside a text is not ${rank}`);
    });
  });

  it('agrees with an exact string lookup on arbitrary ASCII pieces', () => {
    const rankOf = new Map<string, number>();
    bpeRanks.forEach((entry, rank) => typeof entry === 'string' && rankOf.set(entry, rank));
    const asciiUnit = fc.integer({ min: 0, max: 127 }).map((code) => String.fromCharCode(code));
    // Vocabulary entries with one unit changed, cut or extended reach the collisions that matter.
    const nearEntry = fc
      .tuple(fc.nat(bpeRanks.length - 1), fc.nat(), asciiUnit, fc.constantFrom('change', 'cut', 'extend'))
      .map(([rank, at, unit, edit]) => {
        const entry = bpeRanks[rank];
        const key = typeof entry === 'string' && isAscii(entry) ? entry : 'fallback';
        const i = at % key.length;
        if (edit === 'cut') return key.slice(0, i);
        if (edit === 'extend') return key + unit;
        return key.slice(0, i) + unit + key.slice(i + 1);
      });
    const piece = fc.oneof(
      fc.string({ unit: asciiUnit, minLength: 1, maxLength: 20 }),
      nearEntry.filter((key) => key.length > 0),
    );
    fc.assert(
      fc.property(piece, (key) => {
        expect(asciiPieceRank(key, 0, key.length)).toBe(rankOf.get(key) ?? -1);
      }),
      { numRuns: 5000 },
    );
  });
});
