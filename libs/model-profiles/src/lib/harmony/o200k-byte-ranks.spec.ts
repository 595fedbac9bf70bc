import fc from 'fast-check';
import bpeRanks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { BytePairEncodingCore } from 'gpt-tokenizer/BytePairEncodingCore';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { tryConvertToString } from 'gpt-tokenizer/utfUtil';
import { byteRangeRank, isValidUtf8 } from './o200k-byte-ranks';

/** The library's own lookup, which its byte-pair merge calls for every candidate pair. */
const library = new BytePairEncodingCore({ bytePairRankDecoder: bpeRanks, tokenSplitRegex: O200K_TOKEN_SPLIT_REGEX });
// TypeScript-private, but the very function the library's merge calls.
const libraryLookup = library as unknown as { getBpeRankFromBytes(bytes: Uint8Array): number | undefined };
const libraryRank = (bytes: Uint8Array): number => libraryLookup.getBpeRankFromBytes(bytes) ?? -1;

const utf8 = new TextEncoder();

describe('byteRangeRank', () => {
  it('finds every entry the library can find at its rank', () => {
    bpeRanks.forEach((entry, rank) => {
      const bytes = typeof entry === 'string' ? utf8.encode(entry) : Uint8Array.from(entry);
      const expected = libraryRank(bytes);
      if (byteRangeRank(bytes, 0, bytes.length) !== expected)
        throw new Error(`rank of entry ${rank} is not the library's ${expected}`);
    });
  });

  it('agrees with the library on byte ranges of arbitrary text and arbitrary bytes, inside a longer buffer', () => {
    const nearEntry = fc.tuple(fc.nat(bpeRanks.length - 1), fc.nat(255)).map(([rank, extra]) => {
      const entry = bpeRanks[rank];
      const bytes = typeof entry === 'string' ? utf8.encode(entry) : Uint8Array.from(entry);
      return Uint8Array.from([...bytes, extra]).subarray(0, bytes.length + (extra & 1));
    });
    const bytes = fc.oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 }).map((s) => utf8.encode(s)),
      fc.uint8Array({ minLength: 1, maxLength: 4 }),
      nearEntry,
    );
    fc.assert(
      fc.property(bytes, fc.uint8Array({ maxLength: 3 }), (key, before) => {
        const buffer = Uint8Array.from([...before, ...key, 0x20]);
        expect(byteRangeRank(buffer, before.length, before.length + key.length)).toBe(libraryRank(key));
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('isValidUtf8', () => {
  it('accepts exactly what the library decodes', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 8 }),
          fc.string({ unit: 'binary', maxLength: 4 }).map((s) => utf8.encode(s)),
          fc.uint8Array({ minLength: 1, maxLength: 4 }).map((b) => Uint8Array.from(b, (x) => 0x80 | (x & 0x7f))),
        ),
        (bytes) => expect(isValidUtf8(bytes)).toBe(tryConvertToString(bytes) !== undefined),
      ),
      { numRuns: 20_000 },
    );
  });
});
