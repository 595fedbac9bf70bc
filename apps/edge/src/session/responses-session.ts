import type { Logger } from '@fastloop/service-kit';
import {
  ApiError,
  ApiErrors,
  parseClientEvent,
  toWsErrorEvent,
  type ResponseStreamEvent,
  type ResponseCreateRequest,
  type ValidatedTools,
  type WebSocketTimingEvent,
} from '@fastloop/protocol';
import { logTurnAccess } from '../access-log';
import { toApiError } from '../api-errors';
import type { Principal } from '../auth';
import type { Transport } from '../edge-metrics';
import { runTurn } from '../turn/run-turn';
import type { StateLoader, TurnDeps } from '../turn/turn-deps';
import { DEFAULT_EDGE_LIMITS } from '../turn/edge-limits';
import { loadPrevious } from './previous-response';
import type { ByteHolder, QueuedBytes } from './queued-bytes';
import type { ConnectionStateCache } from './state-cache';

/** What the server sends on a persistent connection: a streaming event or an error event. */
export type ServerEvent = ResponseStreamEvent | WebSocketTimingEvent | ReturnType<typeof toWsErrorEvent>;

export interface SessionOptions {
  deps: TurnDeps;
  principal: Principal;
  transport: Extract<Transport, 'websocket' | 'grpc'>;
  cache: ConnectionStateCache;
  loader?: StateLoader;
  /** Sends one server event (a streaming event or an error frame) to the client. */
  send: (event: ServerEvent) => void;
  logger: Logger;
  /** `response.create` events waiting behind the one in flight; more are rejected. */
  maxQueued: number;
  /** Largest client event accepted, in bytes; larger ones get `payload_too_large`. Absent: no bound here. */
  maxPayloadBytes?: number;
  /** Bounds the bytes of events running or queued, per connection, tenant and process; absent: counts only. */
  queuedBytes?: QueuedBytes;
  /** The client asked for `responsesapi.websocket_timing` before each terminal event. */
  timing?: boolean;
}

/** A `response.create` accepted on the connection, holding its bytes until its turn ends. */
interface Queued {
  body: ResponseCreateRequest;
  generate: boolean;
  validateMs: number;
  release: () => void;
}

const NOTHING_HELD = (): void => undefined;

/**
 * One persistent connection's session core, shared by WebSocket mode and the gRPC bidi stream:
 * decodes client events, runs one response at a time in arrival order (later ones queue, bounded),
 * resolves `previous_response_id` from the connection cache then the store, and keeps each
 * finished response's state for the next turn.
 */
