import type { ApiError, Usage } from '@fastloop/protocol';
import { turnAccess, type TurnAccess } from '../access-log';
import { toApiError } from '../api-errors';
import type { ConversationState } from './conversation-state';
import { statesOf } from './continuation-state';
import type { Ending } from './output-reader';
import type { Turn } from './turn';
import type { TurnWriter } from './turn-writer';

/** The result of a turn that got as far as `response.created`. */
export interface TurnOutcome {
  /** The final Response object (as in the terminal event). */
  response: TurnWriter['response'];
  /** What the transport's access line says of this turn (access-log.ts). */
  access: TurnAccess;
  /** State a continuation can chain from; absent when the turn failed. */
  state?: ConversationState;
  /** Why the turn failed after `response.created` (the response's status is then `failed`). */
  error?: ApiError;
}

/** What a turn ended with: how it ended, or why it failed after `response.created`. */
export type TurnEnd = Ending | { status: 'failed'; cause: unknown };

/**
 * The finish stage: the terminal event, then (after it went out, never on the turn's path) the
 * usage record and, for a turn that ended, the store write. A failed turn is billed for what was
 * prefilled and generated before the failure (a client that disconnects just before the end pays
 * for the tokens it cost) and never stored.
 */
export function finishTurn(turn: Turn, end: TurnEnd): TurnOutcome {
  const { deps, req, writer } = turn;
  const cached = String(!!req.previous);
  if (end.status === 'failed') {
    const error = toApiError(end.cause);
    req.logger.warn({ err: end.cause, code: error.code }, 'turn failed after response.created');
    writer.end({ status: 'failed', error });
    turn.enter('terminal');
    deps.metrics.turns.inc({ transport: req.transport, cached, status: 'failed' });
    afterTerminal(turn, turn.meter.usage(), undefined);
    return { response: writer.response, error, access: accessOf(turn, turn.meter.usage()) };
  }
  writer.end(end);
  turn.enter('terminal');
  turn.timer.mark('stream');
  deps.metrics.turns.inc({ transport: req.transport, cached, status: writer.response.status });
  // Post-terminal work runs whatever one step throws: a state that cannot be built is still billed and stored.
  const { state, stored } = statesOf(turn);
  afterTerminal(turn, end.usage, turn.storing ? stored : undefined);
  return { response: writer.response, state, access: accessOf(turn, end.usage) };
}

/** The turn's access fields: its stages so far and its time from validation to the terminal event. */
function accessOf(turn: Turn, usage: Usage): TurnAccess {
  const { req, timer, writer } = turn;
  const turnMs = req.validateMs + req.loadMs + performance.now() - timer.startedAt;
  return turnAccess(writer.response, usage, timer.stages, turnMs);
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
