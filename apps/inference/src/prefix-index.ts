import type { SequenceLog } from './sequence-log';

/**
 * A sequence the worker holds, as the prefix index sees it. `blockHashes[i]` is the chained hash
 * of block i of `tokens` (block-hash.ts), one per full block.
 *
 * The object is the holder's identity in the index; its two arrays are never mutated (a holder is
 * updated by swapping in new arrays), so a reader that took them keeps a consistent pair.
 */
export interface PrefixHolder {
  tokens: Uint32Array;
  blockHashes: Float64Array;
  /** The append-only log both arrays are views of, if any (see sequence-log.ts). */
  log?: SequenceLog;
}

/**
 * Which held sequences contain each block hash: the content-addressed half of prefix reuse.
 *
 * Memory: one membership per (holder, distinct block hash), so at most held tokens / 64
 * memberships, measured at about 42 bytes each when hashes are unique (a Map entry and its boxed
 * key) and 27 when shared (a Set slot): under 0.7 bytes per held token. Bounded with the session
 * cache, which adds and removes holders as it keeps and drops sessions.
 */
export class PrefixIndex {
  // One holder is stored bare (the common case: a block only one conversation has), several in a Set.
  private readonly holders = new Map<number, PrefixHolder | Set<PrefixHolder>>();
  private memberships = 0;

  /** (holder, block hash) pairs indexed: the index's size. */
  get size(): number {
    return this.memberships;
  }

  /** Distinct block hashes indexed. */
  get hashes(): number {
    return this.holders.size;
  }

  /** Whether some held sequence has a block with this chained hash. */
  has(hash: number): boolean {
    return this.holders.has(hash);
  }

  /** Calls `visit` for the holders of `hash` (oldest first) until it returns false. */
  forEachHolder(hash: number, visit: (holder: PrefixHolder) => boolean): void {
    const found = this.holders.get(hash);
    if (found === undefined) return;
    if (!(found instanceof Set)) {
      visit(found);
      return;
    }
    for (const holder of found) if (!visit(holder)) return;
  }

  /** Indexes `holder` under `hashes[from:]`. */
  add(holder: PrefixHolder, hashes: Float64Array, from = 0): void {
    for (let i = from; i < hashes.length; i++) this.addOne(hashes[i], holder);
  }

  /** Removes `holder` from `hashes[from:]` (hashes it is not under are skipped). */
  remove(holder: PrefixHolder, hashes: Float64Array, from = 0): void {
    for (let i = from; i < hashes.length; i++) this.removeOne(hashes[i], holder);
  }

  /** Forgets everything. */
  clear(): void {
    this.holders.clear();
    this.memberships = 0;
  }

  private addOne(hash: number, holder: PrefixHolder): void {
    const found = this.holders.get(hash);
    if (found === undefined) {
      this.holders.set(hash, holder);
    } else if (found instanceof Set) {
      if (found.has(holder)) return;
      found.add(holder);
    } else {
      if (found === holder) return;
      this.holders.set(hash, new Set([found, holder]));
    }
    this.memberships++;
  }

  private removeOne(hash: number, holder: PrefixHolder): void {
    const found = this.holders.get(hash);
    if (found === undefined) return;
    if (found instanceof Set) {
      if (!found.delete(holder)) return;
      if (found.size === 1) this.holders.set(hash, found.values().next().value!);
    } else {
      if (found !== holder) return;
      this.holders.delete(hash);
    }
    this.memberships--;
  }
}
