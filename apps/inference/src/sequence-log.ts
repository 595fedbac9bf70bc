import { chainBlockHash, fullBlocks, PREFIX_BLOCK_TOKENS, type BlockHasher } from './block-hash';

/** Initial capacity of a log, in tokens; it doubles as needed (amortized O(1) per appended token). */
const INITIAL_CAPACITY = 1024;

/**
 * An append-only token sequence with the chained hashes of its full blocks, extended as tokens are
 * appended: the worker's representation of what a session holds. A session's calls append their
 * new prompt tokens and then their completion to the log the session already has, so a cached
 * turn costs O(new tokens) — no copy of the held prefix, no re-hashing, no copied hash array.
 *
 * Tokens once written never change, so {@link tokens}(n) and {@link hashes}(n) are immutable views
 * that stay valid whatever is appended later (a reallocation leaves old views on the old buffer,
 * whose first n entries are the same). Only a view that ends at the log's tip can be extended in
 * place ({@link isTip}); a call that diverges from a held sequence, or branches from one that
 * another call already extended, starts a new log from a copy ({@link SequenceLog.fork}).
 *
 * Memory: 4 bytes per token and 8 per 64-token block of capacity, and capacity is at most twice
 * the length.
 */
export class SequenceLog {
  private tokenData: Uint32Array;
  private hashData: Float64Array;
  private size = 0;
  private blocks = 0;

  /**
   * @param hasher the block hash (the session cache's, so prompts and held sequences agree)
   * @param salt the chain's start: the "previous hash" of block 0 (0 = unsalted, as
   *   {@link extendBlockHashes} starts)
   */
  constructor(
    readonly hasher: BlockHasher = chainBlockHash,
    readonly salt = 0,
    capacity = INITIAL_CAPACITY,
  ) {
    this.tokenData = new Uint32Array(Math.max(PREFIX_BLOCK_TOKENS, capacity));
    this.hashData = new Float64Array(fullBlocks(this.tokenData.length));
  }

  /**
   * A new log holding `tokens[0:length]`, reusing `knownHashes` (hashes of a sequence that agrees
   * with `tokens` on its full blocks below `length`, with the same hasher and salt) instead of
   * hashing again. O(length) copy: only for a divergence or a branch, never a plain continuation.
   */
  static fork(
    source: { tokens: Uint32Array; blockHashes: Float64Array },
    length: number,
    hasher: BlockHasher,
    salt = 0,
    extra = 0,
  ): SequenceLog {
    const log = new SequenceLog(hasher, salt, Math.max(INITIAL_CAPACITY, 2 * (length + extra)));
    log.tokenData.set(source.tokens.subarray(0, length), 0);
    const known = Math.min(fullBlocks(length), source.blockHashes.length);
    log.hashData.set(source.blockHashes.subarray(0, known), 0);
    log.size = length;
    log.blocks = known;
    log.hashNewBlocks();
    return log;
  }

  /** Tokens written so far. */
  get length(): number {
    return this.size;
  }

  /** Whether a view of `length` tokens of this log ends at its tip, so appending extends it in place. */
  isTip(length: number): boolean {
    return length === this.size;
  }

  /** Appends `tokens[from:]` (amortized O(tokens appended), hashing each block it completes). */
  append(tokens: ArrayLike<number>, from = 0): void {
    const n = tokens.length - from;
    if (n <= 0) return;
    this.reserve(this.size + n);
    const data = this.tokenData;
    for (let i = 0; i < n; i++) data[this.size + i] = tokens[from + i];
    this.size += n;
    this.hashNewBlocks();
  }

  /** The first `length` tokens (default all), as an immutable view (no copy). */
  tokens(length = this.size): Uint32Array {
    if (length > this.size) throw new RangeError(`SequenceLog: ${length} tokens asked, ${this.size} written`);
    return this.tokenData.subarray(0, length);
  }

  /** The chained hashes of the full blocks of the first `length` tokens, as an immutable view. */
  hashes(length = this.size): Float64Array {
    if (length > this.size) throw new RangeError(`SequenceLog: hashes of ${length} tokens asked, ${this.size} written`);
    return this.hashData.subarray(0, fullBlocks(length));
  }

  private hashNewBlocks(): void {
    const target = fullBlocks(this.size);
    let previous = this.blocks === 0 ? this.salt : this.hashData[this.blocks - 1];
    for (let b = this.blocks; b < target; b++) {
      previous = this.hasher(previous, this.tokenData, b * PREFIX_BLOCK_TOKENS);
      this.hashData[b] = previous;
    }
    this.blocks = target;
  }

  private reserve(needed: number): void {
    if (needed <= this.tokenData.length) return;
    let capacity = this.tokenData.length;
    while (capacity < needed) capacity *= 2;
    // Fresh arrays: views handed out keep the old ones, whose written part never changes.
    const tokens = new Uint32Array(capacity);
    tokens.set(this.tokenData.subarray(0, this.size));
    const hashes = new Float64Array(fullBlocks(capacity));
    hashes.set(this.hashData.subarray(0, this.blocks));
    this.tokenData = tokens;
    this.hashData = hashes;
  }
}
