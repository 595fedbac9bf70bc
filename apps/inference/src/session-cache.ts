/** Options of {@link SessionCache}. */
export interface SessionCacheOptions {
  /** Total tokens held over all sessions; least recently used sessions are evicted beyond it. */
  maxTokens: number;
  /** Sessions held; least recently used ones are evicted beyond it. */
  maxEntries: number;
  /** Called once per session dropped to respect a bound (not for replacements or `delete`). */
  onEvict?: (key: string, tokens: number) => void;
}

/**
 * The token sequence each recent session ended with, so a follow-up call can send only its new
 * tokens (what a real engine's KV cache would keep). Bounded by total tokens and by count, LRU.
 *
 * Sequences are stored as Uint32Array: half the memory of a number[] of the same tokens, and
 * entries are immutable (replaced whole), so a reader never sees a concurrent writer's change.
 */
export class SessionCache {
  // Map iteration order is insertion order: the first key is the least recently used.
  private readonly entries = new Map<string, Uint32Array>();
  private tokens = 0;

  constructor(private readonly options: SessionCacheOptions) {}

  /** Sessions held. */
  get size(): number {
    return this.entries.size;
  }

  /** Tokens held over all sessions. */
  get totalTokens(): number {
    return this.tokens;
  }

  /** The sequence held for `key`, marking it most recently used. */
  get(key: string): Uint32Array | undefined {
    const held = this.entries.get(key);
    if (held === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, held);
    return held;
  }

  /** Whether `key` is held, without touching its recency. */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * Holds `sequence` as the session's latest tokens (most recently used), replacing what it held,
   * then evicts least recently used sessions until both bounds hold. A sequence longer than the
   * whole token budget is not kept at all, and the session's older sequence is dropped with it.
   */
  set(key: string, sequence: Uint32Array): void {
    this.delete(key);
    if (sequence.length > this.options.maxTokens || this.options.maxEntries === 0) return;
    this.entries.set(key, sequence);
    this.tokens += sequence.length;
    this.evictOverBudget();
  }

  /** Forgets a session. Returns whether it was held. */
  delete(key: string): boolean {
    const held = this.entries.get(key);
    if (held === undefined) return false;
    this.entries.delete(key);
    this.tokens -= held.length;
    return true;
  }

  /** Forgets every session (used on shutdown). Idempotent. */
  clear(): void {
    this.entries.clear();
    this.tokens = 0;
  }

  private evictOverBudget(): void {
    while (this.tokens > this.options.maxTokens || this.entries.size > this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) return;
      const key = oldest.value;
      const held = this.entries.get(key)!;
      this.entries.delete(key);
      this.tokens -= held.length;
      this.options.onEvict?.(key, held.length);
    }
  }
}
