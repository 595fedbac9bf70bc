import type { InputItem } from '@fastloop/protocol';
import { approxBytes, type ConversationState } from './conversation-state';
import type { HeaderSource } from './render-header';
import { renderOutput } from './render-stage';
import { conversationRootOf } from './route-hints';
import type { Turn } from './turn';

/**
 * The states a finished turn leaves: `state`, which a continuation chains from (this turn's items
 * plus the output, rendered), and `stored`, what the store keeps. When the full state cannot be
 * built (so the turn cannot be continued from the connection cache) the response is still stored:
 * its items and response (what a continuation from the store rebuilds from), nothing held on a worker.
 */
export function statesOf(turn: Turn): { state?: ConversationState; stored: ConversationState } {
  try {
    const state = continuationState(turn);
    return { state, stored: state };
  } catch (err) {
    turn.req.logger.error({ err }, 'building the continuation state failed; the response is stored without it');
    return { stored: storeOnlyState(turn) };
  }
}

function continuationState(turn: Turn): ConversationState {
  const { req, input, meter, plan, route } = turn;
  const output = outputItems(turn);
  const { entries, rendered } = renderOutput(turn, output);
  const sampled = meter.sampled;
  return {
    ...common(turn),
    items: input.items.append(output),
    entries,
    rendered,
    // A turn its client stopped (interrupt, steering) cancelled its call with `keep`, so the worker
    // holds its session too (a worker without it answers prefix_miss, and the prompt goes whole).
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

function storeOnlyState(turn: Turn): ConversationState {
  return {
    ...common(turn),
    items: turn.input.items.append(outputItems(turn)),
    entries: turn.rendering.entries,
    rendered: turn.rendering.rendered,
    workerPrefixLength: 0,
    sampled: [],
    bytes: 0,
  };
}

/**
 * The output as the conversation goes on with it: an in-line compaction's item is already the
 * first item of the turn's input (its window), so it is not appended again.
 */
function outputItems(turn: Turn): readonly InputItem[] {
  const output: readonly InputItem[] = turn.writer.response.output;
  return turn.compaction ? output.filter((item) => item !== turn.compaction) : output;
}

function common(
  turn: Turn,
): Pick<
  ConversationState,
  | 'response'
  | 'tenant'
  | 'calls'
  | 'safetyState'
  | 'safetyItems'
  | 'headerVerdict'
  | 'headerSource'
  | 'redacted'
  | 'route'
  | 'routeRefresh'
  | 'prefixKey'
> {
  const { req, safety } = turn;
  if (!safety) throw new Error('a turn leaves a state only once judged');
  return {
    response: turn.writer.response,
    tenant: req.principal.tenant,
    calls: turn.input.calls,
    safetyState: safety.state,
    safetyItems: safety.itemsSeen,
    headerVerdict: safety.header,
    headerSource: headerSourceOf(req.body),
    redacted: turn.rendering.redacted || req.previous?.redacted === true,
    route: turn.route,
    routeRefresh: routeRefreshOf(turn),
    prefixKey: conversationRootOf(req),
  };
}

/**
 * The router asked beside the turn, for the next turn; none when the turn moved to another worker
 * after its first died (that answer may name the dead one: the next turn asks again).
 */
function routeRefreshOf(turn: Turn): ConversationState['routeRefresh'] {
  return turn.route === turn.prepared.route ? turn.prepared.routeRefresh : undefined;
}

/** The fields of a request its header reads (shared with the request, not copied). */
function headerSourceOf(body: HeaderSource): HeaderSource {
  const { tools, tool_choice, instructions, reasoning, text } = body;
  return { tools, tool_choice, instructions, reasoning, text };
}
