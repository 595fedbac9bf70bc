import fc from 'fast-check';
import { encode } from 'gpt-tokenizer/encoding/o200k_harmony';
import { scanMerge } from './o200k-ascii-merge';
import { asciiPieceRank } from './o200k-ascii-ranks';
import { heapMergeAscii } from './o200k-heap-merge';
import {
  RUN_MERGE_MAX_SEGMENTS,
  runMergeAscii,
  segmentTokenCount,
  segmentTokens,
  type TokenRank,
} from './o200k-run-merge';

const libraryEncode = (text: string): number[] => encode(text, { disallowedSpecial: new Set() });
const isEntry = (piece: string): boolean => asciiPieceRank(piece, 0, piece.length) >= 0;

/** Runs of the units of `alphabet`: `[unit, length]` pairs, written out. */
const runsOf = (alphabet: string, maxRuns: number, maxRunLength: number): fc.Arbitrary<string> =>
  fc
    .array(fc.tuple(fc.constantFrom(...alphabet), fc.integer({ min: 1, max: maxRunLength })), {
      minLength: 1,
      maxLength: maxRuns,
    })
    .map((runs) => runs.map(([unit, length]) => unit.repeat(length)).join(''))
    .filter((piece) => piece.length >= 2);

/** One regex piece's worth of text: a whitespace run, a punctuation run (with its optional leading space), a letter run. */
const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');

describe('runMergeAscii', () => {
  it('merges a run of any printable unit exactly as the unit-by-unit heap merge does, at any length', () => {
    for (const unit of printable)
      for (const length of [2, 3, 127, 128, 129, 255, 256, 257, 1_000, 4_097, 10_007]) {
        const piece = unit.repeat(length);
        if (isEntry(piece)) continue;
        const runs = runMergeAscii(piece, 0, piece.length);
        expect(runs).toBeDefined();
        expect(segmentTokens(runs ?? [])).toEqual(heapMergeAscii(piece, 0, piece.length));
      }
  });

  it('merges pieces of a few runs exactly as the heap merge does (property)', () => {
    const piece = fc.oneof(
      runsOf(' \t\n', 4, 3_000),
      runsOf('=-*#', 5, 2_000),
      runsOf('ab', 6, 1_000),
      runsOf('aA', 3, 500),
      fc
        .tuple(fc.constantFrom(' ', ''), fc.integer({ min: 2, max: 6_000 }), fc.constantFrom('', '\n', '\n\n', '//'))
        .map(([space, n, tail]) => `${space}${'='.repeat(n)}${tail}`),
    );
    fc.assert(
      fc.property(piece, (p) => {
        if (isEntry(p)) return;
        const runs = runMergeAscii(p, 0, p.length);
        expect(runs).toBeDefined();
        expect(segmentTokens(runs ?? [])).toEqual(heapMergeAscii(p, 0, p.length));
      }),
      { numRuns: 200 },
    );
  });

  it('merges runs up to 4,096 units exactly as gpt-tokenizer does', () => {
    const piece = fc.oneof(runsOf(' ', 1, 4_096), runsOf('=', 1, 4_096), runsOf('a', 1, 4_096), runsOf('-=', 3, 1_300));
    fc.assert(
      fc.property(piece, (p) => {
        if (isEntry(p)) return;
        expect(segmentTokens(runMergeAscii(p, 0, p.length) ?? [])).toEqual(libraryEncode(p));
      }),
      { numRuns: 20 },
    );
  });

  it('merges megabytes of one unit in a few steps, whatever the length', () => {
    for (const [unit, length] of [
      [' ', 4 << 20],
      ['=', 8 << 20],
    ] as const) {
      const piece = unit.repeat(length);
      const runs = runMergeAscii(piece, 0, piece.length);
      expect(runs).toBeDefined();
      // 4 MB of spaces are 32,768 tokens of 128 spaces; 8 MB of `=` 131,072 tokens of 64.
      expect(runs?.length).toBe(1);
      expect((runs?.[0].token.length ?? 0) * segmentTokenCount(runs ?? [])).toBe(length);
    }
  });

  it('refuses pieces of more runs than it keeps, which the caller merges unit by unit', () => {
    const piece = `${'ab'.repeat(RUN_MERGE_MAX_SEGMENTS / 2)}a`;
    expect(runMergeAscii(piece, 0, piece.length)).toBeUndefined();
    expect(runMergeAscii(piece, 1, piece.length)).toBeDefined();
  });

  describe('under any vocabulary (the cases o200k never reaches: a pair made on the way ranking lower)', () => {
    /**
     * A made-up vocabulary over `a` and `b`: each unit, and each longer string (up to 12 units)
     * with a chance of one in `sparsity`, has a distinct rank drawn from the seed. Ranks ignore
     * how the strings were built, so a run's longer pairs often rank below its shorter ones.
     */
    const vocabulary = (seed: number, sparsity: number): TokenRank => {
      return (token) => {
        if (token.length > 12) return -1;
        let code = 0;
        for (let i = 0; i < token.length; i++) code = code * 3 + (token.charCodeAt(i) === 0x61 ? 1 : 2);
        const rank = (Math.imul(code, 0x2545f491) + seed) & 0x3fffffff; // a bijection of 30-bit codes
        const present = token.length === 1 || (Math.imul(rank, 0x9e3779b1) >>> 0) % sparsity === 0;
        return present ? rank : -1;
      };
    };

    it('merges exactly as the scan merge does, or gives up', () => {
      let merged = 0;
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 0x3fffffff }),
          fc.integer({ min: 1, max: 3 }),
          runsOf('ab', 4, 120),
          (seed, sparsity, piece) => {
            const rank = vocabulary(seed, sparsity);
            const runs = runMergeAscii(piece, 0, piece.length, rank);
            if (runs === undefined) return;
            merged++;
            expect(segmentTokens(runs, rank)).toEqual(
              scanMerge(piece.length, (from, to) => rank(piece.slice(from, to))),
            );
          },
        ),
        { numRuns: 3_000 },
      );
      expect(merged).toBeGreaterThan(2_000);
    });
  });
});
