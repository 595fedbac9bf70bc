import type { ApiError, Usage } from '@fastloop/protocol';
import { toApiError } from '../api-errors';
import type { ConversationState } from './conversation-state';
import { continuationState, storeOnlyState } from './continuation-state';
import type { Ending } from './generate-stage';
import type { Turn } from './turn';
import type { TurnWriter } from './turn-writer';

/** The result of a turn that got as far as `response.created`. */
export interface TurnOutcome {
  /** The final Response object (as in the terminal event). */
  response: TurnWriter['response'];
  /** State a continuation can chain from; absent when the turn failed. */
  state?: ConversationState;
  /** Why the turn failed after `response.created` (the response's status is then `failed`). */
  error?: ApiError;
}

/**
 * The finish stage of a turn that ended: the terminal event, then (after it went out, never on
 * the turn's path) the usage record and the store write. Post-terminal work runs whatever one
 * step throws: a state that cannot be built (so cannot be continued from the connection cache) is
 * still billed and still stored.
 */
export function finishTurn(turn: Turn, ending: Ending): TurnOutcome {
  const { deps, req, writer } = turn;
  writer.end(ending);
  turn.enter('terminal');
  turn.timer.mark('stream');
  deps.metrics.turns.inc({ transport: req.transport, cached: String(!!req.previous), status: writer.response.status });
  let state: ConversationState | undefined;
  let stored: ConversationState | undefined;
  try {
    state = continuationState(turn);
    stored = state;
  } catch (err) {
    req.logger.error({ err }, 'building the continuation state failed; the response is stored without it');
    stored = storeOnlyState(turn);
  }
  afterTerminal(turn, ending.usage, turn.storing ? stored : undefined);
  return { response: writer.response, state };
}

/**
 * The finish stage of a turn that failed after `response.created`: `response.failed`, billed for
 * what was prefilled and generated before the failure (a client that disconnects just before the
 * end pays for the tokens it cost), never stored.
 */
export function failTurn(turn: Turn, err: unknown): TurnOutcome {
  const { deps, req, writer } = turn;
  const apiErr = toApiError(err);
  req.logger.warn({ err, code: apiErr.code }, 'turn failed after response.created');
  writer.end({ status: 'failed', error: apiErr });
  turn.enter('terminal');
  deps.metrics.turns.inc({ transport: req.transport, cached: String(!!req.previous), status: 'failed' });
  afterTerminal(turn, turn.meter.usage(), undefined);
  return { response: writer.response, error: apiErr };
}

/**
 * Usage enqueue and store write: after the terminal event went out, never on the turn's path.
 * Each step is guarded on its own, so a failure in one never skips the other.
 */
function afterTerminal(turn: Turn, usage: Usage, store: ConversationState | undefined): void {
  const { deps, req, writer, timer } = turn;
  setImmediate(() => {
    const start = performance.now();
    const r = writer.response;
    guarded(turn, 'usage record', () =>
      deps.usage.enqueue({
        responseId: r.id,
        tenant: req.principal.tenant,
        model: r.model,
        inputTokens: usage.input_tokens,
        cachedTokens: usage.input_tokens_details.cached_tokens,
        outputTokens: usage.output_tokens,
        reasoningTokens: usage.output_tokens_details.reasoning_tokens,
        completedAtMs: Date.now(),
        transport: req.transport,
        status: r.status ?? 'completed',
      }),
    );
    if (store)
      guarded(turn, 'store write', () => deps.store!.save(store, req.previous ? req.previous.items.length : 0));
    timer.record('post', performance.now() - start);
  });
}

function guarded(turn: Turn, step: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    turn.req.logger.error({ err, step }, 'post-response step failed');
  }
}
