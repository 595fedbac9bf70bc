import { asciiPieceRank } from './o200k-ascii-ranks';

/**
 * Byte-pair merge of an ASCII piece that is no single vocabulary entry, step for step the merge of
 * gpt-tokenizer's `BytePairEncodingCore.bytePairMerge`: start from single units, repeatedly merge
 * the adjacent pair whose concatenation has the lowest rank (the leftmost on a tie), stop when no
 * pair is an entry. For ASCII a unit is a byte, and gpt-tokenizer's rank of a byte range is the
 * rank of that range as a string, which {@link asciiPieceRank} returns straight from the text.
 *
 * gpt-tokenizer decodes every candidate pair to a string with a TextDecoder. On the pieces of
 * unseen npm sources that need a merge (~7 units), this took ~0.5 us a piece, and gpt-tokenizer's
 * encode of the piece 5-10 us (~1.5 us once its own merge cache held the piece).
 */

const NO_RANK = 0x7fffffff;

/** Pieces up to this many units merge in the scratch arrays below; longer ones allocate. */
const SCRATCH_UNITS = 256;
/** Part boundaries (`parts + 1` used) and the rank of each part merged with the next one. */
const scratchStarts = new Int32Array(SCRATCH_UNITS + 1);
const scratchPairRanks = new Int32Array(SCRATCH_UNITS);

/** The rank of units `[from, to)` of a piece, or -1. */
export type UnitRangeRank = (from: number, to: number) => number;

/** The tokens of an all-ASCII piece of at least 2 units that is no single vocabulary entry. */
export function mergeAsciiPiece(piece: string): number[] {
  return scanMerge(piece.length, (from, to) => asciiPieceRank(piece, from, to));
}

/**
 * The scan merge of a piece of `units` units (ASCII units, or UTF-8 bytes for ./o200k-byte-merge)
 * whose ranges `rankOf` ranks.
 */
export function scanMerge(units: number, rankOf: UnitRangeRank): number[] {
  const rankOrNone = (start: number, end: number): number => {
    const rank = rankOf(start, end);
    return rank < 0 ? NO_RANK : rank;
  };
  let parts = units;
  const scratch = parts <= SCRATCH_UNITS;
  const starts = scratch ? scratchStarts : new Int32Array(parts + 1);
  const pairRanks = scratch ? scratchPairRanks : new Int32Array(parts);
  for (let i = 0; i <= parts; i++) starts[i] = i;
  for (let i = 0; i < parts - 1; i++) pairRanks[i] = rankOrNone(i, i + 2);
  while (parts > 1) {
    let lowest = NO_RANK;
    let at = -1;
    for (let i = 0; i < parts - 1; i++) {
      if (pairRanks[i] < lowest) {
        lowest = pairRanks[i];
        at = i;
      }
    }
    if (at < 0) break;
    // Parts `at` and `at + 1` become one: drop the boundary between them and its pair rank.
    // (Loops, not copyWithin: a runtime call that cost more than the whole merge of a short piece.)
    parts--;
    for (let i = at + 1; i <= parts; i++) starts[i] = starts[i + 1];
    for (let i = at + 1; i < parts - 1; i++) pairRanks[i] = pairRanks[i + 1];
    pairRanks[at] = at < parts - 1 ? rankOrNone(starts[at], starts[at + 2]) : NO_RANK;
    if (at > 0) pairRanks[at - 1] = rankOrNone(starts[at - 1], starts[at + 1]);
  }
  const tokens = new Array<number>(parts);
  for (let i = 0; i < parts; i++) {
    tokens[i] = rankOf(starts[i], starts[i + 1]);
    // Unreachable while the vocabulary holds every single unit (byte): each part is one or a merged pair.
    if (tokens[i] < 0) throw new Error('o200k merge left a part that is no entry');
  }
  return tokens;
}
