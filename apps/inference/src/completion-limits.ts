import { inferenceV1 } from '@fastloop/proto';

const { FinishReason } = inferenceV1;

/** What to send of one engine chunk, and whether generation is over. */
export interface LimitedChunk {
  tokens: readonly number[];
  /** Set when this chunk ends the completion: a stop token (STOP) or the token limit (LENGTH). */
  finish?: inferenceV1.FinishReason;
}

/**
 * Applies `max_output_tokens` and the stop tokens to an engine chunk, whatever the engine did: a
 * stop token is sent as the last token (STOP); reaching `maxOutputTokens` ends with LENGTH.
 *
 * @param sent tokens already sent in this call
 */
export function limitChunk(
  chunk: readonly number[],
  sent: number,
  maxOutputTokens: number,
  stopTokens: ReadonlySet<number>,
): LimitedChunk {
  const room = Math.max(0, maxOutputTokens - sent);
  const n = Math.min(chunk.length, room);
  for (let i = 0; i < n; i++) {
    if (stopTokens.has(chunk[i])) return { tokens: chunk.slice(0, i + 1), finish: FinishReason.FINISH_REASON_STOP };
  }
  const tokens = n === chunk.length ? chunk : chunk.slice(0, n);
  return sent + n >= maxOutputTokens ? { tokens, finish: FinishReason.FINISH_REASON_LENGTH } : { tokens };
}

/** The effective output limit: the request's when set (non-zero), never above the worker's. */
export function effectiveMaxOutputTokens(requested: number, workerMax: number): number {
  return requested > 0 ? Math.min(requested, workerMax) : workerMax;
}
