import OpenAI from 'openai';
import type { ResponseCreateParamsStreaming } from 'openai/resources/responses/responses';
import { ResponsesWS } from 'openai/resources/responses/ws';
import { Conversation, type Item } from './conversation';

/** How an agent talks to the fleet. */
export interface AgentSpec {
  readonly name: string;
  readonly transport: 'ws' | 'http';
  readonly store: boolean;
  readonly apiKey: string;
  readonly tenant: string;
}

/** One attempt at a turn, as the client saw it. */
export interface TurnRecord {
  readonly agent: string;
  readonly transport: 'ws' | 'http';
  readonly store: boolean;
  readonly startedAt: number;
  readonly endedAt: number;
  /** Send → first output item (ms), for a turn that produced one. */
  readonly firstOutputMs?: number;
  /**
   * `completed`; `failed` (an error, a failed response, or a stream cut after response.created);
   * `not_found` (previous_response_not_found: the chain's edge is gone; the agent resends the full
   * input); `resent` (the connection went before the server started the turn: sent again).
   */
  readonly outcome: 'completed' | 'failed' | 'not_found' | 'resent';
  readonly error?: string;
  readonly usage?: { input: number; cached: number; output: number };
  /** The turn's socket was a reconnect (its predecessor was closed by the server). */
  readonly afterReconnect?: boolean;
  readonly closeCode?: number;
}

type Event = { type: string; [k: string]: any };

/** A turn's attempt before the agent's own fields are added, and the response when it completed. */
type Attempt = Omit<TurnRecord, 'agent' | 'transport' | 'store' | 'endedAt'> & {
  readonly response?: { id: string; output: Item[] };
};

/** What a turn in flight waits for. */
interface InFlight {
  readonly startedAt: number;
  created: boolean;
  /** Sent while the SDK was reconnecting: it queued the frame and sends it on the new socket itself. */
  queuedBySdk: boolean;
  firstOutputMs?: number;
  resolve: (r: Attempt) => void;
}

/**
 * An agent loop over WebSocket mode with the official SDK's ResponsesWS and its reconnect option:
 * a server closing with 1001 (draining) is recoverable, the SDK reconnects (through the load
 * balancer, to another edge) and the agent carries on — by id when `store` is true (the new edge loads
 * the chain from Redis), by resending the full input when the new edge answers
 * previous_response_not_found (`store: false`).
 */
export class WsAgent {
  private readonly ws: ResponsesWS;
  private current: InFlight | undefined;
  private reconnects = 0;
  private reconnectedSinceLastTurn = false;
  private lastCloseCode: number | undefined;
  private closed = false;
  /** Between the SDK's 'reconnecting' and 'reconnected': a send() is queued, not sent. */
  private reconnecting = false;

  constructor(
    readonly spec: AgentSpec,
    baseURL: string,
  ) {
    const client = new OpenAI({ baseURL, apiKey: spec.apiKey, maxRetries: 0 });
    this.ws = new ResponsesWS(client, {
      reconnect: {
        onReconnecting: (e) => {
          this.lastCloseCode = e.closeCode;
        },
        maxRetries: 30,
        initialDelay: 50,
        maxDelay: 500,
      },
    });
    this.ws.on('event', (e) => this.onEvent(e as Event));
    this.ws.on('error', (err) => {
      // Server error frames also arrive as 'event'; this is a transport failure.
      if ((err as { error?: unknown }).error || this.closed) return;
      // A create sent as the server's close frame arrives finds the socket closed: nothing was sent,
      // and the reconnect that follows the close sends it again (see 'reconnected').
      if (err.message === 'cannot send on a closed WebSocket' && this.current && !this.current.created) return;
      this.settle({ outcome: 'failed', error: err.message });
    });
    this.ws.on('reconnecting', () => {
      if (!this.reconnecting) this.reconnects++;
      this.reconnecting = true;
      const c = this.current;
      // The server closes a draining connection only between responses (its running one finished):
      // a turn it never started is sent again on the next connection, one it started is lost.
      if (c?.created)
        this.settle({ outcome: 'failed', error: `connection closed mid-response (${this.lastCloseCode})` });
    });
    this.ws.on('reconnected', () => {
      this.reconnecting = false;
      this.reconnectedSinceLastTurn = true;
      const c = this.current;
      if (c && !c.created && !c.queuedBySdk) {
        this.current = undefined;
        c.resolve({ startedAt: c.startedAt, outcome: 'resent', closeCode: this.lastCloseCode });
      }
    });
  }

  get reconnectCount(): number {
    return this.reconnects;
  }

