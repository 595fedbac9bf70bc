import WebSocket from 'ws';
import type { Stack } from '@fastloop/launcher';
import { decodeRate, type EngineTurn, type Mode } from './engine-bench-report';

/** What one turn saw from the client's side. */
interface TurnResult {
  responseId: string;
  outputText: string;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  ttftMs: number;
  tokensPerSecond: number;
}

type Event = { type: string; [k: string]: any };

/** Times one response from its events: first and last text delta, then the final usage. */
class TurnClock {
  private readonly sentAt = performance.now();
  private first?: number;
  private last?: number;
  private text = '';

  see(e: Event): TurnResult | undefined {
    if (e.type === 'response.output_text.delta') {
      const now = performance.now();
      this.first ??= now;
      this.last = now;
      this.text += e.delta as string;
    }
    if (e.type === 'error' || e.type === 'response.failed')
      throw new Error(`turn failed: ${JSON.stringify(e).slice(0, 300)}`);
    if (e.type !== 'response.completed' && e.type !== 'response.incomplete') return undefined;
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
    };
  }
}

/** A WebSocket-mode conversation: each turn sends only its new message, chained by id. */
export class WsConversation {
  private readonly ws: WebSocket;
  private previous?: string;
  private pending?: { clock: TurnClock; resolve: (r: TurnResult) => void; reject: (e: Error) => void };

  private constructor(ws: WebSocket) {
    this.ws = ws;
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

  static open(stack: Stack): Promise<WsConversation> {
    const ws = new WebSocket(`${stack.wsUrl}`, { headers: { Authorization: `Bearer ${stack.apiKey}` } });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new WsConversation(ws)));
      ws.once('error', reject);
    });
  }

  turn(body: Record<string, unknown>): Promise<TurnResult> {
    return new Promise((resolve, reject) => {
      this.pending = { clock: new TurnClock(), resolve, reject };
      this.ws.send(
        JSON.stringify({ type: 'response.create', ...body, previous_response_id: this.previous, store: false }),
      );
    }).then((r) => {
      this.previous = (r as TurnResult).responseId;
      return r as TurnResult;
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** One stateless HTTP turn streamed over SSE: the whole conversation is sent again. */
export async function httpTurn(stack: Stack, body: Record<string, unknown>): Promise<TurnResult> {
  const clock = new TurnClock();
  const res = await fetch(`${stack.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true, store: false }),
  });
  if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = frame.split('\n').find((l) => l.startsWith('data: '));
      if (!data) continue;
      const done = clock.see(JSON.parse(data.slice(6)) as Event);
      if (done) return done;
    }
  }
  throw new Error('stream ended without a final event');
}

/** The prompts of the benchmark conversation, one per turn. */
const USER_TURNS = [
  'Once upon a time there was a cat.',
  'What did the cat do next?',
  'Then a dog came.',
  'Where did they go?',
  'Tell me more.',
  'And then?',
];

/** Runs one conversation of one mode until its prompt reaches `maxInputTokens` (or `maxTurns`). */
export async function runConversation(
  stack: Stack,
  engine: string,
  mode: Mode,
  opts: {
    model: string;
    maxInputTokens: number;
    maxTurns: number;
    maxOutputTokens: number;
    evaluated: () => Promise<number | undefined>;
  },
): Promise<EngineTurn[]> {
  const turns: EngineTurn[] = [];
  const history: Array<Record<string, unknown>> = [];
  const ws = mode === 'ws' ? await WsConversation.open(stack) : undefined;
  try {
    for (let turn = 1; turn <= opts.maxTurns; turn++) {
      const user = { role: 'user', content: USER_TURNS[(turn - 1) % USER_TURNS.length] };
      history.push(user);
      const instructions =
        mode === 'resend-cold' ? `Story ${turn}-${Math.random().toString(36).slice(2, 8)}.` : 'Story.';
      const common = { model: opts.model, instructions, max_output_tokens: opts.maxOutputTokens, temperature: 0.8 };
      const before = await opts.evaluated();
      const r = ws ? await ws.turn({ ...common, input: [user] }) : await httpTurn(stack, { ...common, input: history });
      const after = await opts.evaluated();
      history.push({ role: 'assistant', content: r.outputText });
      turns.push({
        engine,
        mode,
        turn,
        inputTokens: r.inputTokens,
        cachedTokens: r.cachedTokens,
        evaluatedTokens: before === undefined || after === undefined ? undefined : after - before,
        outputTokens: r.outputTokens,
        ttftMs: r.ttftMs,
        tokensPerSecond: r.tokensPerSecond,
      });
      if (r.inputTokens + 2 * (r.outputTokens + 40) > opts.maxInputTokens) break;
    }
  } finally {
    ws?.close();
  }
  return turns;
}
