import { TIMING_HEADER } from '@fastloop/protocol';
import WebSocket from 'ws';
import { EventClock, TurnError, type TurnClient, type TurnResult } from './turn-client';

/**
 * WebSocket mode with the raw `ws` client: one socket per rollout, one `response.create` text
 * frame per turn, every server event one JSON text frame.
 */
export class WsTurnClient implements TurnClient {
  readonly mode = 'ws' as const;
  private current: EventClock | undefined;
  private closed = false;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: WebSocket.RawData) => {
      const text = data.toString();
      const event = JSON.parse(text) as { type: string };
      const clock = this.current;
      if (!clock) return;
      if (clock.onEvent(event.type, () => event)) this.current = undefined;
    });
    ws.on('close', (code, reason) =>
      this.current?.fail(new TurnError(`ws: socket closed (${code} ${reason.toString()}) during a turn`)),
    );
    ws.on('error', (err) => this.current?.fail(err));
  }

  /**
   * Opens the socket; rejects when the upgrade fails. `timing` asks the edge for each turn's
   * `responsesapi.websocket_timing` event (one more frame per turn), read into {@link TurnResult.timing}.
   */
  static open(wsUrl: string, apiKey: string, { timing = false }: { timing?: boolean } = {}): Promise<WsTurnClient> {
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
    if (timing) headers[TIMING_HEADER] = 'true';
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(wsUrl, { headers, perMessageDeflate: false });
      ws.once('open', () => resolve(new WsTurnClient(ws)));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) =>
        reject(new TurnError(`ws: upgrade refused with HTTP ${res.statusCode}`)),
      );
    });
  }

  send(body: Record<string, unknown>): Promise<TurnResult> {
    if (this.current) throw new TurnError('ws: a turn is already running on this socket');
    const clock = new EventClock(this.mode);
    const frame = JSON.stringify({ type: 'response.create', ...body });
    clock.sent(Buffer.byteLength(frame));
    this.current = clock;
    this.ws.send(frame, (err) => err && clock.fail(err));
    return clock.done;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ws.readyState !== WebSocket.OPEN) return;
    await new Promise<void>((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close(1000, 'rollout done');
      setTimeout(resolve, 2_000).unref();
    });
  }
}
