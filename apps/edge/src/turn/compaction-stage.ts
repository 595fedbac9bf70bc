import {
  isKnownInputItem,
  type InputItem,
  type OutputCompaction,
  type ResponseCreateRequest,
} from '@fastloop/protocol';
import { summarize, type RunNested } from './compaction';
import type { RouteDecision } from './conversation-state';
import type { PreparedTurn } from './turn';
import type { TurnRequest } from './turn-deps';

/** Share of the model's context window at which `context_management` compacts when it names no threshold. */
const DEFAULT_THRESHOLD_SHARE = 0.9;

/** What in-line compaction hands the rest of the turn. */
export interface InlineCompaction {
  /** The turn's request over the compacted window: a new chain, nothing held on a worker. */
  req: TurnRequest;
  /** The compaction item the stream carries first. */
  item: OutputCompaction;
  /** The response this one continues (lineage only: the window does not extend its state). */
  previousResponseId?: string;
}

/**
 * The token count past which a request asks to be compacted in-line (`context_management:
 * [{type: "compaction", compact_threshold}]`), or undefined when it does not ask.
 */
function compactThreshold(body: ResponseCreateRequest, route: RouteDecision): number | undefined {
  const entry = body.context_management?.find((e) => e.type === 'compaction');
  if (!entry) return undefined;
  return entry.compact_threshold ?? Math.floor(route.contextWindow * DEFAULT_THRESHOLD_SHARE);
}

/**
 * The compaction stage, for a request whose rendered input passed its `context_management`
 * threshold (or the model's window): the serving model summarises everything before the latest user
 * message, and the turn goes on over the window `[compaction, latest user message, …]`, so a tool
 * call and its output are never split. Undefined when not due, or when there is nothing to fold in
 * (no earlier items, or only the previous compaction).
 */
export async function compactIfDue(run: RunNested, prepared: PreparedTurn): Promise<InlineCompaction | undefined> {
  const { deps, req, input, route, rendering } = prepared;
  const threshold = compactThreshold(req.body, route);
  if (threshold === undefined || !(rendering.overflow || rendering.rendered.tokens.length > threshold))
    return undefined;
  const items = [...input.items];
  const split = lastUserMessage(items);
  if (split <= 0 || (split === 1 && items[0].type === 'compaction')) return undefined;
  // Items that extend the cached state let the worker reuse the session prefix it holds.
  const extend = req.previous !== undefined && split >= input.inputStart;
  const summary = await summarize(
    run,
    deps,
    req,
    extend
      ? { items: input.newItems.slice(0, split - input.inputStart), previous: req.previous }
      : { items: items.slice(0, split) },
  );
  const { item } = summary;
  const window: InputItem[] = [item, ...items.slice(split)];
  // The window is not compacted again in this turn.
  const body: ResponseCreateRequest = {
    ...req.body,
    input: window,
    previous_response_id: undefined,
    context_management: undefined,
  };
  return { req: { ...req, body, previous: undefined }, item, previousResponseId: req.previous?.response.id };
}

/** Index of the last user message, or -1. */
function lastUserMessage(items: readonly InputItem[]): number {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (isKnownInputItem(item) && item.type === 'message' && item.role === 'user') return i;
  }
  return -1;
}
