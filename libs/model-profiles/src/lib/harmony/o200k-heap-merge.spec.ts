import fc from 'fast-check';
import { encode } from 'gpt-tokenizer/encoding/o200k_harmony';
import { mergeAsciiPiece } from './o200k-ascii-merge';
import { asciiPieceRank } from './o200k-ascii-ranks';
import { heapMergeAscii } from './o200k-heap-merge';

const libraryEncode = (text: string): number[] => encode(text, { disallowedSpecial: new Set() });

/** Runs of `alphabet` (letters, spaces, one punctuation class form one regex piece) of any length in range. */
const pieceOf = (alphabet: string, minLength: number, maxLength: number): fc.Arbitrary<string> =>
  fc
    .integer({ min: minLength, max: maxLength })
    .chain((n) => fc.string({ unit: fc.constantFrom(...alphabet), minLength: n, maxLength: n }));

/** A piece that is one vocabulary entry never reaches a merge. */
const isEntry = (piece: string): boolean => asciiPieceRank(piece, 0, piece.length) >= 0;

describe('heapMergeAscii', () => {
  it('merges like the scan merge: lowest rank first, leftmost on a tie', () => {
    const piece = fc.oneof(
      pieceOf('abcdefghijklmnopqrstuvwxyz', 2, 300),
      pieceOf('ab', 2, 300),
      pieceOf('qxzjkv', 2, 60),
      pieceOf(' ', 2, 600),
      pieceOf('=-', 2, 200),
    );
    fc.assert(
      fc.property(piece, (p) => {
        if (isEntry(p)) return;
        expect(heapMergeAscii(p, 0, p.length)).toEqual(mergeAsciiPiece(p));
      }),
      { numRuns: 2000 },
    );
  });

  it('merges a piece inside a longer text, from its offsets', () => {
    const text = `xx ${'qwertyuiopasdfghjklzxcvbnm'.repeat(20)} yy`;
    expect(heapMergeAscii(text, 3, text.length - 3)).toEqual(libraryEncode('qwertyuiopasdfghjklzxcvbnm'.repeat(20)));
  });

  it('merges pieces of thousands of units exactly as gpt-tokenizer does', () => {
    const longPiece = fc.oneof(pieceOf('abcdefghijklmnopqrstuvwxyz', 1_000, 4_096), pieceOf(' ', 1_000, 4_096));
    fc.assert(
      fc.property(longPiece, (p) => {
        if (isEntry(p)) return;
        expect(heapMergeAscii(p, 0, p.length)).toEqual(libraryEncode(p));
      }),
      { numRuns: 15 },
    );
  });
});
