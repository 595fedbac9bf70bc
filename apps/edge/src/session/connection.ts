import { randomUUID } from 'node:crypto';
import { ApiErrors, type ApiError } from '@fastloop/protocol';
import type { Logger } from '@fastloop/service-kit';
import type { Principal } from '../auth';
import type { TurnDeps, StateLoader } from '../turn/turn-deps';
import type { QueuedBytes } from './queued-bytes';
import { ResponsesSession, type ServerEvent, type SessionOptions } from './responses-session';
import type { ConnectionLimits } from './connection-limits';
import type { LaneLimits } from './lanes';
import { slowClientGuard } from './slow-client';
import { ConnectionStateCache, type StateCacheBudget } from './state-cache';

/** What one transport gives the connection core: its socket (or stream), as four operations. */
export interface ConnectionIo {
  /** Whether the socket still takes writes. */
  writable(): boolean;
  /** Bytes written towards the client and not yet taken by it. */
  bufferedBytes(): number;
  /** Writes one server event. */
  write(event: ServerEvent): void;
  /** Cuts the socket at once (a client that reads too slowly never answers a polite close). */
  cut(): void;
  /** Ends the socket politely (after the connection's last event). */
  end(): void;
}

/** The settings every persistent connection shares, whatever its transport. */
export interface ConnectionSettings {
  deps: TurnDeps;
  budget: StateCacheBudget;
  loader?: StateLoader;
  connectionCacheBytes: number;
  /** `response.create` events waiting behind the one in flight; more are refused. */
  maxQueued: number;
  /** Bytes queued towards a slow client before it is cut. */
  maxBufferedBytes: number;
  /** Lifetime before `websocket_connection_limit_reached` and a polite end; absent: no limit. */
  maxConnectionMs?: number;
  /** Largest client event accepted, in bytes; larger ones get `payload_too_large` (the connection stays). */
  maxPayloadBytes: number;
  /** The process's bound on bytes of events running or queued (per connection, tenant, process). */
  queuedBytes?: QueuedBytes;
  /** Lane limits (EDGE_WS_MAX_ACTIVE_RESPONSES, EDGE_WS_MAX_STREAMS); default 16 and 32. */
  lanes?: LaneLimits;
  /** Steering inputs waiting on one response (EDGE_WS_MAX_PENDING_STEERS); default 16. */
  maxPendingSteers?: number;
  /**
   * Per-process and per-tenant connection caps: a response running beside another on one
   * connection takes a tenant slot too, so lanes cannot get round EDGE_MAX_CONNECTIONS_PER_TENANT.
   */
  limits?: ConnectionLimits;
}

/** Who is on the connection and how it ends. */
export interface ConnectionPeer {
  principal: Principal;
  transport: SessionOptions['transport'];
  /** Gives the connection's slot back (see ConnectionLimits); called once. */
  releaseSlot: () => void;
  /** Called once when the connection is released, whatever released it. */
  onReleased?: () => void;
  /** The client asked for the timing sideband (the `TIMING_HEADER` of @fastloop/protocol). */
  timing?: boolean;
}

/** Whether a header (or gRPC metadata) value says `true`, any case: the timing sideband's, the event batches'. */
export function saysTrue(value: unknown): boolean {
  return typeof value === 'string' && value.trim().toLowerCase() === 'true';
}

/**
 * One persistent connection, transport-neutral: WebSocket mode and the gRPC bidi session are thin
 * adapters of this (their {@link ConnectionIo}). It owns the connection's session (the queue of
 * turns and its cancellation), its state cache, its lifetime limit, the slow-client cut, its slot
 * and its gauge, so a feature added here works on both transports.
 */
export class Connection {
  readonly logger: Logger;
  private readonly session: ResponsesSession;
  private readonly lifetime: NodeJS.Timeout | undefined;
  private released = false;

  constructor(
    private readonly settings: ConnectionSettings,
    private readonly peer: ConnectionPeer,
    private readonly io: ConnectionIo,
  ) {
    const { deps } = settings;
    const { principal, transport } = peer;
    this.logger = deps.logger.child({ connectionId: randomUUID(), tenant: principal.tenant, transport });
    const fast = slowClientGuard({
      maxBufferedBytes: settings.maxBufferedBytes,
      logger: this.logger,
      cut: () => {
        // Cut at once: the running and queued turns are cancelled and the slot is free now, not
        // when the socket finally closes.
        this.release();
        io.cut();
      },
    });
    this.session = new ResponsesSession({
      deps,
      principal,
      transport,
      cache: new ConnectionStateCache(settings.budget, settings.connectionCacheBytes, deps.metrics),
      loader: settings.loader,
      send: (event) => {
        if (io.writable() && fast(io.bufferedBytes())) io.write(event);
      },
      logger: this.logger,
      maxQueued: settings.maxQueued,
      maxPayloadBytes: settings.maxPayloadBytes,
      queuedBytes: settings.queuedBytes,
      timing: peer.timing,
      lanes: settings.lanes,
      maxPendingSteers: settings.maxPendingSteers,
      acquireLaneSlot: settings.limits && (() => settings.limits!.acquire(principal.tenant)),
    });
    deps.metrics.connections.inc({ transport });
    if (settings.maxConnectionMs !== undefined) {
      this.lifetime = setTimeout(() => void this.endAtLifetime(settings.maxConnectionMs!), settings.maxConnectionMs);
      this.lifetime.unref();
    }
  }

  /** Handles one client event (a text frame's payload, handed over; `bytes` its size when known). Never throws. */
  receive(message: string | Buffer, bytes?: number): void {
    this.session.receive(message, bytes);
  }

  /** Sends an error event (the connection stays open). */
  sendError(err: ApiError): void {
    this.session.sendError(err);
  }

  /** Resolves once nothing runs or waits on the connection. */
  whenIdle(): Promise<void> {
    return this.session.whenIdle();
  }

  /** Lets the running response finish and starts nothing more (a draining server's connections). */
  finishCurrent(): Promise<void> {
    return this.session.finishCurrent();
  }

  /** The client sends nothing more: finish what it queued, then end. */
  async finishInput(): Promise<void> {
    await this.session.whenIdle();
    this.release();
    this.io.end();
  }

  /**
   * Frees the connection, once, whichever comes first (the slow-client cut, the socket's close, the
   * end of its input): cancels the running turn, drops the queued ones and the cache, gives the slot back.
   */
  release(): void {
    this.session.close();
    if (this.released) return;
    this.released = true;
    clearTimeout(this.lifetime);
    this.peer.releaseSlot();
    this.settings.deps.metrics.connections.dec({ transport: this.peer.transport });
    this.peer.onReleased?.();
  }

  /**
   * Lets the running response finish but takes nothing new (a client that keeps pipelining
   * `response.create` events must not keep the connection past its limit), then says why and ends.
   */
  private async endAtLifetime(maxConnectionMs: number): Promise<void> {
    await this.session.finishCurrent();
    this.session.sendError(ApiErrors.connectionLimitReached(Math.round(maxConnectionMs / 60000)));
    this.io.end();
  }
}
