import { asciiPieceRank } from './o200k-ascii-ranks';
import { byteRangeRank } from './o200k-byte-ranks';

/**
 * The byte-pair merge of {@link mergeAsciiPiece} in O(n log n) instead of O(n^2), for long pieces;
 * also over UTF-8 bytes ({@link heapMergeBytes}), as gpt-tokenizer merges pieces with non-ASCII text.
 *
 * The scan merge looks at every pair after every merge: a 40 KB word (or a long run of spaces,
 * as a deeply nested tool schema renders) took seconds. Here the parts form a linked list and the
 * pair ranks sit in a binary heap ordered by (rank, position), so the heap's top is the pair the
 * scan would pick: the lowest rank, the leftmost on a tie (a part's position is its first unit,
 * and positions grow along the list). Merging two parts changes only the pairs with their
 * neighbours; entries for pairs that no longer exist are skipped when they surface.
 */

/** No o200k entry has more units (or bytes) than this: a longer pair cannot be merged. */
const MAX_ENTRY_UNITS = 128;
const NONE = -1;
/** `prev` of a part that was absorbed by its left neighbour. */
const GONE = -2;

/** The rank of units `[from, to)` of the piece (relative to its start), or -1. */
type RangeRank = (from: number, to: number) => number;

/** The tokens of the all-ASCII piece `text[start, end)` (at least 2 units, no single entry). */
export function heapMergeAscii(text: string, start: number, end: number): number[] {
  return new HeapMerge((from, to) => asciiPieceRank(text, start + from, start + to), end - start).run();
}

/** The tokens of the UTF-8 bytes `bytes[0, length)` of a piece (at least 2 bytes, no single entry). */
export function heapMergeBytes(bytes: Uint8Array, length: number): number[] {
  return new HeapMerge((from, to) => byteRangeRank(bytes, from, to), length).run();
}

interface Scratch {
  units: number;
  next: Int32Array;
  prev: Int32Array;
  pairRank: Int32Array;
  heapRank: Int32Array;
  heapPos: Int32Array;
}

/**
 * Arrays for a piece of `units` units. The heap holds at most `3 * units` entries: one per initial
 * pair, and each of the fewer than `units` merges queues at most two.
 */
function scratchFor(units: number): Scratch {
  return {
    units,
    next: new Int32Array(units),
    prev: new Int32Array(units),
    pairRank: new Int32Array(units),
    heapRank: new Int32Array(3 * units + 16),
    heapPos: new Int32Array(3 * units + 16),
  };
}

let scratch = scratchFor(4096);

class HeapMerge {
  /** Part i starts at unit i (relative to `start`); `next`/`prev` link the live parts. */
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  /** Rank of part i merged with its next part, or NONE. */
  private readonly pairRank: Int32Array;
  /** The heap: parallel arrays of (rank, position) entries. */
  private readonly heapRank: Int32Array;
  private readonly heapPos: Int32Array;
  private size = 0;

  constructor(
    private readonly rankOf: RangeRank,
    private readonly n: number,
  ) {
    // Merges never nest, so one set of arrays serves them all: allocating them per 4,096-unit
    // chunk made a tenth of a long word's time garbage collection (fast-o200k-encoder bench).
    if (scratch.units < n) scratch = scratchFor(Math.max(n, 2 * scratch.units));
    ({
      next: this.next,
      prev: this.prev,
      pairRank: this.pairRank,
      heapRank: this.heapRank,
      heapPos: this.heapPos,
    } = scratch);
  }

  run(): number[] {
    const { next, prev, pairRank, n } = this;
    for (let i = 0; i < n; i++) {
      next[i] = i + 1 < n ? i + 1 : NONE;
      prev[i] = i - 1;
    }
    for (let i = 0; i < n; i++) this.update(i);
    while (this.size > 0) {
      const rank = this.heapRank[0];
      const i = this.heapPos[0];
      this.pop();
      if (pairRank[i] !== rank || prev[i] === GONE) continue; // a pair that no longer exists
      const j = next[i];
      const after = next[j];
      next[i] = after;
      if (after !== NONE) prev[after] = i;
      prev[j] = GONE;
      pairRank[j] = NONE;
      this.update(i);
      if (prev[i] >= 0) this.update(prev[i]);
    }
    const tokens: number[] = [];
    for (let i = 0; i !== NONE; i = next[i]) {
      const rank = this.rankOf(i, this.partEnd(i));
      // Unreachable while the vocabulary holds every single unit (byte): each part is one or a merged pair.
      if (rank < 0) throw new Error('o200k merge left a part that is no entry');
      tokens.push(rank);
    }
    return tokens;
  }

  private partEnd(i: number): number {
    const j = this.next[i];
    return j === NONE ? this.n : j;
  }

  /** Recomputes the rank of part i with its next part and queues it. */
  private update(i: number): void {
    const j = this.next[i];
    let rank = NONE;
    if (j !== NONE) {
      const pairEnd = this.partEnd(j);
      if (pairEnd - i <= MAX_ENTRY_UNITS) rank = this.rankOf(i, pairEnd);
    }
    this.pairRank[i] = rank;
    if (rank !== NONE) this.push(rank, i);
  }

  private push(rank: number, pos: number): void {
    const r = this.heapRank;
    const p = this.heapPos;
    let at = this.size++;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (r[parent] < rank || (r[parent] === rank && p[parent] < pos)) break;
      r[at] = r[parent];
      p[at] = p[parent];
      at = parent;
    }
    r[at] = rank;
    p[at] = pos;
  }

  private pop(): void {
    const r = this.heapRank;
    const p = this.heapPos;
    const size = --this.size;
    const rank = r[size];
    const pos = p[size];
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= size) break;
      if (child + 1 < size && (r[child + 1] < r[child] || (r[child + 1] === r[child] && p[child + 1] < p[child])))
        child++;
      if (r[child] > rank || (r[child] === rank && p[child] > pos)) break;
      r[at] = r[child];
      p[at] = p[child];
      at = child;
    }
    r[at] = rank;
    p[at] = pos;
  }
}