export class ResponsesSession {
  private readonly queue: Queued[] = [];
  private readonly holder: ByteHolder | undefined;
  private running = false;
  private closed = false;
  /** Set by finishCurrent(): the connection is ending; new events are refused. */
  private ending = false;
  private readonly abort = new AbortController();
  /** The last tools validated on this connection: an agent resends the same every turn (see parseClientEvent). */
  private validatedTools?: ValidatedTools;
  /** Resolves when the queue is empty and nothing runs (used to drain on shutdown). */
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: SessionOptions) {
    this.holder = options.queuedBytes?.holder(options.principal.tenant);
  }

  /** Handles one client message (a text frame's payload; `bytes` its size when known). Never throws. */
  receive(text: string, bytes?: number): void {
    if (this.closed) return;
    const limit = this.options.maxPayloadBytes;
    if (limit !== undefined && utf8Exceeds(text, limit, bytes)) return this.sendError(ApiErrors.payloadTooLarge(limit));
    // Held from here until the turn ends: refused before parsing when over a byte bound.
    const budget = this.options.queuedBytes;
    const release = budget && this.holder ? budget.acquire(this.holder, bytes ?? text.length) : NOTHING_HELD;
    if (release instanceof ApiError) return this.sendError(release);
    const refused = this.accept(text, release);
    if (refused) {
      release();
      this.sendError(refused);
    }
  }

  /** Parses and queues one event; returns the error to answer when it is refused. */
  private accept(text: string, release: () => void): ApiError | undefined {
    const start = performance.now();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return ApiErrors.invalidJson();
    }
    const limits = (this.options.deps.limits ?? DEFAULT_EDGE_LIMITS).request;
    const parsed = parseClientEvent(json, limits, this.validatedTools);
    if (parsed instanceof ApiError) return parsed;
    const raw = (json as { tools?: unknown }).tools;
    if (Array.isArray(raw) && raw.length > 0) this.validatedTools = { raw, parsed: parsed.tools };
    if (this.ending) {
      release(); // the connection-limit error and the close follow the running response
      return undefined;
    }
    const { generate, ...body } = parsed as ResponseCreateRequest & { type: string; generate?: boolean };
    if (this.running && this.queue.length >= this.options.maxQueued) {
      return ApiErrors.invalidRequest(
        `Too many queued response.create events on this connection (limit ${this.options.maxQueued}); wait for response.completed.`,
        null,
        'too_many_queued_requests',
      );
    }
    const validateMs = performance.now() - start;
    this.queue.push({ body: body as ResponseCreateRequest, generate: generate !== false, validateMs, release });
    void this.pump();
    return undefined;
  }

  /** True while a response runs or waits. */
  get busy(): boolean {
    return this.running || this.queue.length > 0;
  }

  /** Resolves once nothing runs or waits. */
  whenIdle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops taking events and drops those waiting; resolves when the running response (if any) has
   * ended. For a connection that must end (its lifetime limit) without cutting a response short.
   */
  finishCurrent(): Promise<void> {
    this.ending = true;
    this.dropQueued();
    return this.whenIdle();
  }

  /** Stops taking events, cancels the running response, drops the cache. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.dropQueued();
    this.abort.abort();
    this.options.cache.clear();
  }

  /** Sends an error frame unless closed. */
  sendError(err: ApiError): void {
    if (this.closed) return;
    this.options.deps.metrics.errors.inc({ transport: this.options.transport, code: err.code ?? err.type });
    this.options.send(toWsErrorEvent(err));
  }

  private dropQueued(): void {
    for (const item of this.queue.splice(0)) item.release();
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        const item = this.queue.shift()!;
        await this.runOne(item).finally(item.release);
      }
    } finally {
      this.running = false;
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private async runOne(item: Queued): Promise<void> {
    const { body } = item;
    const prevId = body.previous_response_id ?? undefined;
    const { logger, cache, loader, deps, principal } = this.options;
    const received = performance.now() - item.validateMs;
    const access = { transport: this.options.transport, tenant: principal.tenant, previousResponseId: prevId };
    try {
      const sources = { cache, loader, metrics: deps.metrics, tenant: principal.tenant };
      const { previous, loadMs } = await loadPrevious(prevId, sources);
      const outcome = await runTurn(
        this.options.deps,
        {
          body,
          principal: this.options.principal,
          transport: this.options.transport,
          previous,
          generate: item.generate,
          signal: this.abort.signal,
          validateMs: item.validateMs,
          loadMs,
          logger,
          timing: this.options.timing ? (event) => this.closed || this.options.send(event) : undefined,
        },
        (event) => {
          if (!this.closed) this.options.send(event);
        },
      );
      if (outcome.state) this.options.cache.set(outcome.state);
      else if (prevId) this.options.cache.evict(prevId, 'failed_continuation');
      const status = outcome.error ? outcome.error.status : 200;
      logTurnAccess(logger, { ...access, status, turn: outcome.access, ms: performance.now() - received });
    } catch (err) {
      if (prevId) this.options.cache.evict(prevId, 'failed_continuation');
      const apiErr = toApiError(err);
      if (apiErr.status >= 500) logger.error({ err }, 'turn failed');
      this.sendError(apiErr);
      const code = apiErr.code ?? apiErr.type;
      logTurnAccess(logger, { ...access, status: apiErr.status, code, ms: performance.now() - received });
    }
  }
}

/** Whether `text` (of `bytes` UTF-8 bytes, when known) is over `limit` bytes. */
function utf8Exceeds(text: string, limit: number, bytes?: number): boolean {
  if (bytes !== undefined) return bytes > limit;
  // Characters first: no UTF-8 text is shorter in bytes, so only a borderline event is measured.
  return text.length > limit || (text.length * 3 > limit && Buffer.byteLength(text) > limit);
}
