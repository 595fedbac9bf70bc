import { chainBlockHash, extendBlockHashes, fullBlocks, type BlockHasher } from './block-hash';
import { PrefixIndex, type PrefixHolder } from './prefix-index';
import type { SequenceLog } from './sequence-log';

/** Options of {@link SessionCache}. */
export interface SessionCacheOptions {
  /** Total tokens held over all sessions; least recently used sessions are evicted beyond it. */
  maxTokens: number;
  /** Sessions held; least recently used ones are evicted beyond it. */
  maxEntries: number;
  /** Called once per session dropped to respect a bound (not for replacements or `delete`). */
  onEvict?: (key: string, tokens: number) => void;
  /** Block hash of the content index; default {@link chainBlockHash} (tests pass a colliding one). */
  hasher?: BlockHasher;
  /** Told what is kept and dropped, e.g. the KV-event log the router reads (kv-event-log.ts). */
  listener?: SessionCacheListener;
}

/** Why a session stopped being held. */
export type SessionRemoval = 'evicted' | 'deleted' | 'moved';

/** Observes a {@link SessionCache}: what the router learns a worker holds comes from here. */
export interface SessionCacheListener {
  /**
   * `key` now holds `tokens` tokens (new, extended or replaced). `movedFrom` is the session it
   * replaced by a move (reported removed just before); `root` is what the caller passed to `set`.
   */
  kept(key: string, tokens: number, movedFrom: string | undefined, root: SessionRoot | undefined): void;
  /** `key` is no longer held. */
  removed(key: string, reason: SessionRemoval): void;
  /** Everything was dropped at once (shutdown). */
  cleared?(): void;
}

/** The conversation root a sequence belongs to, for placement (inference.proto `prefix_key`). */
export interface SessionRoot {
  readonly key: string;
  /** Prompt tokens of the call that kept it. */
  readonly tokens: number;
}

/** A held sequence and the chained hashes of its full blocks; neither array is ever mutated. */
export interface HeldSequence {
  readonly tokens: Uint32Array;
  readonly blockHashes: Float64Array;
  /** The append-only log both arrays are views of, when they are (the worker's sequences always are). */
  readonly log?: SequenceLog;
}

/** Options of {@link SessionCache.set}. */
export interface SessionSetOptions {
  /**
   * Hashes of the sequence's full blocks, when the caller already has them (extended from the
   * parent's, so only new blocks were hashed); computed here otherwise.
   */
  blockHashes?: Float64Array;
  /**
   * A session the new sequence replaces (the parent of `parent_session_key`): it is dropped, and its
   * index entries carry over to the new key, so only blocks that changed are re-indexed.
   */
  moveFrom?: string;
  /**
   * The append-only log `sequence` and `blockHashes` are views of. When the session (or the one it
   * moves from) held a shorter view of the same log, the new sequence extends it, so re-indexing
   * skips comparing the shared blocks: O(new blocks).
   */
  log?: SequenceLog;
  /** Passed on to the listener: the root the caller names for this sequence (placement only). */
  root?: SessionRoot;
}

/**
 * The token sequence each recent session ended with, so a follow-up call can send only its new
 * tokens (what a real engine's KV cache would keep). Bounded by total tokens and by count, LRU.
 * Every held sequence is also indexed by its chained block hashes ({@link index}), so a prompt can
 * reuse a prefix that any session holds (content-addressed, like vLLM's automatic prefix caching);
 * evicting or replacing a session removes its index entries.
 *
 * Sequences are stored as Uint32Array views of append-only logs (sequence-log.ts): half the
 * memory of a number[] of the same tokens, and a view never changes, so a reader never sees a
 * concurrent writer's change. Memory: 4 bytes per held token, plus 8 bytes per 64 tokens for
 * block hashes, plus the index (PrefixIndex: about 42 bytes per 64 held tokens), times up to 2 for
 * the logs' spare capacity: under 10 bytes per held token, about 40 MB at the default 4M tokens.
 */
export class SessionCache {
  /** Which held sequences have which block hash. Read it; only the cache writes it. */
  readonly index = new PrefixIndex();
  /** The block hash the index uses; prompts must be hashed with the same one. */
  readonly hasher: BlockHasher;
  // Map iteration order is insertion order: the first key is the least recently used. Each value
  // is the session's holder in the index; on a move it changes key but stays the same object.
  private readonly entries = new Map<string, PrefixHolder>();
  private tokens = 0;

