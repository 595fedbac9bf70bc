import { createHash } from 'node:crypto';
import { entryText, type ConversationEntry, type ModelProfile, type RenderLimits } from '@fastloop/model-profiles';

/** Default bound on the tokens the cache holds: 8M tokens, about 64 MB of arrays. */
export const DEFAULT_RENDER_CACHE_TOKENS = 8_000_000;

/** Renders one entry, from a cache when it can: what a whole-conversation rendering asks per entry. */
export interface EntryRenderer {
  render(profile: ModelProfile, entry: ConversationEntry, limits?: RenderLimits): readonly number[];
}

/**
 * A bounded, process-wide LRU of rendered entry tokens keyed by tenant, profile and entry content
 * hash. The stateless HTTP path re-sends the whole history every turn; hashing an entry is far
 * cheaper than tokenizing it again, so this gives HTTP the same tokenization saving WebSocket mode
 * gets. Scoped by tenant: a hit is faster than a miss, so a shared entry would tell one tenant
 * that another had just sent the same text (issue 17: a 400 KB document rendered ~2x faster).
 */
export class EntryRenderCache {
  private readonly map = new Map<string, readonly number[]>();
  private heldTokens = 0;
  hits = 0;
  misses = 0;

  /**
   * @param maxEntries bound on cached entries (0 disables the cache).
   * @param maxTokens bound on the tokens held over all entries: the memory bound, since one entry
   *   can be a tool output of millions of tokens. An entry over an eighth of it (in tokens, or in
   *   characters of text) is not kept.
   */
  constructor(
    private readonly maxEntries: number,
    private readonly maxTokens = DEFAULT_RENDER_CACHE_TOKENS,
  ) {}

  /** The cache as `tenant` sees it: only entries that tenant rendered. */
  forTenant(tenant: string): EntryRenderer {
    return { render: (profile, entry, limits) => this.render(tenant, profile, entry, limits) };
  }

  /** The tokens `tenant` had cached for `entry`, without rendering it or counting a hit or a miss. */
  peek(tenant: string, profile: ModelProfile, entry: ConversationEntry): readonly number[] | undefined {
    if (this.maxEntries === 0 || entryText(entry).length > this.maxTokens / 8) return undefined;
    return this.map.get(EntryRenderCache.key(tenant, profile, entry));
  }

  /**
   * `tenant`'s tokens of `entry`. `limits` bound a miss's tokenization; a hit costs nothing and is
   * returned whole (the caller counts it).
   */
  render(tenant: string, profile: ModelProfile, entry: ConversationEntry, limits?: RenderLimits): readonly number[] {
    // An entry too large to keep is not hashed either (hashing 8 MB holds the event loop ~20 ms).
    if (this.maxEntries === 0 || entryText(entry).length > this.maxTokens / 8)
      return profile.renderEntry(entry, limits);
    const key = EntryRenderCache.key(tenant, profile, entry);
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

  private static key(tenant: string, profile: ModelProfile, entry: ConversationEntry): string {
    const h = createHash('sha1').update(`${tenant.length}:${tenant}\u0000${profile.id}\u0000`);
    return h.update(JSON.stringify(entry)).digest('base64url');
  }

  get size(): number {
    return this.map.size;
  }

  /** Tokens held over all entries. */
  get tokens(): number {
    return this.heldTokens;
  }
}
