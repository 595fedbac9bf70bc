import type { Mode } from '../options';
import { CLIENT_TURN_MARK, hopTrace } from '@fastloop/service-kit';

/** The Response object of a terminal event, loosely typed (the benchmark reads a few fields). */
export interface ResponseLike {
  id: string;
  status?: string;
  output: Record<string, unknown>[];
  usage: { input_tokens: number; output_tokens: number; input_tokens_details?: { cached_tokens?: number } };
  error?: { code?: string; message?: string } | null;
}

/** What one request looked like from the client, times in ms since just before the body was serialized. */
export interface TurnResult {
  response: ResponseLike;
  /** Bytes of the request body / frame sent. */
  requestBytes: number;
  /** `response.created` arrived. */
  createdMs: number;
  /** The first `response.output_item.added` arrived: the client's time to first token. */
  firstOutputMs: number;
  /** The terminal event arrived. */
  doneMs: number;
  /** The edge's `responsesapi.websocket_timing` split of this turn, when the client asked for it. */
  timing?: TurnTimingMetrics;
}

/** The fields of the edge's `responsesapi.websocket_timing` event the benchmarks read (ms). */
export interface TurnTimingMetrics {
  /** The edge had the request (before its parse) → its first Generate call was sent. */
  pre_inference_ms: number;
  /** The worker's own time to its first chunk (`engine_elapsed_ms`), over the turn's calls. */
  engine_service_ttft_total_ms: number;
  /** Generate call sent → first chunk at the edge, over the turn's calls. */
  engine_iapi_ttft_total_ms: number;
  num_engine_calls: number;
}

const TIMING_EVENT = 'responsesapi.websocket_timing';

/** One transport's way of running a `response.create` and timing its events. */
export interface TurnClient {
  readonly mode: Mode;
  /** Sends one request body (a `response.create` without `type`) and waits for its terminal event. */
  send(body: Record<string, unknown>): Promise<TurnResult>;
  /** Closes the connection (idempotent). */
  close(): Promise<void>;
}

/** Thrown when a turn does not end in `response.completed`. */
export class TurnError extends Error {
  override readonly name = 'TurnError';
}

/** How long one turn may take before the benchmark gives up (stateless 65 TPS turns are slow). */
export const TURN_TIMEOUT_MS = 180_000;

const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete', 'error']);

/**
 * Follows the events of one response as they arrive and stamps the ones the benchmark times.
 * Transports call {@link onEvent} with the event type and a way to get the parsed event (parsed
 * only when needed: the terminal event and errors).
 */
export class EventClock {
  private readonly t0 = performance.now();
  private createdMs = NaN;
  private firstOutputMs = NaN;
  private timing: TurnTimingMetrics | undefined;
  private settled = false;
  private readonly timer: NodeJS.Timeout;
  readonly done: Promise<TurnResult>;
  private resolve!: (r: TurnResult) => void;
  private reject!: (e: Error) => void;

  constructor(
    private readonly mode: Mode,
    private requestBytes = 0,
  ) {
    this.done = new Promise<TurnResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.timer = setTimeout(
      () => this.fail(new TurnError(`${mode}: no terminal event within ${TURN_TIMEOUT_MS} ms`)),
      TURN_TIMEOUT_MS,
    );
    hopTrace.mark(CLIENT_TURN_MARK);
  }

  /** Records the size of what was sent (after the clock started, since serializing is part of the turn). */
  sent(bytes: number): void {
    this.requestBytes = bytes;
  }

  /** Handles one server event; returns true once the response is over. */
  onEvent(type: string, parse: () => Record<string, any>): boolean {
    if (this.settled) return true;
    const now = performance.now() - this.t0;
    if (type === 'response.created') this.createdMs = now;
    else if (type === 'response.output_item.added' && Number.isNaN(this.firstOutputMs)) {
      this.firstOutputMs = now;
      hopTrace.mark('client.first_item');
    } else if (type === TIMING_EVENT) this.timing = parse().timing_metrics as TurnTimingMetrics;
    if (!TERMINAL.has(type)) return false;
    const event = parse();
    if (type !== 'response.completed') {
      const err = event.error ?? event.response?.error;
      this.fail(new TurnError(`${this.mode}: ${type}${err ? ` ${err.code ?? ''}: ${err.message ?? ''}` : ''}`));
      return true;
    }
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve({
      response: event.response as ResponseLike,
      requestBytes: this.requestBytes,
      createdMs: this.createdMs,
      firstOutputMs: this.firstOutputMs,
      doneMs: now,
      ...(this.timing && { timing: this.timing }),
    });
    return true;
  }

  /** Ends the turn with `err` (transport failure, bad event), once. */
  fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.reject(err);
  }
}
