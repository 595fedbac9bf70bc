import { createHash } from 'node:crypto';
import type { ConversationEntry, ModelProfile, RenderLimits } from '@fastloop/model-profiles';

/** Default bound on the tokens the cache holds: 8M tokens, about 64 MB of arrays. */
export const DEFAULT_RENDER_CACHE_TOKENS = 8_000_000;

/**
 * A bounded, process-wide LRU of rendered entry tokens keyed by profile and entry content hash.
 * The stateless HTTP path re-sends the whole history every turn; hashing an entry is far cheaper
 * than tokenizing it again, so this gives HTTP the same tokenization saving WebSocket mode gets.
 */
export class EntryRenderCache {
  private readonly map = new Map<string, readonly number[]>();
  private heldTokens = 0;
  hits = 0;
  misses = 0;

  /**
   * @param maxEntries bound on cached entries (0 disables the cache).
   * @param maxTokens bound on the tokens held over all entries: the memory bound, since one entry
   *   can be a tool output of millions of tokens. An entry over an eighth of it is not kept.
   */
  constructor(
    private readonly maxEntries: number,
    private readonly maxTokens = DEFAULT_RENDER_CACHE_TOKENS,
  ) {}

  /** `limits` bound a miss's tokenization; a hit costs nothing and is returned whole (the caller counts it). */
  render(profile: ModelProfile, entry: ConversationEntry, limits?: RenderLimits): readonly number[] {
    if (this.maxEntries === 0) return profile.renderEntry(entry, limits);
    const key = profile.id + ':' + createHash('sha1').update(JSON.stringify(entry)).digest('base64url');
    const hit = this.map.get(key);
    if (hit) {
      this.hits++;
      this.map.delete(key);
      this.map.set(key, hit);
      return hit;
    }
    this.misses++;
    const tokens = profile.renderEntry(entry, limits);
    if (tokens.length > this.maxTokens / 8) return tokens;
    this.map.set(key, tokens);
    this.heldTokens += tokens.length;
    while (this.map.size > this.maxEntries || this.heldTokens > this.maxTokens) {
      const oldest = this.map.keys().next().value as string;
      this.heldTokens -= this.map.get(oldest)!.length;
      this.map.delete(oldest);
    }
    return tokens;
  }

  get size(): number {
    return this.map.size;
  }

  /** Tokens held over all entries. */
  get tokens(): number {
    return this.heldTokens;
  }
}
