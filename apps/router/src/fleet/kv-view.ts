import type { inferenceV1 } from '@fastloop/proto';

/** A session a worker reported holding. */
interface HeldSession {
  readonly tokens: number;
  readonly prefixKey: string;
  readonly rootTokens: number;
}

/** How much of one conversation root a worker holds. */
interface HeldRoot {
  sessions: number;
  /** Sum of the sessions' root_tokens, for the mean. */
  rootTokens: number;
}

/**
 * What one worker holds, as its KV events (WatchWorkerStats) told us: sessions by (salt, key) with
 * their token counts, and conversation roots with how many of its sessions descend from each. Built
 * only from the worker's reports, never from this router's own decisions, so every router replica
 * that reads the same worker sees the same view.
 */
export class KvView {
  private readonly sessions = new Map<string, HeldSession>();
  private readonly roots = new Map<string, HeldRoot>();
  // Sessions the worker said it dropped, most recent last (bounded): a caller's claim that one is
  // still held is then known to be stale.
  private readonly dropped = new Set<string>();

  /** Sessions held. */
  get size(): number {
    return this.sessions.size;
  }

  /** Applies one WorkerStats message: a snapshot replaces the view, a delta updates it. */
  apply(stats: Pick<inferenceV1.WorkerStats, 'snapshot' | 'kept' | 'removed'>): void {
    if (stats.snapshot) this.clear();
    for (const r of stats.removed) {
      const key = scoped(r.cacheSalt, r.sessionKey);
      this.drop(key);
      this.dropped.add(key);
      if (this.dropped.size > MAX_DROPPED) this.dropped.delete(this.dropped.values().next().value as string);
    }
    for (const k of stats.kept) {
      const key = scoped(k.cacheSalt, k.sessionKey);
      this.drop(key);
      this.dropped.delete(key);
      this.sessions.set(key, { tokens: k.tokens, prefixKey: k.prefixKey, rootTokens: k.rootTokens });
      if (k.prefixKey !== '') {
        const root = this.roots.get(rootKey(k.cacheSalt, k.prefixKey)) ?? { sessions: 0, rootTokens: 0 };
        root.sessions++;
        root.rootTokens += k.rootTokens;
        this.roots.set(rootKey(k.cacheSalt, k.prefixKey), root);
      }
    }
  }

  /** Tokens held for a session, 0 if none. */
  sessionTokens(cacheSalt: string, sessionKey: string): number {
    return this.sessions.get(scoped(cacheSalt, sessionKey))?.tokens ?? 0;
  }

  /** Whether the worker reported dropping the session (evicted, forgotten, moved on) since it last kept it. */
  hasDropped(cacheSalt: string, sessionKey: string): boolean {
    return this.dropped.has(scoped(cacheSalt, sessionKey));
  }

  /** The root a held session descends from ('' if none or not held). */
  sessionRoot(cacheSalt: string, sessionKey: string): string {
    return this.sessions.get(scoped(cacheSalt, sessionKey))?.prefixKey ?? '';
  }

  /**
   * Tokens a new conversation of `prefixKey` can expect to find here: the mean first-prompt length
   * of the root's sessions held (the shared part is at most that; 0 when none is held).
   */
  rootTokens(cacheSalt: string, prefixKey: string): number {
    if (prefixKey === '') return 0;
    const root = this.roots.get(rootKey(cacheSalt, prefixKey));
    return root ? Math.floor(root.rootTokens / root.sessions) : 0;
  }

  clear(): void {
    this.sessions.clear();
    this.roots.clear();
    this.dropped.clear();
  }

  private drop(key: string): void {
    const held = this.sessions.get(key);
    if (!held) return;
    this.sessions.delete(key);
    if (held.prefixKey === '') return;
    const [salt] = key.split('\u0000', 1);
    const rk = rootKey(salt, held.prefixKey);
    const root = this.roots.get(rk);
    if (!root) return;
    root.sessions--;
    root.rootTokens -= held.rootTokens;
    if (root.sessions <= 0) this.roots.delete(rk);
  }
}

/** Dropped sessions remembered per worker. */
const MAX_DROPPED = 4_096;

function scoped(salt: string, key: string): string {
  return `${salt}\u0000${key}`;
}

function rootKey(salt: string, prefixKey: string): string {
  return `${salt}\u0000${prefixKey}`;
}