  constructor(private readonly options: SessionCacheOptions) {
    this.hasher = options.hasher ?? chainBlockHash;
  }

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
    return this.lookup(key)?.tokens;
  }

  /** The sequence held for `key` with its block hashes, marking it most recently used. */
  lookup(key: string): HeldSequence | undefined {
    const held = this.entries.get(key);
    if (held === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, held);
    // A snapshot: the holder object itself changes arrays when its session moves on.
    return { tokens: held.tokens, blockHashes: held.blockHashes, log: held.log };
  }

  /** Whether `key` is held, without touching its recency. */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * Holds `sequence` as the session's latest tokens (most recently used), replacing what it held
   * (and dropping `options.moveFrom`), then evicts least recently used sessions until both bounds
   * hold. A sequence longer than the whole token budget is not kept at all, and the sessions it
   * replaces are dropped with it.
   */
  set(key: string, sequence: Uint32Array, options: SessionSetOptions = {}): void {
    const blockHashes = options.blockHashes ?? extendBlockHashes(sequence, undefined, 0, this.hasher);
    // A wrong-length hash array would index blocks the sequence lacks: fail loudly instead.
    if (blockHashes.length !== fullBlocks(sequence.length))
      throw new RangeError(`blockHashes has ${blockHashes.length} hashes for ${sequence.length} tokens`);
    const listener = this.options.listener;
    const movedKey = options.moveFrom !== undefined && options.moveFrom !== key ? options.moveFrom : undefined;
    const moveFrom = movedKey !== undefined ? this.detach(movedKey) : undefined;
    if (moveFrom !== undefined) {
      this.delete(key);
      listener?.removed(movedKey!, 'moved');
    }
    const holder = moveFrom ?? this.detach(key);
    if (sequence.length > this.options.maxTokens || this.options.maxEntries === 0) {
      if (holder !== undefined) {
        this.index.remove(holder, holder.blockHashes);
        if (moveFrom === undefined) listener?.removed(key, 'deleted');
      }
      return;
    }
    this.entries.set(key, this.reindex(holder, sequence, blockHashes, options.log));
    this.tokens += sequence.length;
    listener?.kept(key, sequence.length, moveFrom !== undefined ? movedKey : undefined, options.root);
    this.evictOverBudget();
  }

  /** Forgets a session. Returns whether it was held. */
  delete(key: string): boolean {
    const held = this.detach(key);
    if (held === undefined) return false;
    this.index.remove(held, held.blockHashes);
    this.options.listener?.removed(key, 'deleted');
    return true;
  }

  /** Forgets every session (used on shutdown). Idempotent. */
  clear(): void {
    this.entries.clear();
    this.index.clear();
    this.tokens = 0;
    this.options.listener?.cleared?.();
  }

  /** Removes a session from the LRU and the token count, leaving its index entries to the caller. */
  private detach(key: string): PrefixHolder | undefined {
    const held = this.entries.get(key);
    if (held === undefined) return undefined;
    this.entries.delete(key);
    this.tokens -= held.tokens.length;
    return held;
  }

  /**
   * Points `holder` (or a new one) at the new sequence. Blocks whose hash is unchanged keep their
   * index entries: when a session extends what it held, only its new blocks are indexed, so a turn
   * costs index work for its new tokens only (the hash compare is a tight loop over 1/64 of them).
   */
  private reindex(
    holder: PrefixHolder | undefined,
    tokens: Uint32Array,
    blockHashes: Float64Array,
    log: SequenceLog | undefined,
  ): PrefixHolder {
    if (holder === undefined) {
      const created: PrefixHolder = { tokens, blockHashes, log };
      this.index.add(created, blockHashes);
      return created;
    }
    const old = holder.blockHashes;
    const common = Math.min(old.length, blockHashes.length);
    // Two views of one append-only log agree on everything the shorter one has.
    let shared = log !== undefined && holder.log === log && tokens.length >= holder.tokens.length ? common : 0;
    while (shared < common && old[shared] === blockHashes[shared]) shared++;
    this.index.remove(holder, old, shared);
    this.index.add(holder, blockHashes, shared);
    // A hash repeats inside one sequence only by collision, but then the removal above may have
    // taken one a kept block still has: put those back (adding is idempotent). Only sessions
    // whose history changed (not merely extended) get here.
    if (shared < old.length) this.index.add(holder, blockHashes.subarray(0, shared));
    holder.tokens = tokens;
    holder.blockHashes = blockHashes;
    holder.log = log;
    return holder;
  }

  private evictOverBudget(): void {
    while (this.tokens > this.options.maxTokens || this.entries.size > this.options.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) return;
      const key = oldest.value;
      const held = this.detach(key)!;
      this.index.remove(held, held.blockHashes);
      this.options.onEvict?.(key, held.tokens.length);
      this.options.listener?.removed(key, 'evicted');
    }
  }
}
