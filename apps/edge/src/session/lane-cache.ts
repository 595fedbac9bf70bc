import type { ConversationState } from '../turn/conversation-state';
import type { Lane, LaneTable } from './lanes';
import type { ConnectionStateCache } from './state-cache';

/** Caches a lane's new latest response, pinned (each lane's latest stays while others are evicted). */
export function keepLatest(cache: ConnectionStateCache, lane: Lane, state: ConversationState): void {
  cache.set(state);
  if (lane.latest) cache.unpin(lane.latest);
  cache.pin((lane.latest = state.response.id));
}

/** Drops the parent of a failed continuation when no other lane goes on from it. */
export function evictParent(
  cache: ConnectionStateCache,
  lanes: LaneTable,
  lane: Lane,
  prevId: string | undefined,
): void {
  if (prevId && lanes.evictsParent(lane, prevId)) cache.evict(prevId, 'failed_continuation');
}
