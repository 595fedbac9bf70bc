import { resolveProfile } from '@fastloop/model-profiles';
import { narrowContext } from '../turn/input-stage';
import { toHeader } from '../turn/render-header';
import type { ReasoningSeal } from '../turn/reasoning-seal';
import { AppendLog } from '../turn/append-log';
import type { CallTarget, ConversationState } from '../turn/conversation-state';
import { itemsToEntries } from '../turn/item-conversion';
import { renderConversation } from '../turn/render-conversation';
import type { EntryRenderCache } from '../turn/entry-render-cache';
import { offloadRender, type RenderOffload } from '../turn/render-offload';
import type { StateLoader } from '../turn/turn-deps';
import type { ResponseStore } from './response-store';
import type { StoreWriter } from './store-writer';

/**
 * Rebuilds a conversation state from the response store, for `previous_response_id` over HTTP or
 * after a reconnect: O(history), as the architecture says of that path, with item rendering served
 * from the process-wide render cache. Safety state and routing come back from the store as they were.
 */
export class StoredStateLoader implements StateLoader {
  constructor(
    private readonly store: ResponseStore,
    private readonly writer: StoreWriter,
    private readonly renderCache: EntryRenderCache,
    private readonly reasoningSeal?: ReasoningSeal,
    private readonly renderOffload?: RenderOffload,
  ) {}

  async load(id: string, tenant: string): Promise<ConversationState | undefined> {
    await this.writer.settled(id);
    const record = await this.store.get(id, tenant);
    if (!record) return undefined;
    const items = await this.store.items(record, 0, record.itemsLength);
    const calls = new Map<string, CallTarget>();
    const entries = itemsToEntries(items, calls, 0, narrowContext({ reasoningSeal: this.reasoningSeal }, tenant));
    const profile = await resolveProfile(record.route.profile);
    const header = toHeader(record.response);
    // A long stored history tokenizes on the render pool, as a long new input does.
    const ctx = { offload: this.renderOffload, cache: this.renderCache, tenant };
    const log = AppendLog.from(entries);
    const served = await offloadRender(ctx, { profile, header, entries: log, newEntries: entries }, {});
    return {
      response: record.response,
      tenant,
      items: AppendLog.from(items),
      entries: log,
      rendered: renderConversation(served, header, entries, this.renderCache.forTenant(tenant)),
      calls,
      // Rebuilt from the client's items, the entries lack any redaction mask: the next turn then
      // classifies the whole conversation again and masks it before anything reaches a worker.
      ...(record.redacted
        ? { safetyState: Buffer.alloc(0), safetyItems: 0, unmasked: true }
        : { safetyState: Buffer.from(record.safetyState, 'base64'), safetyItems: record.safetyItems }),
      route: record.route,
      // The worker may still hold this response's session: a continuation then sends only new tokens.
      workerPrefixLength: record.workerPrefixLength ?? 0,
      sampled: record.sampled ?? [],
      bytes: 0,
    };
  }
}
