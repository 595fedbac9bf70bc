import fc from 'fast-check';
import { encode } from 'gpt-tokenizer/encoding/o200k_harmony';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { trickyText } from '../testing/o200k-text-arbitraries';
import { mergeAsciiPiece } from './o200k-ascii-merge';
import { asciiPieceRank } from './o200k-ascii-ranks';

const libraryEncode = (text: string): number[] => encode(text, { disallowedSpecial: new Set() });

/** The regex pieces of `text` that need a merge: what {@link mergeAsciiPiece} is given. */
const mergedPieces = (text: string): string[] =>
  Array.from(text.matchAll(O200K_TOKEN_SPLIT_REGEX), (match) => match[0]).filter(
    (piece) => asciiPieceRank(piece, 0, piece.length) < 0,
  );

describe('mergeAsciiPiece', () => {
  it.each([
    ['a rare identifier', 'zqxjkvbw'],
    ['repeated pairs (ties go leftmost)', 'abababababab'],
    ['one unit repeated', 'aaaaaaaaaaaaaaaaaaaaaaa'],
    ['a long punctuation run', '=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-'],
    ['a long whitespace run', ' \t \t \t \t \t \t \t \t \t'],
    ['a piece longer than the scratch arrays', 'qwertyuiopasdfghjklzxcvbnm'.repeat(12)],
  ])('merges %s as gpt-tokenizer does', (_name, piece) => {
    expect(mergedPieces(piece)).toEqual([piece]);
    expect(mergeAsciiPiece(piece)).toEqual(libraryEncode(piece));
  });

  it('merges every piece of arbitrary ASCII text as gpt-tokenizer does', () => {
    const asciiUnit = fc.integer({ min: 0, max: 127 }).map((code) => String.fromCharCode(code));
    const text = fc.oneof(
      fc.string({ unit: asciiUnit, maxLength: 40 }),
      fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'), minLength: 2, maxLength: 30 }),
      fc.string({ unit: fc.constantFrom(...'qxzjkvQXZJKV'), minLength: 2, maxLength: 12 }),
      trickyText({ asciiOnly: true }),
    );
    fc.assert(
      fc.property(text, (s) => {
        for (const piece of mergedPieces(s)) expect(mergeAsciiPiece(piece)).toEqual(libraryEncode(piece));
      }),
      { numRuns: 5000 },
    );
  });
});
