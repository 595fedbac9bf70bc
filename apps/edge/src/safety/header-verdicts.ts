import { createHash } from 'node:crypto';
import type { safetyV1 } from '@fastloop/proto';

/** Default bound of {@link HeaderVerdicts}: distinct headers remembered per process. */
export const DEFAULT_HEADER_VERDICTS = 1024;

/**
 * Verdicts of request headers (instructions + tools), classified once per distinct header and
 * reused while it is unchanged: an agent sends the same instructions and tools every turn, so
 * they cost one Classify per (tenant, model, header), not one per turn. Bounded LRU; a failed
 * classification is forgotten so the next turn retries it. An entry is the verdict and its
 * findings (a few hundred bytes), without safety's carried state (see {@link withoutState}).
 */
export class HeaderVerdicts {
  private readonly entries = new Map<string, Promise<safetyV1.ClassifyResponse>>();

  constructor(private readonly maxEntries = DEFAULT_HEADER_VERDICTS) {}

  /** The key of a header: what is classified and under whose policy. */
  static key(tenant: string, model: string, items: readonly safetyV1.SafetyItem[]): string {
    const h = createHash('sha256').update(`${tenant}\u0000${model}\u0000`);
    for (const item of items) h.update(`${item.itemType}\u0000${item.text.length}\u0000${item.text}`);
    return h.digest('base64url');
  }

  /** The cached verdict for `key`, or `classify()`'s, remembered. */
  get(key: string, classify: () => Promise<safetyV1.ClassifyResponse>): Promise<safetyV1.ClassifyResponse> {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const verdict = classify().then(withoutState);
    this.entries.set(key, verdict);
    verdict.catch(() => this.entries.delete(key));
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    return verdict;
  }

  get size(): number {
    return this.entries.size;
  }
}

const NO_STATE = Buffer.alloc(0);

/**
 * A header is classified alone and never continued, so its verdict needs no carried state. The
 * decoded state is a view into the buffer its gRPC message arrived in, usually an 8 KB slab of
 * Node's Buffer pool: kept, each entry pinned a slab (8 MB at the default bound, the external
 * memory that grew from level to level in bench/load).
 */
function withoutState(res: safetyV1.ClassifyResponse): safetyV1.ClassifyResponse {
  return { ...res, state: NO_STATE };
}
