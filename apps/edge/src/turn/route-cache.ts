import type { RouteDecision } from './conversation-state';

/**
 * A short-lived, bounded cache of routing decisions for turns that have no cached state (the HTTP
 * paths and new conversations), keyed by model, tenant and affinity key. The router's answer only
 * changes when worker health changes, so reusing it for `ttlMs` saves a network round trip per
 * request; a turn whose worker turns out dead routes again and drops the entry.
 */
export class RouteCache {
  private readonly entries = new Map<string, { decision: RouteDecision; expiresAt: number }>();

  /**
   * @param ttlMs how long a decision is reused (0 disables the cache).
   * @param maxEntries bound on cached decisions; the oldest goes first.
   */
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  static key(model: string, tenant: string, affinity: string): string {
    return `${model}\u0000${tenant}\u0000${affinity}`;
  }

  get(key: string): RouteDecision | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.decision;
  }

  set(key: string, decision: RouteDecision): void {
    if (this.ttlMs === 0) return;
    this.entries.delete(key);
    this.entries.set(key, { decision, expiresAt: this.now() + this.ttlMs });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** Drops every decision that points at `workerId` (it just failed). */
  forgetWorker(workerId: string): void {
    for (const [key, { decision }] of this.entries) if (decision.workerId === workerId) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
