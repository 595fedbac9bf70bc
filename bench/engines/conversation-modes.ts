import WebSocket from 'ws';
import type { Stack } from '@fastloop/launcher';
import { TIMING_HEADER } from '@fastloop/protocol';
import { decodeRate, type Mode } from './engine-bench-report';

/** What one turn saw from the client's side. */
export interface TurnResult {
  responseId: string;
  outputText: string;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  /** Request sent → first output delta (text or call arguments). */
  ttftMs: number;
  tokensPerSecond: number;
  /** The response's output items. */
  output: Array<Record<string, any>>;
  /** The edge's `responsesapi.websocket_timing` split of the turn, when the socket asked for it. */
  timing?: TurnTiming;
}

/** What the edge's timing event says of the way to the first token (its single Generate call). */
export interface TurnTiming {
  /** Request at the edge → its Generate call sent (parse, route, render, Classify sent). */
  edgeBeforeGenerateMs: number;
  /** The worker's own time to its first chunk (engine prefill and first token included). */
  workerTtftMs: number;
  /** Generate call sent → that chunk at the edge. */
  generateTtftMs: number;
}

type Event = { type: string; [k: string]: any };

/** Times one response from its events: the first text delta, the terminal event, the final usage. */
class TurnClock {
  private readonly sentAt = performance.now();
  private first?: number;
  private last?: number;
  private text = '';
  private timing?: TurnTiming;

  see(e: Event): TurnResult | undefined {
    if (e.type === 'responsesapi.websocket_timing') {
      const m = e.timing_metrics;
      if (m.num_engine_calls === 1)
        this.timing = {
          edgeBeforeGenerateMs: m.pre_inference_ms,
          workerTtftMs: m.engine_service_ttft_total_ms,
          generateTtftMs: m.engine_iapi_ttft_total_ms,
        };
      return undefined;
    }
    if (e.type === 'response.output_text.delta' || e.type === 'response.function_call_arguments.delta') {
      const now = performance.now();
      this.first ??= now;
      this.last = now;
      if (e.type === 'response.output_text.delta') this.text += e.delta as string;
    }
    if (e.type === 'error' || e.type === 'response.failed')
      throw new Error(`turn failed: ${JSON.stringify(e).slice(0, 300)}`);
    if (e.type !== 'response.completed' && e.type !== 'response.incomplete') return undefined;
    // The decode rate runs to the terminal event: deltas may carry several tokens when the relay
    // coalesces, and the edge's own work after the last token is part of what a client waits for.
    this.last = performance.now();
    const r = e.response;
    const outputTokens = r.usage.output_tokens as number;
    return {
      responseId: r.id,
      outputText: this.text,
      inputTokens: r.usage.input_tokens,
      cachedTokens: r.usage.input_tokens_details.cached_tokens,
      outputTokens,
      ttftMs: (this.first ?? performance.now()) - this.sentAt,
      tokensPerSecond: decodeRate(outputTokens, this.first ?? 0, this.last ?? 0),
      output: r.output,
      timing: this.timing,
    };
  }
}

/** One WebSocket to fastloop, one response at a time. */
export class ResponsesSocket {
  private pending?: { clock: TurnClock; resolve: (r: TurnResult) => void; reject: (e: Error) => void };

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const p = this.pending;
      if (!p) return;
      try {
        const done = p.clock.see(JSON.parse(String(data)) as Event);
        if (done) {
          this.pending = undefined;
          p.resolve(done);
        }
      } catch (err) {
        this.pending = undefined;
        p.reject(err as Error);
      }
    });
  }

  /** `timing` asks the edge for each turn's `responsesapi.websocket_timing` event (one more frame). */
  static open(stack: Stack, { timing = false } = {}): Promise<ResponsesSocket> {
    const headers: Record<string, string> = { Authorization: `Bearer ${stack.apiKey}` };
    if (timing) headers[TIMING_HEADER] = 'true';
    const ws = new WebSocket(`${stack.wsUrl}`, { headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new ResponsesSocket(ws)));
      ws.once('error', reject);
    });
  }

  send(body: Record<string, unknown>): Promise<TurnResult> {
    return new Promise<TurnResult>((resolve, reject) => {
      this.pending = { clock: new TurnClock(), resolve, reject };
      this.ws.send(JSON.stringify({ type: 'response.create', ...body, store: false }));
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** The prompts of the benchmark conversation, one per turn. */
export const USER_TURNS = [
  'Once upon a time there was a cat.',
  'What did the cat do next?',
  'Then a dog came.',
  'Where did they go?',
  'Tell me more.',
  'And then?',
];

/** What every request of a conversation carries. */
export interface TurnSettings {
  model: string;
  instructions: string;
  maxOutputTokens: number;
}

/**
 * One conversation through fastloop, every mode over the same transport (a WebSocket of its own):
 * `ws` continues with only the new message and `previous_response_id`; `resend` sends the whole
 * conversation each turn (what a stateless client does); `resend-cold` does too under a per-turn
 * instruction nonce, so nothing it sends was seen before. Sampling is greedy (temperature 0), so
 * every warm mode sees the same tokens.
 */
export class FastloopConversation {
  private readonly history: Array<Record<string, unknown>> = [];
  private previous?: string;

  private constructor(
    readonly mode: Exclude<Mode, 'direct'>,
    private readonly socket: ResponsesSocket,
    private readonly settings: TurnSettings,
  ) {}

  static async open(
    stack: Stack,
    mode: Exclude<Mode, 'direct'>,
    settings: TurnSettings,
  ): Promise<FastloopConversation> {
    // The continuation's TTFT is split against the model alone (engine-bench-report.ts).
    return new FastloopConversation(mode, await ResponsesSocket.open(stack, { timing: mode === 'ws' }), settings);
  }

  async turn(text: string, nonce: string): Promise<TurnResult> {
    const user = { role: 'user', content: text };
    this.history.push(user);
    const common = {
      model: this.settings.model,
      instructions:
        this.mode === 'resend-cold' ? `${this.settings.instructions} (${nonce})` : this.settings.instructions,
      max_output_tokens: this.settings.maxOutputTokens,
      temperature: 0,
    };
    const r =
      this.mode === 'ws'
        ? await this.socket.send({ ...common, input: [user], previous_response_id: this.previous })
        : await this.socket.send({ ...common, input: this.history });
    this.previous = r.responseId;
    this.history.push({ role: 'assistant', content: r.outputText });
    return r;
  }

  close(): void {
    this.socket.close();
  }
}
