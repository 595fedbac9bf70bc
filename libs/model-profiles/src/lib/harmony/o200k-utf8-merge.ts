import { scanMerge } from './o200k-ascii-merge';
import { byteRangeRank } from './o200k-byte-ranks';
import { heapMergeBytes } from './o200k-heap-merge';

/**
 * The byte-pair merge gpt-tokenizer's `bytePairEncode` does for a piece with non-ASCII text: over
 * the piece's UTF-8 bytes as TextEncoder writes them (a lone surrogate becomes U+FFFD), ranks as
 * its `getBpeRankFromBytes` finds them (./o200k-byte-ranks). Its own merge decodes every candidate
 * pair to a string and scans all pairs after every merge: ~1 us for a short random-script piece
 * and ~40 ms for a 4,096-unit CJK run; here the scan runs on the bytes and long pieces merge in a
 * heap (O(n log n)).
 */
export function mergeUtf8Piece(piece: string): number[] {
  if (scratch.length < 3 * piece.length) scratch = new Uint8Array(3 * piece.length);
  const { written } = encoder.encodeInto(piece, scratch);
  const bytes = scratch;
  if (written <= HEAP_MERGE_FROM_BYTES) return scanMerge(written, (from, to) => byteRangeRank(bytes, from, to));
  return heapMergeBytes(bytes, written);
}

/** Pieces of more bytes merge in the heap; shorter ones scan (less work per merge on short pieces). */
const HEAP_MERGE_FROM_BYTES = 256;

const encoder = new TextEncoder();
/** UTF-8 of the piece being merged: at most 3 bytes per UTF-16 unit. Grows to the longest piece (4,096 units a chunk). */
let scratch = new Uint8Array(3 * 4096);
