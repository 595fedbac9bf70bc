import type { TurnTimingMetrics } from '../agent-loop/clients/turn-client';
import { percentile } from '../agent-loop/summary';

/** One turn's first output as the client timed it, with the edge's timing event of the same turn. */
export interface TimedTurn {
  firstOutputMs: number;
  timing: TurnTimingMetrics;
}

/** Where one band of turns' time to first output went, ms (means over the band's turns). */
export interface FirstOutputParts {
  /** Turns in the band. */
  turns: number;
  /** The client's figure: send → first `response.output_item.added`. */
  firstOutputMs: number;
  /** The edge had the request → its Generate call left (parse, validate, route, render, queue). */
  edgeBeforeGenerateMs: number;
  /** The worker's own time to the first chunk, as it reports it (the engine's TTFT and the worker's waits). */
  workerMs: number;
  /** Generate sent → first chunk at the edge, less the worker's own: the hop both ways and both event loops' waits for it. */
  generateHopMs: number;
  /**
   * The rest of the client's figure: its frame to the edge and the first item back (both sockets,
   * the client's and the edge's event-loop waits), and an input verdict that came after the first token.
   */
  outsideMs: number;
}

/** The parts at the median and in the tail (the turns at or past the p99 of first output). */
export interface FirstOutputSplit {
  median: FirstOutputParts;
  tail: FirstOutputParts;
}

/**
 * Splits time to first output with the edge's timing events: the parts of the turns around the
 * median (the middle tenth) and of the turns at or past the 99th percentile. Turns with more than
 * one Generate call (a retry) are left out: their engine figures are sums. Undefined without turns.
 */
export function splitFirstOutput(turns: readonly TimedTurn[]): FirstOutputSplit | undefined {
  const single = turns.filter((t) => t.timing.num_engine_calls === 1 && Number.isFinite(t.firstOutputMs));
  if (single.length === 0) return undefined;
  const sorted = [...single].sort((a, b) => a.firstOutputMs - b.firstOutputMs);
  const at = (q: number) => Math.min(sorted.length - 1, Math.floor(q * sorted.length));
  const median = sorted.slice(at(0.45), Math.max(at(0.45) + 1, at(0.55)));
  const tail = sorted.slice(at(0.99));
  return { median: partsOf(median), tail: partsOf(tail) };
}

function partsOf(band: readonly TimedTurn[]): FirstOutputParts {
  const mean = (f: (t: TimedTurn) => number) => band.reduce((sum, t) => sum + f(t), 0) / band.length;
  return {
    turns: band.length,
    firstOutputMs: mean((t) => t.firstOutputMs),
    edgeBeforeGenerateMs: mean((t) => t.timing.pre_inference_ms),
    workerMs: mean((t) => t.timing.engine_service_ttft_total_ms),
    generateHopMs: mean((t) => t.timing.engine_iapi_ttft_total_ms - t.timing.engine_service_ttft_total_ms),
    outsideMs: mean((t) => t.firstOutputMs - t.timing.pre_inference_ms - t.timing.engine_iapi_ttft_total_ms),
  };
}

/** A turn's first output, with its place in its conversation and in the level. */
export interface PlacedTurn {
  /** 1 for a conversation's opening turn (its whole prompt, on a new socket). */
  turn: number;
  /** When the turn was sent, seconds after the level began. */
  sentAtS: number;
  firstOutputMs: number;
}

/** First output of one kind of turn, ms. */
export interface FirstOutputQuantiles {
  turns: number;
  p50Ms: number;
  p99Ms: number;
}

/**
 * First output of opening turns (turn 1: the whole ~2k-token prompt rendered, classified and sent
 * to a worker), of continuations (turns 2+: only what is new), and of every turn sent after the
 * level's first fifth: at its start all loops open a conversation within a second, a burst of whole
 * prompts that independent agents would not make together. The level's own p50/p99 take all turns.
 */
export interface FirstOutputByKind {
  opening: FirstOutputQuantiles;
  continuation: FirstOutputQuantiles;
  afterStart: FirstOutputQuantiles;
}

/** Splits a level's turns by kind (see {@link FirstOutputByKind}); `durationS` is the level's. */
export function firstOutputByKind(turns: readonly PlacedTurn[], durationS: number): FirstOutputByKind {
  const of = (band: readonly PlacedTurn[]): FirstOutputQuantiles => {
    const ms = band.map((t) => t.firstOutputMs);
    return { turns: ms.length, p50Ms: percentile(ms, 0.5), p99Ms: percentile(ms, 0.99) };
  };
  return {
    opening: of(turns.filter((t) => t.turn === 1)),
    continuation: of(turns.filter((t) => t.turn > 1)),
    afterStart: of(turns.filter((t) => t.sentAtS >= durationS / 5)),
  };
}
