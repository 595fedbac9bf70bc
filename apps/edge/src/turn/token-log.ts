/**
 * An append-only token sequence that successive turns of one conversation share.
 *
 * A continuation appends its new tokens to its parent's log in place (amortised O(new tokens))
 * instead of copying the history. Only the tip may append in place: a view that is no longer the
 * tip (a branch from an older response) copies its prefix once and continues on its own log, so no
 * view ever sees another branch's tokens.
 */
export class TokenLog {
  private buffer: Uint32Array;
  /** Tokens written to `buffer`; views with length === committed are the tip. */
  private committed = 0;

  private constructor(capacity: number) {
    this.buffer = new Uint32Array(Math.max(16, capacity));
  }

  /** A view over a new log holding `tokens`. */
  static from(tokens: ArrayLike<number>): TokenView {
    const log = new TokenLog(tokens.length * 2);
    log.buffer.set(tokens);
    log.committed = tokens.length;
    return new TokenView(log, tokens.length);
  }

  /** @internal */
  appendAt(length: number, tokens: ArrayLike<number>): TokenView {
    if (length !== this.committed) {
      // Branch: another view already appended past `length`.
      return TokenLog.from(this.buffer.subarray(0, length)).append(tokens);
    }
    const needed = length + tokens.length;
    if (needed > this.buffer.length) {
      const grown = new Uint32Array(Math.max(needed, this.buffer.length * 2));
      grown.set(this.buffer.subarray(0, length));
      this.buffer = grown;
    }
    this.buffer.set(tokens, length);
    this.committed = needed;
    return new TokenView(this, needed);
  }

  /** @internal */
  slice(start: number, end: number): Uint32Array {
    return this.buffer.slice(start, end);
  }

  /** @internal */
  at(i: number): number {
    return this.buffer[i];
  }
}

/** An immutable prefix of a TokenLog: one conversation state's rendered tokens. */
export class TokenView {
  constructor(
    private readonly log: TokenLog,
    readonly length: number,
  ) {}

  /** A new view with `tokens` appended; this view is unchanged. */
  append(tokens: ArrayLike<number>): TokenView {
    if (tokens.length === 0) return this;
    return this.log.appendAt(this.length, tokens);
  }

  /** Copies tokens [start, end) out. */
  slice(start = 0, end = this.length): Uint32Array {
    return this.log.slice(start, Math.min(end, this.length));
  }

  at(i: number): number {
    if (i < 0 || i >= this.length) throw new RangeError(`token index ${i} out of range`);
    return this.log.at(i);
  }

  /** Bytes held on behalf of this view (for cache accounting). */
  get bytes(): number {
    return this.length * 4;
  }
}
