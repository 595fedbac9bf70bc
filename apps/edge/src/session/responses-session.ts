import type { Logger } from '@fastloop/service-kit';
import {
  ApiError,
  ApiErrors,
  toWsErrorEvent,
  type ClientEvent,
  type ResponseInterruptEvent,
  type ResponseSteerEvent,
  type ResponseStreamEvent,
  type ResponseCreateRequest,
} from '@fastloop/protocol';
import { logTurnAccess } from '../access-log';
import { toApiError } from '../api-errors';
import type { Principal } from '../auth';
import type { Transport } from '../edge-metrics';
import { runTurn } from '../turn/run-turn';
import type { StateLoader, TurnDeps } from '../turn/turn-deps';
import { DEFAULT_EDGE_LIMITS } from '../turn/edge-limits';
import type { ConversationState } from '../turn/conversation-state';
import { DEFAULT_LANE_LIMITS, LaneTable, type Lane, type LaneJob, type LaneLimits } from './lanes';
import { decodeClientEvent } from './decode-client-event';
import { DEFAULT_MAX_PENDING_STEERS, type SessionOptions } from './session-options';
import {
  acceptSteer,
  afterSteeredTurn,
  steerEvents,
  steerRefusal,
  steersOfUncreated,
  withWaitingSteers,
  type SteerEvent,
} from './steering';
import { loadPrevious } from './previous-response';
import type { ConnectionStateCache } from './state-cache';

export type { ServerEvent, SessionOptions } from './session-options';

/**
 * One persistent connection's session core, shared by WebSocket mode and the gRPC bidi stream:
 * decodes client events; runs each lane's (`stream_id`'s) responses one at a time in arrival
 * order (later ones queue, bounded) and the lanes side by side; resolves `previous_response_id`
 * from the connection cache then the store (lineage, whatever lane made it); keeps each finished
 * response's state for the next turn; stops a response on `response.interrupt`.
 */
export class ResponsesSession {
  private readonly lanes: LaneTable;
  private closed = false;
  /** Set by finishCurrent(): the connection is ending; new events are refused. */
  private ending = false;
  private readonly abort = new AbortController();
  /** Resolves when the queue is empty and nothing runs (used to drain on shutdown). */
  private idleWaiters: (() => void)[] = [];
  /** Sequence numbers of the steering events (they belong to no one response's stream). */
  private steerSequence = 0;

  constructor(private readonly options: SessionOptions) {
    this.lanes = new LaneTable(options.lanes ?? DEFAULT_LANE_LIMITS, (lane) => {
      if (lane.latest) options.cache.unpin(lane.latest);
    });
  }

  /** Handles one client message (a text frame's payload; `bytes` its size when known). Never throws. */
  receive(text: string, bytes?: number): void {
    if (this.closed) return;
    const start = performance.now();
    const limits = (this.options.deps.limits ?? DEFAULT_EDGE_LIMITS).request;
    const parsed = decodeClientEvent(text, { maxPayloadBytes: this.options.maxPayloadBytes, limits, bytes });
    if ('error' in parsed) {
      if (!parsed.steer) return this.sendError(parsed.error, parsed.streamId);
      return this.sendSteer(undefined, steerEvents.failed(parsed.steer, 'invalid_input', parsed.error.message));
    }
    switch (parsed.type) {
      case 'response.create':
        return this.create(parsed, performance.now() - start);
      case 'response.interrupt':
        return this.interrupt(parsed);
      case 'response.processed':
        return; // an acknowledgement: nothing to answer
      case 'response.steer':
        return this.steer(parsed);
    }
  }

  /** Queues steering input for a running response of this connection, or hands it back (`response.steer.failed`). */
  private steer(event: ResponseSteerEvent): void {
    const lane = this.lanes.runningResponse(event.previous_response_id);
    const done = lane ? undefined : this.lanes.ownerOf(event.previous_response_id);
    const refused = steerRefusal(event, {
      lane,
      done,
      max: this.options.maxPendingSteers ?? DEFAULT_MAX_PENDING_STEERS,
    });
    if (refused) return this.sendSteer(lane ?? done, refused);
    this.sendSteer(lane, steerEvents.accepted(acceptSteer(lane!, event)));
  }

  private sendSteer(lane: Lane | undefined, event: SteerEvent): void {
    if (this.closed) return;
    const sequenced = { ...event, sequence_number: this.steerSequence++ };
    this.options.send(lane ? lane.tag(sequenced) : sequenced);
  }

  private create(event: Extract<ClientEvent, { type: 'response.create' }>, validateMs: number): void {
    if (this.ending) return; // the connection-limit error and the close follow the running response
    const { generate, stream_id: streamId, type: _type, ...body } = event;
    const lane = this.lanes.admit(streamId, this.options.maxQueued);
    if (lane instanceof ApiError) return this.sendError(lane, streamId);
    const job = { body: body as ResponseCreateRequest, generate: generate !== false, validateMs };
    lane.queue.push(withWaitingSteers(lane, job));
    void this.pump(lane);
  }

