import type { inferenceV1 } from '@fastloop/proto';
import type { WebSocketTimingEvent } from '@fastloop/protocol';

/** One Generate call as the edge saw it, and as its engine reported it (`engine_elapsed_ms`). */
interface EngineCall {
  /** `performance.now()` when the call was sent. */
  readonly sentAt: number;
  /** `performance.now()` at its first and last token; undefined before any. */
  firstAt?: number;
  /** `performance.now()` when its first chunk reached the edge, which reads it after the input verdict. */
  arrivedAt?: number;
  lastAt?: number;
  /** The engine's own elapsed time at its first and last token chunk. */
  firstElapsed: number;
  lastElapsed: number;
  /** Tokens of its first chunk, and after it. */
  firstTokens: number;
  laterTokens: number;
}

/**
 * A turn's timing split for the opt-in `responsesapi.websocket_timing` event: the API's own time,
 * the engine's time to first token and between tokens (as the engine reports it and as the edge
 * received it), summed over the turn's Generate calls. Made only for a client that asked for it.
 */
export class TurnTiming {
  private readonly calls: EngineCall[] = [];

  /** @param receivedAt `performance.now()` when the request reached the edge (before its parse). */
  constructor(private readonly receivedAt: number) {}

  /** A Generate call is sent now. */
  callSent(): void {
    this.calls.push({ sentAt: performance.now(), firstElapsed: 0, lastElapsed: 0, firstTokens: 0, laterTokens: 0 });
  }

  /**
   * The current call's first chunk reached the edge now. It is read (and given to {@link chunk})
   * only once the input verdict is in: without this mark, the engine's time to first token as the
   * edge saw it would count a late verdict too.
   */
  firstArrived(): void {
    const call = this.calls.at(-1);
    if (call && call.arrivedAt === undefined) call.arrivedAt = performance.now();
  }

  /** A response of the current call reached the edge now: its first with tokens is {@link firstArrived}. */
  arrived(response: inferenceV1.GenerateResponse): void {
    if (response.event?.$case === 'chunk' && response.event.value.tokens.length > 0) this.firstArrived();
  }

  /** A token chunk of the current call was read now. */
  chunk(chunk: inferenceV1.TokenChunk): void {
    const call = this.calls.at(-1);
    if (!call || chunk.tokens.length === 0) return;
    const now = performance.now();
    if (call.firstAt === undefined) {
      call.firstAt = now;
      call.firstElapsed = chunk.engineElapsedMs;
      call.firstTokens = chunk.tokens.length;
    } else call.laterTokens += chunk.tokens.length;
    call.lastAt = now;
    call.lastElapsed = chunk.engineElapsedMs;
  }

  /** The event for `responseId`, measured up to now. */
  event(responseId: string): WebSocketTimingEvent {
    const now = performance.now();
    const totalMs = now - this.receivedAt;
    let engineTotal = 0;
    let engineTtft = 0;
    let edgeTtft = 0;
    let engineGaps = 0;
    let edgeGaps = 0;
    let gaps = 0;
    for (const c of this.calls) {
      if (c.firstAt === undefined) continue;
      engineTotal += c.lastElapsed;
      engineTtft += c.firstElapsed;
      edgeTtft += (c.arrivedAt ?? c.firstAt) - c.sentAt;
      engineGaps += c.lastElapsed - c.firstElapsed;
      edgeGaps += (c.lastAt ?? c.firstAt) - c.firstAt;
      gaps += c.laterTokens;
    }
    const first = this.calls[0];
    return {
      type: 'responsesapi.websocket_timing',
      timing_metrics: {
        response_id: responseId,
        total_turn_time_s: round(totalMs / 1000, 6),
        responses_duration_excl_engine_and_client_tool_time_ms: round(Math.max(0, totalMs - engineTotal)),
        pre_inference_ms: round((first ? first.sentAt : now) - this.receivedAt),
        engine_service_total_ms: round(engineTotal),
        engine_service_ttft_total_ms: round(engineTtft),
        engine_iapi_ttft_total_ms: round(edgeTtft),
        engine_service_tbt_across_engine_calls_ms: round(gaps > 0 ? engineGaps / gaps : 0),
        engine_iapi_tbt_across_engine_calls_ms: round(gaps > 0 ? edgeGaps / gaps : 0),
        num_engine_calls: this.calls.length,
      },
    };
  }
}

/** Microsecond precision is what a client can use; more is noise in the frame. */
function round(ms: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(ms * f) / f;
}
