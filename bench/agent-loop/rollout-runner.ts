import { openClient, type Endpoints, type TurnClient } from './clients/open-client';
import { Conversation } from './conversation';
import { engineTiming, type SimPaceSettings } from './engine-model';
import { scrapeTurnMetrics, turnDelta, type TurnMetrics } from './metrics-scrape';
import type { Mode } from './options';
import { turnOrder } from './turn-order';
import type { Workload } from './workload';

/**
 * How a rollout ran: `interleaved` with the other modes' rollouts turn by turn on one stack (the
 * side-by-side comparison), or `solo`, alone on a fresh stack (what one agent alone would see).
 */
export type Phase = 'interleaved' | 'solo';

/** Everything measured about one turn of one mode. Times in ms. */
export interface TurnRecord {
  mode: Mode;
  tps: number;
  phase: Phase;
  rep: number;
  /** 0-based position of this mode in its turn's order (0 = went first). */
  position: number;
  /** 1-based. */
  turn: number;
  outputType: string;
  requestBytes: number;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  /** Client: building and sending the request → terminal event (what the rollout waits for). */
  wallMs: number;
  /** Client: send → `response.created`. */
  createdMs: number;
  /** Client: send → first `response.output_item.added` (client-observed TTFT). */
  firstOutputMs: number;
  /** Client: send → `response.completed`. */
  doneMs: number;
  /** Engine model: SIM_TTFT_MS + uncached prompt tokens / prefill speed. */
  engineTtftMs: number;
  /** Engine model: when the token that opens the first output item left the engine. */
  engineFirstOutputMs: number;
  /** The worker's own report of when it sent the chunk that opened the first output item; NaN if unknown. */
  engineMeasuredFirstOutputMs: number;
  /** The edge's own view of what it added before the first output item (`fastloop_edge_first_item_overhead_seconds`); NaN if unknown. */
  edgeOverheadMs: number;
  /** The inference worker's own measured TTFT (`inference_ttft_seconds`); NaN unless one Generate call ran. */
  engineMeasuredTtftMs: number;
  /**
   * What the stack around the engine added: firstOutputMs − the engine's own time to the token that
   * opens the first output item, as the worker reported it on that chunk (engine_elapsed_ms, via
   * the edge's `fastloop_edge_engine_first_item_seconds`). Falls back to the worker's measured TTFT
   * plus the modelled decode to that token, then to the model alone.
   */
  overheadMs: number;
  /** firstOutputMs − engineFirstOutputMs: the overhead against the timing model alone, which also charges the worker's own lateness (timers, prompt assembly) to the stack. */
  modelOverheadMs: number;
  /** The edge's own stage timings for this turn (from /metrics), stage → ms. */
  stagesMs: Record<string, number>;
  /** The inference worker's own time for this turn (`inference_worker_seconds`), part → ms: prepare, engine_read, keep. */
  workerMs?: Record<string, number>;
}

/** Options of {@link runRound}. */
export interface RoundOptions {
  modes: readonly Mode[];
  /** Each mode's own workload (its own nonce, so no cache serves one mode with another's work). */
  workloads: ReadonlyMap<Mode, Workload>;
  phase: Phase;
  /** Turn budget per rollout; a rollout still calling tools at the last turn is cut there. */
  turns: number;
  /** Where the stack listens; `apiKey` is replaced per mode by `apiKeys` (one tenant per mode). */
  endpoints: Endpoints;
  apiKeys: Readonly<Record<Mode, string>>;
  /** Admin ports (/metrics) of the edge and the inference worker. */
  adminPorts: { edge: number; inference: number };
  pace: SimPaceSettings;
  rep: number;
  /** Called before each turn (progress output). */
  onTurn?: (mode: Mode, turn: number) => void;
}

/**
 * Runs one rollout per mode, interleaved by turn (turn t of every mode, then turn t+1), one
 * request at a time, so machine noise and warm-up hit every mode alike. The order within a turn
 * follows a Williams design over the whole run (turn-order.ts): every mode goes first, and follows
 * every other mode, equally often. /metrics is scraped between requests (never during one), so
 * each turn's stage timings are exactly that turn's.
 */
export async function runRound(options: RoundOptions): Promise<TurnRecord[]> {
  const { modes, turns, endpoints, pace } = options;
  const clients = new Map<Mode, TurnClient>();
  const records: TurnRecord[] = [];
  try {
    for (const mode of modes)
      clients.set(mode, await openClient(mode, { ...endpoints, apiKey: options.apiKeys[mode] }));
    const conversations = new Map(modes.map((m) => [m, new Conversation(m, options.workloads.get(m)!)] as const));
    const scrape = () => scrapeTurnMetrics(options.adminPorts.edge, options.adminPorts.inference);
    let snapshot: TurnMetrics = await scrape();
    for (let turn = 1; turn <= turns; turn++) {
      const order = turnOrder(modes, options.rep, turn, turns);
      for (let position = 0; position < order.length; position++) {
        const mode = order[position];
        const conv = conversations.get(mode)!;
        if (conv.done) continue;
        options.onTurn?.(mode, turn);
        const t0 = performance.now();
        const result = await clients.get(mode)!.send(conv.nextBody());
        const wallMs = performance.now() - t0;
        conv.accept(result.response, turn);
        if (turn === turns) conv.finish();
        const after = await scrape();
        const delta = turnDelta(snapshot, after);
        snapshot = after;
        const usage = result.response.usage;
        const engine = engineTiming(usage, result.response.output[0] ?? {}, pace);
        const measuredTtftMs = delta.generateCalls === 1 ? delta.engineTtftMs : NaN;
        // The engine's own time to the token that opened the first item: as it reported it with
        // that chunk; else its measured TTFT plus the modelled decode; else the model alone.
        const engineFirstOutputMs = Number.isFinite(delta.engineFirstItemMs)
          ? delta.engineFirstItemMs
          : Number.isFinite(measuredTtftMs)
            ? measuredTtftMs + (engine.firstEventMs - engine.ttftMs)
            : engine.firstEventMs;
        records.push({
          mode,
          tps: pace.tokensPerSecond,
          phase: options.phase,
          rep: options.rep,
          position,
          turn,
          outputType: String(result.response.output[0]?.type ?? 'none'),
          requestBytes: result.requestBytes,
          inputTokens: usage.input_tokens,
          cachedTokens: usage.input_tokens_details?.cached_tokens ?? 0,
          outputTokens: usage.output_tokens,
          wallMs,
          createdMs: result.createdMs,
          firstOutputMs: result.firstOutputMs,
          doneMs: result.doneMs,
          engineTtftMs: engine.ttftMs,
          engineFirstOutputMs: engine.firstEventMs,
          engineMeasuredTtftMs: measuredTtftMs,
          engineMeasuredFirstOutputMs: delta.engineFirstItemMs,
          edgeOverheadMs: delta.edgeOverheadMs,
          overheadMs: result.firstOutputMs - engineFirstOutputMs,
          modelOverheadMs: result.firstOutputMs - engine.firstEventMs,
          stagesMs: delta.stagesMs,
          workerMs: delta.workerMs,
        });
      }
    }
  } finally {
    await Promise.all([...clients.values()].map((c) => c.close().catch(() => undefined)));
  }
  return records;
}
