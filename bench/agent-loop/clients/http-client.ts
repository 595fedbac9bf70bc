import { Agent, request } from 'node:http';
import type { Mode } from '../options';
import { EventClock, TurnError, type TurnClient, type TurnResult } from './turn-client';

/**
 * POST /v1/responses with `stream: true`, read as SSE, over node:http with a keep-alive agent (one
 * socket reused across turns, as an SDK would): the two HTTP modes differ only in the body.
 */
export class HttpTurnClient implements TurnClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });
  private readonly url: URL;

  constructor(
    readonly mode: Extract<Mode, 'http-stateless' | 'http-previous'>,
    baseUrl: string,
    private readonly apiKey: string,
  ) {
    this.url = new URL('/v1/responses', baseUrl);
  }

  send(body: Record<string, unknown>): Promise<TurnResult> {
    const clock = new EventClock(this.mode);
    const payload = Buffer.from(JSON.stringify({ ...body, stream: true }));
    clock.sent(payload.length);
    const req = request(
      this.url,
      {
        method: 'POST',
        agent: this.agent,
        headers: {
          'content-type': 'application/json',
          'content-length': payload.length,
          authorization: `Bearer ${this.apiKey}`,
          accept: 'text/event-stream',
        },
      },
      (res) => {
        res.setEncoding('utf8');
        if (res.statusCode !== 200) {
          let text = '';
          res.on('data', (c: string) => (text += c));
          res.on('end', () => clock.fail(new TurnError(`${this.mode}: HTTP ${res.statusCode}: ${text.slice(0, 500)}`)));
          return;
        }
        const parser = new SseParser((type, data) => clock.onEvent(type, () => JSON.parse(data)));
        res.on('data', (chunk: string) => parser.push(chunk));
        res.on('end', () => clock.fail(new TurnError(`${this.mode}: the SSE stream ended before a terminal event`)));
        res.on('error', (err) => clock.fail(err));
      },
    );
    req.on('error', (err) => clock.fail(err));
    req.end(payload);
    return clock.done;
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }
}

/**
 * Splits an SSE byte stream into `(event type, data)` pairs. fastloop frames every event as
 * `event: <type>\ndata: <json>\n\n`; the type comes from the `event:` line (or the data's `type`).
 */
export class SseParser {
  private buffer = '';

  constructor(private readonly onEvent: (type: string, data: string) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    for (let end = this.buffer.indexOf('\n\n'); end >= 0; end = this.buffer.indexOf('\n\n')) {
      const frame = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let type = '';
      const data: string[] = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith('event:')) type = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
      if (data.length === 0) continue; // a comment or keep-alive
      const text = data.join('\n');
      if (type === '') type = (JSON.parse(text) as { type?: string }).type ?? '';
      this.onEvent(type, text);
    }
  }
}