  /** Plays turns until `stop` is aborted; every attempt goes to `record`. */
  async run(stop: AbortSignal, record: (r: TurnRecord) => void, thinkMs: () => number): Promise<void> {
    const conversation = new Conversation(this.spec.name);
    let mode: 'continue' | 'full' = 'continue';
    while (!stop.aborted) {
      const afterReconnect = this.reconnectedSinceLastTurn;
      this.reconnectedSinceLastTurn = false;
      const r = await this.turn(conversation.body(this.spec.store, mode));
      const full: TurnRecord = {
        agent: this.spec.name,
        transport: 'ws',
        store: this.spec.store,
        endedAt: Date.now(),
        afterReconnect,
        ...r,
      };
      record(full);
      if (r.outcome === 'completed') {
        conversation.accept((r as unknown as { response: { id: string; output: Item[] } }).response);
        mode = 'continue';
      } else if (r.outcome === 'not_found') {
        conversation.forgetChain();
        mode = 'full';
        continue;
      } else if (r.outcome === 'resent') continue;
      else {
        // A failure: start over from the full history, as a client would.
        conversation.forgetChain();
        mode = 'full';
      }
      await sleep(thinkMs());
    }
  }

  private turn(body: Record<string, unknown>): Promise<Omit<TurnRecord, 'agent' | 'transport' | 'store' | 'endedAt'>> {
    return new Promise((resolve) => {
      const startedAt = Date.now();
      const timer = setTimeout(
        () => this.settle({ outcome: 'failed', error: 'no terminal event within 60 s' }),
        60_000,
      );
      this.current = {
        startedAt,
        created: false,
        queuedBySdk: this.reconnecting,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      };
      this.ws.send({ type: 'response.create', ...body } as never);
    });
  }

  private onEvent(e: Event): void {
    const c = this.current;
    if (!c) return;
    if (e.type === 'response.created') c.created = true;
    else if (e.type === 'response.output_item.added' && c.firstOutputMs === undefined)
      c.firstOutputMs = Date.now() - c.startedAt;
    else if (e.type === 'response.completed') {
      const u = e.response.usage;
      this.settle({
        outcome: 'completed',
        usage: { input: u.input_tokens, cached: u.input_tokens_details?.cached_tokens ?? 0, output: u.output_tokens },
        response: e.response,
      });
    } else if (e.type === 'response.failed' || e.type === 'response.incomplete')
      this.settle({
        outcome: 'failed',
        error: `${e.type}: ${JSON.stringify(e.response?.error ?? e.response?.incomplete_details)}`,
      });
    else if (e.type === 'error') {
      const code = e.error?.code;
      this.settle(
        code === 'previous_response_not_found'
          ? { outcome: 'not_found', error: code }
          : { outcome: 'failed', error: `error ${code}: ${e.error?.message}` },
      );
    }
  }

  private settle(r: Omit<Attempt, 'startedAt'>): void {
    const c = this.current;
    if (!c) return;
    this.current = undefined;
    c.resolve({
      startedAt: c.startedAt,
      ...(c.firstOutputMs === undefined ? {} : { firstOutputMs: c.firstOutputMs }),
      ...r,
    });
  }

  close(): void {
    this.closed = true;
    this.ws.close({ code: 1000, reason: 'done' });
  }
}

/**
 * An agent loop over HTTP + SSE with the official SDK (no SDK retries: every failure counts): chains
 * by `previous_response_id` when `store` is true (any edge loads it from Redis), sends the full
 * input every turn when it is false.
 */
export class HttpAgent {
  private readonly client: OpenAI;

  constructor(
    readonly spec: AgentSpec,
    baseURL: string,
  ) {
    this.client = new OpenAI({ baseURL, apiKey: spec.apiKey, maxRetries: 0, timeout: 60_000 });
  }

  async run(stop: AbortSignal, record: (r: TurnRecord) => void, thinkMs: () => number): Promise<void> {
    const conversation = new Conversation(this.spec.name);
    while (!stop.aborted) {
      const startedAt = Date.now();
      let firstOutputMs: number | undefined;
      const base = { agent: this.spec.name, transport: 'http' as const, store: this.spec.store, startedAt };
      try {
        const body = conversation.body(this.spec.store, this.spec.store ? 'continue' : 'full');
        const stream = await this.client.responses.create({ ...body, stream: true } as ResponseCreateParamsStreaming);
        let completed: Event | undefined;
        for await (const e of stream as AsyncIterable<Event>) {
          if (e.type === 'response.output_item.added' && firstOutputMs === undefined)
            firstOutputMs = Date.now() - startedAt;
          if (e.type === 'response.completed') completed = e;
          if (e.type === 'response.failed' || e.type === 'response.incomplete' || e.type === 'error')
            throw new Error(
              `${e.type}: ${JSON.stringify(e.response?.error ?? e.error ?? e.response?.incomplete_details)}`,
            );
        }
        if (!completed) throw new Error('stream ended without response.completed');
        const u = completed.response.usage;
        record({
          ...base,
          endedAt: Date.now(),
          firstOutputMs,
          outcome: 'completed',
          usage: { input: u.input_tokens, cached: u.input_tokens_details?.cached_tokens ?? 0, output: u.output_tokens },
        });
        conversation.accept(completed.response);
      } catch (err) {
        record({
          ...base,
          endedAt: Date.now(),
          outcome: 'failed',
          error: err instanceof Error ? err.message : String(err),
        });
        conversation.forgetChain();
      }
      await sleep(thinkMs());
    }
  }

  close(): void {
    // Nothing open between turns: the SDK's keep-alive sockets close with the process.
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
