import type { InputItem } from '@fastloop/protocol';
import { approxBytes, type ConversationState } from './conversation-state';
import { itemsToEntries } from './item-conversion';
import { appendEntries } from './render-conversation';
import type { Turn } from './turn';

/** The state a continuation chains from: this turn's items plus the output, rendered. */
export function continuationState(turn: Turn): ConversationState {
  const { req, writer, rendering, input, meter, plan, route } = turn;
  const output: readonly InputItem[] = writer.response.output;
  // The same conversion as for input items: a state rebuilt from the store renders identically.
  const outputEntries = itemsToEntries(output, input.calls);
  const rendered = appendEntries(rendering.profile, rendering.rendered, outputEntries);
  const sampled = meter.sampled;
  return {
    ...common(turn),
    items: input.items.append(output),
    entries: turn.entries.append(outputEntries),
    rendered,
    workerPrefixLength: plan && route.workerId ? plan.promptLength : 0,
    sampled,
    // What this state adds beyond its parent's shared logs: its input, output and their tokens.
    bytes:
      approxBytes(req.body.input) +
      approxBytes(output) +
      (rendered.tokens.length - (req.previous?.rendered.tokens.length ?? 0)) * 4 +
      sampled.length * 8,
  };
}

/**
 * The state stored when the full one could not be built: the items and the response (what the
 * store keeps and a continuation from the store rebuilds from), nothing held on a worker.
 */
export function storeOnlyState(turn: Turn): ConversationState {
  return {
    ...common(turn),
    items: turn.input.items.append(turn.writer.response.output as unknown as InputItem[]),
    entries: turn.entries,
    rendered: turn.rendering.rendered,
    workerPrefixLength: 0,
    sampled: [],
    bytes: 0,
  };
}

function common(
  turn: Turn,
): Pick<ConversationState, 'response' | 'tenant' | 'calls' | 'safetyState' | 'safetyItems' | 'redacted' | 'route'> {
  const { req, safety } = turn;
  return {
    response: turn.writer.response,
    tenant: req.principal.tenant,
    calls: turn.input.calls,
    safetyState: safety!.state,
    safetyItems: safety!.itemsSeen,
    redacted: turn.redacted || req.previous?.redacted === true,
    route: turn.route,
  };
}
