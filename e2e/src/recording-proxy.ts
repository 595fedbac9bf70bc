import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';

/** One `response.create` (WebSocket) or `POST /v1/responses` body a client sent, and how it ended. */
export interface RecordedTurn {
  transport: 'websocket' | 'http';
  /** The request exactly as the client sent it (parsed JSON). */
  request: Record<string, any>;
  /** The server's terminal event for it (`response.completed` / `.failed` / `.incomplete` / `error`), or an HTTP error body. */
  terminal?: Record<string, any>;
  /** Every server event type for this request, in order (deltas included). */
  eventTypes: string[];
  /** The WebSocket it came on: its index in `upgrades`. */
  socket?: number;
}

/** Everything a client did through the proxy. */
export interface Recording {
  turns: RecordedTurn[];
  /** Each WebSocket upgrade's answer (101, or the refusal status) and request headers. */
  upgrades: { status: number; headers: IncomingHttpHeaders }[];
  /** Every HTTP request line, e.g. `POST /v1/responses` (upgrades excluded). */
  httpRequests: string[];
  /** Each bridged WebSocket's end: which side closed it first (the client, or the edge), and the code. */
  closes: { socket: number; by: 'client' | 'edge'; code: number }[];
}

/**
 * A transparent HTTP + WebSocket proxy in front of the edge that records what a real client (Codex
 * CLI) sends and how each request ended. The client is configured with the proxy's URL; the edge
 * sees the same bytes. Recordings show which transport the client really used and become replay
 * fixtures.
 */
export class RecordingProxy {
  readonly recording: Recording = { turns: [], upgrades: [], httpRequests: [], closes: [] };
  private readonly server: Server;
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  private readonly sockets = new Set<WebSocket>();

  private constructor(private readonly target: URL) {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        this.recording.httpRequests.push(`${req.method} ${req.url}`);
        const turn = req.method === 'POST' && req.url?.startsWith('/v1/responses') ? this.httpTurn(body) : undefined;
        const up = request(
          { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
          (upRes) => {
            res.writeHead(upRes.statusCode ?? 502, upRes.headers);
            let text = '';
            upRes.on('data', (c: Buffer) => {
              if (turn) text += c.toString();
              res.write(c);
            });
            upRes.on('end', () => {
              if (turn) finishHttpTurn(turn, upRes.statusCode ?? 0, text);
              res.end();
            });
          },
        );
        up.on('error', () => res.destroy());
        up.end(body);
      });
    });
    this.server.on('upgrade', (req, socket, head) => {
      const upstream = new WebSocket(`ws://${target.host}${req.url}`, {
        headers: { authorization: req.headers.authorization ?? '' },
        perMessageDeflate: false,
      });
      upstream.on('unexpected-response', (_r, res) => {
        this.recording.upgrades.push({ status: res.statusCode ?? 0, headers: req.headers });
        socket.end(`HTTP/1.1 ${res.statusCode} Refused\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      });
      upstream.on('error', () => socket.destroy());
      upstream.on('open', () => {
        const index = this.recording.upgrades.push({ status: 101, headers: req.headers }) - 1;
        this.wss.handleUpgrade(req, socket, head, (client) => this.bridge(client, upstream, index));
      });
    });
  }

  /** Starts a proxy to `targetUrl` (the edge's `http://host:port`) on a free local port. */
  static async start(targetUrl: string): Promise<RecordingProxy> {
    const proxy = new RecordingProxy(new URL(targetUrl));
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** `http://127.0.0.1:<port>` */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The turns recorded since `from` (an index into `recording.turns`). */
  turnsSince(from: number): RecordedTurn[] {
    return this.recording.turns.slice(from);
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private bridge(client: WebSocket, upstream: WebSocket, socket: number): void {
    this.sockets.add(client).add(upstream);
    // Server events belong to the oldest request without a terminal event (one response at a time).
    const open: RecordedTurn[] = [];
    client.on('message', (data) => {
      const text = data.toString();
      const turn: RecordedTurn = { transport: 'websocket', request: safeJson(text), eventTypes: [], socket };
      this.recording.turns.push(turn);
      open.push(turn);
      upstream.send(text);
    });
    upstream.on('message', (data) => {
      const text = data.toString();
      const event = safeJson(text);
      const turn = open[0];
      if (turn) {
        turn.eventTypes.push(String(event.type));
        if (isTerminal(event.type)) {
          turn.terminal = event;
          open.shift();
        }
      }
      client.send(text);
    });
    let closed = false;
    const closedBy = (by: 'client' | 'edge', code: number) => {
      if (!closed) this.recording.closes.push({ socket, by, code });
      closed = true;
    };
    client.on('close', (code, reason) => {
      closedBy('client', code);
      upstream.close(sendableCode(code), reason);
    });
    upstream.on('close', (code, reason) => {
      closedBy('edge', code);
      client.close(sendableCode(code), reason);
    });
    client.on('error', () => upstream.terminate());
    upstream.on('error', () => client.terminate());
  }

  private httpTurn(body: Buffer): RecordedTurn {
    const turn: RecordedTurn = { transport: 'http', request: safeJson(body.toString()), eventTypes: [] };
    this.recording.turns.push(turn);
    return turn;
  }
}

function finishHttpTurn(turn: RecordedTurn, status: number, text: string): void {
  if (!turn.request.stream || status !== 200) {
    const body = safeJson(text);
    turn.terminal =
      status === 200 ? { type: `response.${body.status}`, response: body } : { type: 'error', status, ...body };
    return;
  }
  for (const block of text.split('\n\n')) {
    const data = block.split('\n').find((l) => l.startsWith('data: '));
    if (!data) continue;
    const event = safeJson(data.slice('data: '.length));
    turn.eventTypes.push(String(event.type));
    if (isTerminal(event.type)) turn.terminal = event;
  }
}

/** Passes a close code on, except those that may not be sent in a close frame (1005, 1006, …). */
function sendableCode(code: number): number {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999)
    ? code
    : 1000;
}

function isTerminal(type: unknown): boolean {
  return (
    type === 'error' || type === 'response.completed' || type === 'response.failed' || type === 'response.incomplete'
  );
}

function safeJson(text: string): Record<string, any> {
  try {
    return JSON.parse(text) as Record<string, any>;
  } catch {
    return { unparsed: text };
  }
}
