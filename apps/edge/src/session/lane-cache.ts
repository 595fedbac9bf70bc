import type { ConversationState } from '../turn/conversation-state';
import type { Lane, LaneTable } from './lanes';
import type { ConnectionStateCache } from './state-cache';

/**
 * After a lane's turn: caches the state it left as the lane's latest response, pinned (each lane's
 * latest stays while others are evicted); a turn that left none (failed) drops its parent from the
 * cache, unless another lane goes on from it.
 */
export function settleLane(
  cache: ConnectionStateCache,
  lanes: LaneTable,
  lane: Lane,
  prevId: string | undefined,
  state: ConversationState | undefined,
): void {
  if (state) {
    cache.set(state);
    if (lane.latest) cache.unpin(lane.latest);
    cache.pin((lane.latest = state.response.id));
  } else if (prevId && lanes.evictsParent(lane, prevId)) cache.evict(prevId, 'failed_continuation');
}
