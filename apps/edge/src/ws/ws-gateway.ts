import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import { ApiError, ApiErrors, TIMING_HEADER, toHttpErrorBody } from '@fastloop/protocol';
import type { ApiKeyAuth, Principal } from '../auth';
import { Connection, saysTrue, type ConnectionSettings } from '../session/connection';
import { eventJson } from '../session/event-json';
import type { ConnectionLimits } from '../session/connection-limits';
import { microtaskCork } from '../session/microtask-cork';
import { compressFrame, perMessageDeflate, type WsDeflateSettings } from './ws-deflate';

/**
 * WebSocket mode's options: the connection core's settings (a message over `maxPayloadBytes` gets
 * `payload_too_large`; one over twice it is refused by ws, 1009; a slow client is closed 1008).
 */
export interface WsGatewayOptions extends ConnectionSettings {
  auth: ApiKeyAuth;
  /** Connection lifetime before `websocket_connection_limit_reached`. */
  maxConnectionMs: number;
  /** Per-process and per-tenant connection caps; absent = unlimited. */
  limits?: ConnectionLimits;
  /** How long a socket cut for reading too slowly may take to close before it is destroyed; default 1000 ms. */
  slowCloseGraceMs?: number;
  /** permessage-deflate when the client offers it; DEFAULT_WS_DEFLATE when absent (ws-deflate.ts). */
  deflate?: WsDeflateSettings;
}

/**
 * WebSocket mode on `GET /v1/responses`: authenticates the upgrade (401 otherwise), then binds each
 * socket to a {@link Connection}, of which this is a thin adapter. Text frames carry client events;
 * every server event is one text frame of JSON.
 */
export class WsGateway {
  private readonly wss: WebSocketServer;
  private readonly connections = new Map<Connection, WebSocket>();
  private closing = false;

  constructor(private readonly options: WsGatewayOptions) {
    // ws closes the socket (1009) on frames over its maxPayload (inflated size, so a deflated frame
    // cannot get past it); frames between our limit and twice it get a payload_too_large error frame
    // instead and the connection stays open.
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxPayloadBytes * 2,
      perMessageDeflate: perMessageDeflate(options.deflate),
    });
    // An upgrade ws cannot take (not `Upgrade: websocket`, a bad key or version, not GET) would get
    // a 400 from ws; clients read only 426 as "no WebSocket here, use HTTP" (PROTOCOL.md).
    this.wss.on('wsClientError', (err: Error, socket: Duplex) => {
      reject(
        socket,
        426,
        ApiErrors.invalidRequest(
          `Upgrade Required: this endpoint takes a WebSocket upgrade (${err.message}); or POST over HTTP.`,
          null,
          'upgrade_required',
        ),
        {
          Upgrade: 'websocket',
          'Sec-WebSocket-Version': '13',
        },
      );
    });
  }

  /** The HTTP server's `upgrade` handler. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/v1/responses' || this.closing) {
      return reject(
        socket,
        this.closing ? 503 : 404,
        this.closing ? ApiErrors.unavailable('Server is shutting down.') : ApiErrors.notFound('Route'),
      );
    }
    const principal = this.options.auth.authenticate(req.headers.authorization);
    if (!principal) return reject(socket, 401, ApiErrors.unauthorized());
    const slot = this.options.limits?.acquire(principal.tenant) ?? (() => undefined);
    if (slot instanceof ApiError) {
      this.options.deps.metrics.errors.inc({ transport: 'websocket', code: slot.code ?? 'too_many_connections' });
      return reject(socket, 429, slot);
    }
    const timing = saysTrue(req.headers[TIMING_HEADER]);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws, socket, { principal, timing }, slot));
  }

  private onConnection(
    ws: WebSocket,
    socket: Duplex,
    { principal, timing }: { principal: Principal; timing: boolean },
    releaseSlot: () => void,
  ): void {
    // ws writes every frame straight to the socket it was handed: corking that socket batches frames.
    const cork = microtaskCork(socket);
    const connection: Connection = new Connection(
      this.options,
      { principal, transport: 'websocket', releaseSlot, timing, onReleased: () => this.connections.delete(connection) },
      {
        writable: () => ws.readyState === ws.OPEN,
        bufferedBytes: () => ws.bufferedAmount,
        write: (event) => {
          cork();
          const text = eventJson(event);
          // String length, not bytes: the threshold only needs the frame's rough size.
          ws.send(text, { compress: compressFrame(this.options.deflate, text.length) });
        },
        cut: () => {
          ws.close(1008, 'client too slow');
          setTimeout(() => ws.terminate(), this.options.slowCloseGraceMs ?? 1_000).unref();
        },
        end: () => ws.close(1000, 'connection limit reached'),
      },
    );
    this.connections.set(connection, ws);
    const logger = connection.logger;
    logger.debug({ deflate: ws.extensions.includes('permessage-deflate') }, 'websocket connected');
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary)
        return connection.sendError(
          ApiErrors.invalidRequest('Binary frames are not supported; send JSON text frames.', null, 'invalid_frame'),
        );
      // Decoded by the session once it holds the bytes: a frame over the byte bounds never is.
      const message = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      connection.receive(message, message.byteLength);
    });
    ws.on('error', (err) => {
      // e.g. a frame over maxPayload: ws closes with 1009; tell the client why first when possible.
      logger.warn({ err }, 'websocket error');
    });
    ws.on('close', () => {
      connection.release();
      logger.debug('websocket closed');
    });
  }

  /**
   * Drains: refuses new upgrades; lets each connection's running response finish but starts no
   * other (a `response.create` queued or arriving now is dropped unstarted: the client, which saw no
   * `response.created` for it, sends it again after reconnecting); runs `beforeClose` (the edge
   * flushes its response store, so a `store: true` chain continues on whichever edge the client
   * reconnects to); then closes every socket with 1001, which clients treat as recoverable.
   */
  async close(timeoutMs = 10_000, beforeClose?: () => Promise<void>): Promise<void> {
    this.closing = true;
    const drained = Promise.all([...this.connections.keys()].map((c) => c.finishCurrent()));
    await Promise.race([drained, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    await beforeClose?.();
    for (const ws of this.connections.values()) ws.close(1001, 'server shutting down');
    this.wss.close();
  }
}

function reject(socket: Duplex, status: number, err: ApiError, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(toHttpErrorBody(err));
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}
