import type { ConversationState } from '../turn/conversation-state';
import type { EdgeMetrics } from '../edge-metrics';

/**
 * The process-wide side of the connection caches: one LRU order over every cached state of every
 * connection, so when the process budget is exceeded the least recently used state anywhere goes.
 */
export class StateCacheBudget {
  private bytes = 0;
  private readonly order = new Map<ConversationState, ConnectionStateCache>();

  /** @param limitBytes process-wide budget (EDGE_CACHE_TOTAL_BYTES). */
  constructor(
    private readonly limitBytes: number,
    private readonly metrics?: EdgeMetrics,
  ) {}

  get totalBytes(): number {
    return this.bytes;
  }

  /** @internal */
  added(state: ConversationState, owner: ConnectionStateCache): void {
    this.bytes += state.bytes;
    this.order.set(state, owner);
    while (this.bytes > this.limitBytes && this.order.size > 0) {
      const [oldest, cache] = this.order.entries().next().value as [ConversationState, ConnectionStateCache];
      cache.evict(oldest.response.id, 'process_budget');
    }
    this.metrics?.cacheBytes.set(this.bytes);
  }

  /** @internal */
  touched(state: ConversationState, owner: ConnectionStateCache): void {
    this.order.delete(state);
    this.order.set(state, owner);
  }

  /** @internal */
  removed(state: ConversationState): void {
    if (this.order.delete(state)) this.bytes -= state.bytes;
    this.metrics?.cacheBytes.set(this.bytes);
  }
}

/**
 * One connection's cache of previous responses' state, keyed by response id, bounded by bytes
 * (LRU within the connection) and by the shared process budget. Closing the socket drops it.
 * Each lane's latest response is pinned: over the connection's budget, unpinned states go first.
 */
export class ConnectionStateCache {
  private readonly states = new Map<string, ConversationState>();
  private readonly pinned = new Set<string>();
  private bytes = 0;

  constructor(
    private readonly budget: StateCacheBudget,
    private readonly limitBytes: number,
    private readonly metrics?: EdgeMetrics,
  ) {}

  get(id: string): ConversationState | undefined {
    const state = this.states.get(id);
    if (!state) return undefined;
    this.states.delete(id);
    this.states.set(id, state);
    this.budget.touched(state, this);
    return state;
  }

  set(state: ConversationState): void {
    this.evict(state.response.id, 'replaced');
    this.states.set(state.response.id, state);
    this.bytes += state.bytes;
    while (this.bytes > this.limitBytes && this.states.size > 1) {
      this.evict(this.oldestOtherThan(state.response.id), 'connection_budget');
    }
    this.budget.added(state, this);
  }

  /** Keeps `id` (a lane's latest response) ahead of unpinned states when over the connection's budget. */
  pin(id: string): void {
    this.pinned.add(id);
  }

  unpin(id: string): void {
    this.pinned.delete(id);
  }

  /** The least recently used state to evict but `keep`: an unpinned one if any, else a pinned one. */
  private oldestOtherThan(keep: string): string {
    let pinnedOldest: string | undefined;
    for (const id of this.states.keys()) {
      if (id === keep) continue;
      if (!this.pinned.has(id)) return id;
      pinnedOldest ??= id;
    }
    return pinnedOldest!;
  }

  /** Drops one state (a failed continuation evicts its id). */
  evict(id: string, reason: string): void {
    const state = this.states.get(id);
    if (!state) return;
    this.states.delete(id);
    this.pinned.delete(id);
    this.bytes -= state.bytes;
    this.budget.removed(state);
    if (reason !== 'replaced') this.metrics?.cacheEvictions.inc({ reason });
  }

  get size(): number {
    return this.states.size;
  }

  /** Drops everything; the connection closed. Idempotent. */
  clear(): void {
    for (const id of [...this.states.keys()]) this.evict(id, 'connection_closed');
  }
}
