import { settleWithin, type Logger } from '@fastloop/service-kit';
import type { ConversationState } from '../turn/conversation-state';
import type { ResponseSink } from '../turn/turn-deps';
import type { ResponseStore, StoredResponse } from './response-store';

/**
 * The turn's ResponseSink: writes stored responses in the background, one chain at a time in
 * order (a child waits for its parent's write, so its append lands on the parent's list).
 * Bounded by `maxPending`; beyond it, writes are dropped with an error log and a counter.
 */
export class StoreWriter implements ResponseSink {
  private readonly pending = new Map<string, Promise<StoredResponse | undefined>>();
  failures = 0;

  constructor(
    private readonly store: ResponseStore,
    private readonly logger: Logger,
    private readonly maxPending = 10_000,
  ) {}

  save(state: ConversationState, newItemsFrom: number): void {
    const id = state.response.id;
    if (this.pending.size >= this.maxPending) {
      this.failures++;
      this.logger.error({ responseId: id }, 'response store backlog full; response not stored');
      return;
    }
    const parentId = state.response.previous_response_id ?? undefined;
    const parentWrite = parentId ? this.pending.get(parentId) : undefined;
    const write = (async () => {
      const parent = parentId ? ((await parentWrite) ?? (await this.store.get(parentId, state.tenant))) : undefined;
      return this.store.save(state, parent, newItemsFrom);
    })().catch((err: unknown) => {
      this.failures++;
      this.logger.error({ err, responseId: id }, 'storing response failed');
      return undefined;
    });
    this.pending.set(id, write);
    void write.finally(() => this.pending.delete(id));
  }

  /**
   * Resolves when every write started so far has finished, or after `timeoutMs` (shutdown must
   * not hang on an unreachable Redis; what is still pending then is logged as lost).
   */
  async flush(timeoutMs = 5_000): Promise<void> {
    const result = await settleWithin(Promise.all([...this.pending.values()]), timeoutMs);
    if (result === 'timeout') this.logger.error({ pending: this.pending.size }, 'response store unreachable at shutdown; pending responses not stored');
  }

  /** Resolves when every write started so far has settled (Redis commands time out, so this is bounded). */
  async settled(): Promise<void> {
    if (this.pending.size > 0) await Promise.all([...this.pending.values()]);
  }

  /** The write of `id` if still in flight, so a reader sees its own writes. */
  inFlight(id: string): Promise<StoredResponse | undefined> | undefined {
    return this.pending.get(id);
  }
}
