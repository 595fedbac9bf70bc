import {
  ApiErrors,
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

/** The input item that asks for compaction now (it must be the last of a request's input). */
export const COMPACTION_TRIGGER = 'compaction_trigger';

/**
 * The compaction stage, for a request whose input ends with a `compaction_trigger` item (the whole
 * conversation before it is summarised and the response's output is the compaction item alone,
 * nothing else sampled) or whose rendered input passed its `context_management` threshold (or the
 * model's window): then everything before the latest user message is summarised and the turn goes on
 * over the window `[compaction, latest user message, …]`, so a tool call and its output are never
 * split. Undefined when not due, or when there is nothing to fold in (no earlier items, or only the
 * previous compaction).
 */
export async function compactIfDue(run: RunNested, prepared: PreparedTurn): Promise<InlineCompaction | undefined> {
  const { deps, req, input } = prepared;
  const at = cutOf(prepared);
  if (!at) return undefined;
  const { items, split, keep } = at;
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
  const window: InputItem[] = [item, ...items.slice(keep)];
  // The window is not compacted again in this turn.
  const body: ResponseCreateRequest = {
    ...req.body,
    input: window,
    previous_response_id: undefined,
    context_management: undefined,
  };
  // A trigger's response is the compaction alone: nothing is sampled after it.
  const generate = at.triggered ? false : req.generate;
  return { req: { ...req, body, previous: undefined, generate }, item, previousResponseId: req.previous?.response.id };
}

/** Where the conversation is cut: summarised before `split`, kept from `keep`; undefined when not due. */
function cutOf(
  prepared: PreparedTurn,
): { items: InputItem[]; split: number; keep: number; triggered: boolean } | undefined {
  const { req, input, route, rendering } = prepared;
  const at = input.newItems.findIndex((i) => i.type === COMPACTION_TRIGGER);
  if (at >= 0) {
    if (at !== input.newItems.length - 1)
      throw ApiErrors.invalidRequest('A compaction_trigger item must be the final input item.', `input[${at}]`);
    const items = [...input.items];
    if (items.length === 1)
      throw ApiErrors.invalidRequest('There is nothing to compact before the compaction_trigger item.', `input[${at}]`);
    return { items, split: items.length - 1, keep: items.length, triggered: true };
  }
  // A warm-up (`generate: false`) samples nothing, a summary included: the turn that generates compacts.
  const threshold = req.generate ? compactThreshold(req.body, route) : undefined;
  if (threshold === undefined || !(rendering.overflow || rendering.rendered.tokens.length > threshold))
    return undefined;
  const items = [...input.items];
  const split = lastUserMessage(items);
  if (split <= 0 || (split === 1 && items[0].type === 'compaction')) return undefined;
  return { items, split, keep: split, triggered: false };
}

/** Index of the last user message, or -1. */
function lastUserMessage(items: readonly InputItem[]): number {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (isKnownInputItem(item) && item.type === 'message' && item.role === 'user') return i;
  }
  return -1;
}
