import { createHash } from 'node:crypto';
import type { ConversationEntry, ModelProfile, RenderLimits } from '@fastloop/model-profiles';

/**
 * A bounded, process-wide LRU of rendered entry tokens keyed by profile and entry content hash.
 * The stateless HTTP path re-sends the whole history every turn; hashing an entry is far cheaper
 * than tokenizing it again, so this gives HTTP the same tokenization saving WebSocket mode gets.
 */
export class EntryRenderCache {
  private readonly map = new Map<string, readonly number[]>();
  hits = 0;
  misses = 0;

  /** @param maxEntries bound on cached entries (0 disables the cache). */
  constructor(private readonly maxEntries: number) {}

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
    this.map.set(key, tokens);
    if (this.map.size > this.maxEntries) this.map.delete(this.map.keys().next().value as string);
    return tokens;
  }

  get size(): number {
    return this.map.size;
  }
}
