import type { CompactedResponse } from '@fastloop/protocol';
import { DEFAULT_COMPACTION, keptUserMessages, summarize } from '../turn/compaction';
import { readInput } from '../turn/input-stage';
import { runTurn } from '../turn/run-turn';
import type { TurnDeps, TurnRequest } from '../turn/turn-deps';

/**
 * `POST /v1/responses/compact`: the conversation (`input`, after `previous_response_id`'s when
 * given) summarised by the serving model, as a `response.compaction` object: the latest user
 * messages, then one `compaction` item sealed for the caller's tenant. Sent back without
 * `previous_response_id`, that window starts a new chain; the model reads the summary in place of
 * what it replaces. The summarising pass is a turn of its own (scanned, billed, never stored).
 */
export async function compactConversation(deps: TurnDeps, req: TurnRequest): Promise<CompactedResponse> {
  // Normalised, references resolved, sealed items opened: a tampered blob is the 400 it is on a create.
  const input = await readInput(deps, req);
  const run = (sub: TurnRequest) => runTurn(deps, sub, () => undefined);
  const summary = await summarize(run, deps, req, { items: input.newItems, previous: req.previous });
  const keep = (deps.compaction ?? DEFAULT_COMPACTION).keepUserChars;
  return {
    id: summary.responseId,
    object: 'response.compaction',
    created_at: Math.floor(Date.now() / 1000),
    output: [...keptUserMessages(input.items, keep), summary.item],
    usage: summary.usage,
  };
}
