import { settleWithin, type Logger } from '@fastloop/service-kit';
import type { ConversationState } from '../turn/conversation-state';
import type { ResponseSink } from '../turn/turn-deps';
import type { ResponseStore, StoredResponse } from './response-store';

/** Options of {@link StoreWriter}; every field has a default. */
export interface StoreWriterOptions {
  /** Writes waiting or retrying at once; beyond it new responses are answered `store: false`. Default 10,000. */
  maxPending?: number;
  /**
   * How long a failed write is retried (Redis away) before it is given up, in ms; default 600,000.
   * Meanwhile the id answers 503 (not 404) and becomes readable once Redis is back.
   */
  retryForMs?: number;
  /** First retry delay, doubled per failure up to 5 s; default 250 ms. */
  retryBaseMs?: number;
  /** Whether the store can take writes now (Redis connected); default always. */
  isAvailable?: () => boolean;
}

/**
 * The turn's ResponseSink: writes stored responses in the background, one chain at a time in
 * order (a child waits for its parent's write, so its append lands on the parent's list). A write
 * that fails is retried until Redis is back (up to `retryForMs`), so a returned id becomes
 * readable rather than silently missing; when the store cannot take writes at all (Redis down,
 * backlog full) `accepting()` says so and the turn answers `store: false` instead.
 */
export class StoreWriter implements ResponseSink {
  private readonly pending = new Map<string, Promise<StoredResponse | undefined>>();
  private readonly maxPending: number;
  private readonly retryForMs: number;
  private readonly retryBaseMs: number;
  private closing = false;
  failures = 0;

  constructor(
    private readonly store: ResponseStore,
    private readonly logger: Logger,
    options: StoreWriterOptions = {},
  ) {
    this.maxPending = options.maxPending ?? 10_000;
    this.retryForMs = options.retryForMs ?? 600_000;
    this.retryBaseMs = options.retryBaseMs ?? 250;
    this.isAvailable = options.isAvailable ?? (() => true);
  }

  private readonly isAvailable: () => boolean;

  /** Whether a response finishing now can be stored (else the turn reports `store: false`). */
  accepting(): boolean {
    return !this.closing && this.pending.size < this.maxPending && this.isAvailable();
  }

  save(state: ConversationState, newItemsFrom: number): void {
    const id = state.response.id;
    if (this.pending.size >= this.maxPending) {
      this.failures++;
      this.logger.error({ responseId: id }, 'response store backlog full; response not stored');
      return;
    }
    // No item is new since a parent (an in-line compaction's window starts anew): stored as a root,
    // whatever the response's lineage says.
    const parentId = newItemsFrom > 0 ? (state.response.previous_response_id ?? undefined) : undefined;
    const parentWrite = parentId ? this.pending.get(parentId) : undefined;
    const write = this.retrying(id, async () => {
      const parent = parentId ? ((await parentWrite) ?? (await this.store.get(parentId, state.tenant))) : undefined;
      return this.store.save(state, parent, newItemsFrom);
    });
    this.pending.set(id, write);
    void write.finally(() => this.pending.delete(id));
  }

  /** Runs `attempt` until it succeeds, the retry window ends or shutdown; never rejects. */
  private async retrying(id: string, attempt: () => Promise<StoredResponse>): Promise<StoredResponse | undefined> {
    const giveUpAt = Date.now() + this.retryForMs;
    for (let failures = 0; ; failures++) {
      try {
        return await attempt();
      } catch (err) {
        if (this.closing || Date.now() >= giveUpAt) {
          this.failures++;
          this.logger.error({ err, responseId: id }, 'storing response failed; given up');
          return undefined;
        }
        if (failures === 0)
          this.logger.warn({ err, responseId: id }, 'storing response failed; retrying until the store is back');
        await new Promise((r) => setTimeout(r, Math.min(5_000, this.retryBaseMs * 2 ** Math.min(failures, 10))));
      }
    }
  }

  /**
   * Resolves when every write started so far has finished, or after `timeoutMs` (shutdown must
   * not hang on an unreachable Redis; what is still pending then is logged as lost).
   */
  async flush(timeoutMs = 5_000): Promise<void> {
    const result = await settleWithin(Promise.all([...this.pending.values()]), timeoutMs);
    if (result === 'timeout') {
      this.closing = true;
      this.logger.error(
        { pending: this.pending.size },
        'response store unreachable at shutdown; pending responses not stored',
      );
    }
  }

  /**
   * Waits (at most `timeoutMs`) for the write of `id`, or for every write started so far without an
   * id, so a reader sees its own writes; a write still retrying then is read as whatever the store
   * answers (503 while Redis is away).
   */
  async settled(id?: string, timeoutMs = 2_000): Promise<void> {
    const writes =
      id === undefined ? [...this.pending.values()] : [this.pending.get(id)].filter((w) => w !== undefined);
    if (writes.length > 0) await settleWithin(Promise.all(writes), timeoutMs);
  }
}
