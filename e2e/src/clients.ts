import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import type { Stack } from '@fastloop/launcher';

let current: Stack | undefined;

/** Records the running stack for the helpers below (each e2e file starts its own in beforeAll). */
export function useStack(stack: Stack | undefined): void {
  current = stack;
}

/** Where the running stack is. */
export const stackEnv = () => {
  if (!current) throw new Error('no stack running');
  return { url: current.url, wsUrl: current.wsUrl, grpc: current.grpcAddress, key: current.apiKey, stack: current };
};

/** The official SDK pointed at fastloop, exactly as a user would (with `key`, the stack's first key by default). */
export function openaiClient(key = stackEnv().key): OpenAI {
  const { url } = stackEnv();
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
}

/**
 * `FASTLOOP_API_KEYS` giving each named tenant its own key (`sk-e2e-<tenant>`), so every test can
 * bill and be counted apart from the others.
 */
export function tenantKeys(...tenants: string[]): { env: string; key: (tenant: string) => string } {
  return { env: tenants.map((t) => `sk-e2e-${t}:${t}`).join(','), key: (t) => `sk-e2e-${t}` };
}

type ServerEvent = { type: string; sequence_number?: number; [k: string]: any };

/**
 * WebSocket mode through the SDK's ResponsesWS: sends one response.create and collects server
 * events until the terminal event (or an error event) of that response.
 */
export class WsConversation {
  readonly ws: ResponsesWS;
  private readonly waiting: ((e: ServerEvent) => void)[] = [];
  readonly all: ServerEvent[] = [];
  private buffer: ServerEvent[] = [];

  /** @param headers extra headers of the WebSocket upgrade (e.g. `x-responsesapi-include-timing-metrics`). */
  constructor(client = openaiClient(), headers?: Record<string, string>) {
    this.ws = new ResponsesWS(client, headers ? { headers } : undefined);
    this.ws.on('event', (e) => this.push(e as ServerEvent));
    // Server error frames arrive as 'event' too; 'error' alone is only for transport failures.
    this.ws.on('error', (err) => {
      if (!err.error) this.push({ type: 'error', error: { message: err.message } });
    });
  }

  private push(e: ServerEvent): void {
    this.all.push(e);
    const w = this.waiting.shift();
    if (w) w(e);
    else this.buffer.push(e);
  }

  next(timeoutMs = 20_000): Promise<ServerEvent> {
    const e = this.buffer.shift();
    if (e) return Promise.resolve(e);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('timed out waiting for a server event')), timeoutMs);
      this.waiting.push((ev) => {
        clearTimeout(t);
        resolve(ev);
      });
    });
  }

  /** Sends `body` as response.create; resolves with the events up to the terminal one or an error. */
  async create(body: Record<string, unknown>): Promise<ServerEvent[]> {
    this.ws.send({ type: 'response.create', ...body } as never);
    return this.collect();
  }

  async collect(): Promise<ServerEvent[]> {
    const events: ServerEvent[] = [];
    for (;;) {
      const e = await this.next();
      events.push(e);
      if (
        e.type === 'error' ||
        e.type === 'response.completed' ||
        e.type === 'response.failed' ||
        e.type === 'response.incomplete'
      )
        return events;
    }
  }

  close(): void {
    this.ws.close({ code: 1000, reason: 'done' });
  }
}

/** Checks the invariants every response's event sequence must hold; returns the terminal event. */
export function expectWellFormedStream(events: ServerEvent[]): ServerEvent {
  const seq = events.map((e) => e.sequence_number);
  seq.forEach((n, i) => expect(n).toBe(i));
  expect(events[0].type).toBe('response.created');
  expect(events[1].type).toBe('response.in_progress');
  const terminal = events[events.length - 1];
  expect(['response.completed', 'response.failed', 'response.incomplete']).toContain(terminal.type);
  expect(events.filter((e) => /^response\.(completed|failed|incomplete)$/.test(e.type))).toHaveLength(1);
  expect(events.some((e) => e.type === 'response.done')).toBe(false);
  expect(terminal.response.id).toBe(events[0].response.id);
  return terminal;
}
