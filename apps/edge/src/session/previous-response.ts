import { ApiErrors } from '@fastloop/protocol';
import type { EdgeMetrics } from '../edge-metrics';
import type { ConversationState } from '../turn/conversation-state';
import type { StateLoader } from '../turn/turn-deps';
import type { ConnectionStateCache } from './state-cache';

/** Where `previous_response_id` may be found: a connection's cache (WebSocket, gRPC), then the store. */
export interface PreviousSources {
  cache?: ConnectionStateCache;
  loader?: StateLoader;
  metrics: EdgeMetrics;
  tenant: string;
}

/**
 * The one resolution of `previous_response_id`, for every transport: the connection cache first
 * (a hit costs nothing), then the response store (rebuilt, O(history)); a miss is a 400
 * `previous_response_not_found`. Returns the state and how long finding it took (the turn's
 * `load` stage); no id, no state.
 */
export async function loadPrevious(
  id: string | null | undefined,
  from: PreviousSources,
): Promise<{ previous?: ConversationState; loadMs: number }> {
  const start = performance.now();
  if (!id) return { loadMs: performance.now() - start };
  const hit = from.cache?.get(id);
  if (hit) {
    from.metrics.cacheLookups.inc({ result: 'hit' });
    return { previous: hit, loadMs: performance.now() - start };
  }
  const loaded = await from.loader?.load(id, from.tenant);
  from.metrics.cacheLookups.inc({ result: loaded ? 'store' : 'miss' });
  if (!loaded) throw ApiErrors.previousResponseNotFound(id);
  return { previous: loaded, loadMs: performance.now() - start };
}