  /** Ends the running response `response_id` at its next chunk; one already ended needs nothing. */
  private interrupt(event: ResponseInterruptEvent): void {
    const lane = this.lanes.runningResponse(event.response_id);
    if (!lane) return this.options.logger.debug({ responseId: event.response_id }, 'interrupt of no running response');
    lane.current!.stop.abort();
  }

  /** True while a response runs or waits. */
  get busy(): boolean {
    return this.lanes.all().some((lane) => lane.busy);
  }

  /** Resolves once nothing runs or waits. */
  whenIdle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops taking events and drops those waiting; resolves when the running responses (if any) have
   * ended. For a connection that must end (its lifetime limit) without cutting a response short.
   */
  finishCurrent(): Promise<void> {
    this.ending = true;
    for (const lane of this.lanes.all()) lane.queue.length = 0;
    return this.whenIdle();
  }

  /** Stops taking events, cancels the running responses, drops the cache. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const lane of this.lanes.all()) lane.queue.length = 0;
    this.abort.abort();
    this.options.cache.clear();
  }

  /** Sends an error frame unless closed (with the lane's `stream_id` when it concerns one). */
  sendError(err: ApiError, streamId?: string): void {
    if (this.closed) return;
    this.options.deps.metrics.errors.inc({ transport: this.options.transport, code: err.code ?? err.type });
    const frame = toWsErrorEvent(err);
    this.options.send(streamId === undefined ? frame : { ...frame, stream_id: streamId });
  }

  private async pump(lane: Lane): Promise<void> {
    if (lane.running) return;
    lane.running = true;
    const slot = this.laneSlot(lane);
    try {
      while (lane.queue.length > 0 && !this.closed) await this.runOne(lane, lane.queue.shift()!);
    } finally {
      slot?.();
      lane.running = false;
      if (!this.busy) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiters) w();
      }
    }
  }

  /** A tenant slot for a lane that runs beside another (the connection's own slot covers the first). */
  private laneSlot(lane: Lane): (() => void) | undefined {
    if (this.lanes.running <= 1 || !this.options.acquireLaneSlot) return undefined;
    const slot = this.options.acquireLaneSlot();
    if (!(slot instanceof ApiError)) return slot;
    // Over the tenant's limit: this lane's waiting responses are refused, the running ones go on.
    for (const _job of lane.queue.splice(0)) this.sendError(slot, lane.streamId);
    return undefined;
  }

  private async runOne(lane: Lane, item: LaneJob): Promise<void> {
    const { body } = item;
    const prevId = body.previous_response_id ?? undefined;
    const { logger, cache, loader, deps, principal } = this.options;
    const received = performance.now() - item.validateMs;
    const access = { transport: this.options.transport, tenant: principal.tenant, previousResponseId: prevId };
    const current: NonNullable<Lane['current']> = { stop: new AbortController(), steer: new AbortController() };
    lane.current = current;
    try {
      const sources = { cache, loader, metrics: deps.metrics, tenant: principal.tenant };
      const { previous, loadMs } = await loadPrevious(prevId, sources);
      const request = { body, principal, transport: this.options.transport, previous, generate: item.generate };
      const signals = { signal: this.abort.signal, interrupt: current.stop.signal, steer: current.steer.signal };
      const outcome = await runTurn(
        deps,
        { ...request, ...signals, validateMs: item.validateMs, loadMs, logger },
        (event) => {
          if (event.type === 'response.created') current.responseId = event.response.id;
          if (!this.closed) this.options.send(lane.tag(event));
        },
      );
      if (outcome.state) this.keepLatest(lane, outcome.state);
      else this.evictParent(lane, prevId);
      const response = this.ending ? undefined : outcome.response; // a draining connection starts no successor
      for (const e of afterSteeredTurn(lane, body, response)) this.sendSteer(lane, e);
      const status = outcome.error ? outcome.error.status : 200;
      logTurnAccess(logger, { ...access, status, turn: outcome.access, ms: performance.now() - received });
    } catch (err) {
      this.evictParent(lane, prevId);
      for (const e of steersOfUncreated(lane, item)) this.sendSteer(lane, e);
      const apiErr = toApiError(err);
      if (apiErr.status >= 500) logger.error({ err }, 'turn failed');
      this.sendError(apiErr, lane.streamId);
      const code = apiErr.code ?? apiErr.type;
      logTurnAccess(logger, { ...access, status: apiErr.status, code, ms: performance.now() - received });
    } finally {
      lane.current = undefined;
    }
  }

  /** Caches a lane's new latest response, pinned (each lane's latest stays while others are evicted). */
  private keepLatest(lane: Lane, state: ConversationState): void {
    const { cache } = this.options;
    cache.set(state);
    if (lane.latest) cache.unpin(lane.latest);
    cache.pin((lane.latest = state.response.id));
  }

  private evictParent(lane: Lane, prevId: string | undefined): void {
    if (prevId && this.lanes.evictsParent(lane, prevId)) this.options.cache.evict(prevId, 'failed_continuation');
  }
}
