import fc from 'fast-check';
import { encode } from 'gpt-tokenizer/encoding/o200k_harmony';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { nonAsciiEntryRank } from './o200k-non-ascii-ranks';
import { mergeUtf8Piece } from './o200k-utf8-merge';

const libraryEncode = (text: string): number[] => encode(text, { disallowedSpecial: new Set() });

/** The regex pieces of `text` that are no single entry: what the library merges, and so {@link mergeUtf8Piece} is given. */
const mergedPieces = (text: string): string[] =>
  Array.from(text.matchAll(O200K_TOKEN_SPLIT_REGEX), (match) => match[0]).filter(
    (piece) => nonAsciiEntryRank(piece) < 0 && libraryEncode(piece).length > 1,
  );

/** A deterministic run of `length` code points drawn from `alphabet` (one regex piece when all are letters). */
const run = (length: number, alphabet: readonly string[], seed: number): string => {
  let x = seed;
  let text = '';
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    text += alphabet[x % alphabet.length];
  }
  return text;
};
const cjk = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(0x4e00 + i * 7));
const thai = [...'กขคงจฉชซฌญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรลวศษสหฬอฮ'];

describe('mergeUtf8Piece', () => {
  it.each([
    ['accented words', 'naïveté'],
    ['a CJK run', '機械学習モデルの推論サーバー'],
    ['emoji', '🦀🦀🦀🦀🚀🚀'],
    ['a lone surrogate (U+FFFD bytes)', 'é\ud800é'],
    ['byte order marks (the library decodes a pair without its leading BOM)', '\ufeff\ufeffusing'],
    ['combining marks', 'e\u0301e\u0301e\u0301'],
  ])('merges %s as gpt-tokenizer does', (_name, text) => {
    const pieces = mergedPieces(text);
    expect(pieces.length).toBeGreaterThan(0);
    for (const piece of pieces) expect(mergeUtf8Piece(piece)).toEqual(libraryEncode(piece));
  });

  it('merges the pieces of arbitrary unicode as gpt-tokenizer does', () => {
    const text = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 60 }),
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.string({
        unit: fc.integer({ min: 0x80, max: 0xffff }).map((code) => String.fromCharCode(code)),
        maxLength: 80,
      }),
    );
    fc.assert(
      fc.property(text, (s) => {
        for (const piece of mergedPieces(s)) expect(mergeUtf8Piece(piece)).toEqual(libraryEncode(piece));
      }),
      { numRuns: 3_000 },
    );
  });

  it('merges pieces of hundreds to thousands of units (the heap) as gpt-tokenizer does', () => {
    const piece = fc.oneof(
      fc.integer({ min: 90, max: 1_400 }).map((n) => run(n, cjk, n)),
      fc.integer({ min: 90, max: 1_400 }).map((n) => run(n, thai, n)),
      fc.integer({ min: 40, max: 700 }).map((n) => '🦀'.repeat(n)),
    );
    fc.assert(
      fc.property(piece, (p) => {
        for (const merged of mergedPieces(p)) expect(mergeUtf8Piece(merged)).toEqual(libraryEncode(merged));
      }),
      { numRuns: 12 },
    );
  });
});
