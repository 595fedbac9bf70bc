import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import { ApiError, ApiErrors, toHttpErrorBody } from '@fastloop/protocol';
import type { ApiKeyAuth } from '../auth';
import type { TurnDeps } from '../turn/turn-deps';
import { ConnectionStateCache, type StateCacheBudget } from '../session/state-cache';
import { ResponsesSession, type StateLoader } from '../session/responses-session';
import type { ConnectionLimits } from '../session/connection-limits';
import { microtaskCork } from '../session/microtask-cork';

export interface WsGatewayOptions {
  deps: TurnDeps;
  auth: ApiKeyAuth;
  budget: StateCacheBudget;
  loader?: StateLoader;
  /** Largest accepted message in bytes (ws `maxPayload`). */
  maxPayloadBytes: number;
  /** Bytes queued towards a slow client before the connection is closed (1008). */
  maxBufferedBytes: number;
  /** Connection lifetime before `websocket_connection_limit_reached`. */
  maxConnectionMs: number;
  connectionCacheBytes: number;
  maxQueued: number;
  /** Per-process and per-tenant connection caps; absent = unlimited. */
  limits?: ConnectionLimits;
  /** How long a socket cut for reading too slowly may take to close before it is destroyed; default 1000 ms. */
  slowCloseGraceMs?: number;
}

/**
 * WebSocket mode on `GET /v1/responses`: authenticates the upgrade (401 otherwise), then binds each
 * socket to a ResponsesSession. Text frames carry client events; every server event is one text
 * frame of JSON.
 */
export class WsGateway {
  private readonly wss: WebSocketServer;
  private readonly sessions = new Set<{ ws: WebSocket; session: ResponsesSession }>();
  private closing = false;

  constructor(private readonly options: WsGatewayOptions) {
    // permessage-deflate is optional in the protocol; off, since frames are small and latency matters.
    // ws closes the socket (1009) on frames over its maxPayload; frames between our limit and twice
    // it get a payload_too_large error frame instead and the connection stays open.
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxPayloadBytes * 2,
      perMessageDeflate: false,
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
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws, socket, principal, slot));
  }

  private onConnection(
    ws: WebSocket,
    socket: Duplex,
    principal: NonNullable<ReturnType<ApiKeyAuth['authenticate']>>,
    releaseSlot: () => void,
  ): void {
    const { deps } = this.options;
    const connectionId = randomUUID();
    const logger = deps.logger.child({ connectionId, tenant: principal.tenant, transport: 'websocket' });
    const cache = new ConnectionStateCache(this.options.budget, this.options.connectionCacheBytes, deps.metrics);
    // ws writes every frame straight to the socket it was handed: corking that socket batches frames.
    const cork = microtaskCork(socket);
    const session = new ResponsesSession({
      deps,
      principal,
      transport: 'websocket',
      cache,
      loader: this.options.loader,
      send: (event) => {
        if (ws.readyState !== ws.OPEN) return;
        if (ws.bufferedAmount > this.options.maxBufferedBytes) {
          logger.warn({ bufferedAmount: ws.bufferedAmount }, 'client reads too slowly; closing');
          // Cut at once: the running and queued turns are cancelled and the slot is free now, not
          // when the close handshake (which a client that does not read never answers) times out.
          release();
          ws.close(1008, 'client too slow');
          setTimeout(() => ws.terminate(), this.options.slowCloseGraceMs ?? 1_000).unref();
          return;
        }
        cork();
        ws.send(JSON.stringify(event));
      },
      logger,
      maxQueued: this.options.maxQueued,
    });
    const entry = { ws, session };
    this.sessions.add(entry);
    deps.metrics.connections.inc({ transport: 'websocket' });
    logger.debug('websocket connected');
    let released = false;
    // Once per connection, whichever comes first: the slow-client cut or the socket's close.
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(lifetime);
      session.close();
      this.sessions.delete(entry);
      releaseSlot();
      deps.metrics.connections.dec({ transport: 'websocket' });
    };

    const lifetime = setTimeout(async () => {
      // Let the running response finish, but take nothing new: a client that keeps pipelining
      // response.create events must not keep the connection past its limit.
      await session.finishCurrent();
      session.sendError(ApiErrors.connectionLimitReached(Math.round(this.options.maxConnectionMs / 60000)));
      ws.close(1000, 'connection limit reached');
    }, this.options.maxConnectionMs);
    lifetime.unref();

    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary)
        return session.sendError(
          ApiErrors.invalidRequest('Binary frames are not supported; send JSON text frames.', null, 'invalid_frame'),
        );
      const size = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as Buffer).byteLength;
      if (size > this.options.maxPayloadBytes)
        return session.sendError(ApiErrors.payloadTooLarge(this.options.maxPayloadBytes));
      session.receive(data.toString());
    });
    ws.on('error', (err) => {
      // e.g. a frame over maxPayload: ws closes with 1009; tell the client why first when possible.
      logger.warn({ err }, 'websocket error');
    });
    ws.on('close', () => {
      release();
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
    const drained = Promise.all([...this.sessions].map((s) => s.session.finishCurrent()));
    await Promise.race([drained, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    await beforeClose?.();
    for (const { ws } of this.sessions) ws.close(1001, 'server shutting down');
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
