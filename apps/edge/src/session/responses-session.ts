import {
  ApiError,
  toWsErrorEvent,
  type ClientEvent,
  type ResponseInterruptEvent,
  type ResponseSteerEvent,
  type ResponseCreateRequest,
  type ValidatedTools,
  type WebSocketTimingEvent,
} from '@fastloop/protocol';
import { logTurnAccess } from '../access-log';
import { toApiError } from '../api-errors';
import { runTurn } from '../turn/run-turn';
import { DEFAULT_EDGE_LIMITS } from '../turn/edge-limits';
import { DEFAULT_LANE_LIMITS, LaneTable, type Lane, type LaneJob } from './lanes';
import { decodeClientEvent, type ClientMessage } from './decode-client-event';
import { DEFAULT_MAX_PENDING_STEERS, type SessionOptions } from './session-options';
import * as steering from './steering';
import { loadPrevious } from './previous-response';
import { holdBytes, type ByteHolder } from './queued-bytes';
import { OrderedInbox } from './ordered-inbox';
import { settleLane } from './lane-cache';
import type { ConversationState } from '../turn/conversation-state';

export type { ServerEvent, SessionOptions } from './session-options';
type CreateEvent = Extract<ClientEvent, { type: 'response.create' }>;

/**
 * One persistent connection's session core, shared by WebSocket mode and the gRPC bidi stream:
 * decodes client events; runs each lane's (`stream_id`'s) responses one at a time in arrival
 * order (later ones queue, bounded) and the lanes side by side; resolves `previous_response_id`
 * from the connection cache then the store (lineage, whatever lane made it); keeps each finished
 * response's state for the next turn; stops a response on `response.interrupt`.
 */
export class ResponsesSession {
  private readonly lanes: LaneTable;
  private readonly holder: ByteHolder | undefined;
  /** The last tools validated on this connection: an agent resends the same every turn (see parseClientEvent). */
  private readonly tools: { last?: ValidatedTools } = {};
  private closed = false;
  /** Set by finishCurrent(): the connection is ending; new events are refused. */
  private ending = false;
  private readonly abort = new AbortController();
  /** Resolves when the queue is empty and nothing runs (used to drain on shutdown). */
  private idleWaiters: (() => void)[] = [];
  /** Sequence numbers of the steering events (they belong to no one response's stream). */
  private steerSequence = 0;
  /** Where `responsesapi.websocket_timing` goes when the client asked for it. */
  private readonly timing?: (event: WebSocketTimingEvent) => void;
  /** Large messages are parsed when their turn comes (issue 17); the others keep their order behind them. */
  private readonly inbox: OrderedInbox;

  constructor(private readonly options: SessionOptions) {
    this.holder = options.queuedBytes?.holder(options.principal.tenant);
    if (options.timing) this.timing = (event) => this.closed || options.send(event);
    const on = { drained: () => this.wakeIdle(), failed: (e: ApiError) => this.sendError(e), logger: options.logger };
    this.inbox = new OrderedInbox(options.deps.largeBodies, options.principal.tenant, on, options.maxPayloadBytes);
    this.lanes = new LaneTable(options.lanes ?? DEFAULT_LANE_LIMITS, (lane) => {
      if (lane.latest) options.cache.unpin(lane.latest);
    });
  }

  /** Handles one client message (a text frame's payload, handed over; `bytes` its size). Never throws. */
  receive(message: string | Buffer, bytes?: number): void {
    if (this.closed) return;
    // Held from here until the turn ends: refused before it is decoded when over a byte bound.
    const release = holdBytes(this.options.queuedBytes, this.holder, bytes ?? message.length);
    if (release instanceof ApiError) return this.sendError(release);
    const decode = (m: ClientMessage, start?: number) => this.decode(m, bytes, release, start);
    this.inbox.receive(message, bytes ?? message.length, { decode, cleanup: release });
  }

  private decode(message: ClientMessage, bytes: number | undefined, release: () => void, parseStart?: number) {
    if (this.closed) return release();
    const start = parseStart ?? performance.now();
    const limits = (this.options.deps.limits ?? DEFAULT_EDGE_LIMITS).request;
    const { maxPayloadBytes } = this.options;
    const parsed = decodeClientEvent(message, { maxPayloadBytes, limits, bytes, tools: this.tools });
    if ('error' in parsed || parsed.type !== 'response.create') release();
    if ('error' in parsed) {
      if (!parsed.steer) return this.sendError(parsed.error, parsed.streamId);
      return this.sendSteer(
        undefined,
        steering.steerEvents.failed(parsed.steer, 'invalid_input', parsed.error.message),
      );
    }
    switch (parsed.type) {
      case 'response.create':
        return this.create(parsed, performance.now() - start, release);
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
    const max = this.options.maxPendingSteers ?? DEFAULT_MAX_PENDING_STEERS;
    const refused = steering.steerRefusal(event, { lane, done, max });
    if (refused) return this.sendSteer(lane ?? done, refused);
    this.sendSteer(lane, steering.steerEvents.accepted(steering.acceptSteer(lane!, event)));
  }

  private sendSteer(lane: Lane | undefined, event: steering.SteerEvent): void {
    if (this.closed) return;
    const sequenced = { ...event, sequence_number: this.steerSequence++ };
    this.options.send(lane ? lane.tag(sequenced) : sequenced);
  }

  private create(event: CreateEvent, validateMs: number, release: () => void): void {
    const { generate, stream_id: streamId, type: _type, ...body } = event;
    const lane = this.ending ? undefined : this.lanes.admit(streamId, this.options.maxQueued);
    if (!lane || lane instanceof ApiError) {
      release();
      // Ending: the connection-limit error and the close follow the running response.
      return lane ? this.sendError(lane, streamId) : undefined;
    }
    const job = { body: body as ResponseCreateRequest, generate: generate !== false, validateMs, release };
    lane.queue.push(steering.withWaitingSteers(lane, job));
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
    return this.inbox.pending > 0 || this.lanes.all().some((lane) => lane.busy);
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
    this.dropQueued();
    return this.whenIdle();
  }

  /** Stops taking events, cancels the running responses, drops the cache. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.dropQueued();
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

  private dropQueued(): void {
    for (const lane of this.lanes.all()) for (const job of lane.queue.splice(0)) job.release?.();
  }

  private async pump(lane: Lane): Promise<void> {
    if (lane.running) return;
    lane.running = true;
    const slot = this.laneSlot(lane);
    try {
      while (lane.queue.length > 0 && !this.closed) {
        const job = lane.queue.shift()!;
        await this.runOne(lane, job).finally(() => job.release?.());
      }
    } finally {
      slot?.();
      lane.running = false;
      this.wakeIdle();
    }
  }

  private wakeIdle(): void {
    if (this.busy) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  /** A tenant slot for a lane that runs beside another (the connection's own slot covers the first). */
  private laneSlot(lane: Lane): (() => void) | undefined {
    if (this.lanes.running <= 1 || !this.options.acquireLaneSlot) return undefined;
    const slot = this.options.acquireLaneSlot();
    if (!(slot instanceof ApiError)) return slot;
    // Over the tenant's limit: this lane's waiting responses are refused, the running ones go on.
    for (const job of lane.queue.splice(0)) {
      job.release?.();
      this.sendError(slot, lane.streamId);
    }
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
    let kept: ConversationState | undefined; // the state the next turn goes on from, when the turn left one
    try {
      const sources = { cache, loader, metrics: deps.metrics, tenant: principal.tenant };
      const { previous, loadMs } = await loadPrevious(prevId, sources);
      const request = { body, principal, transport: this.options.transport, previous, generate: item.generate };
      const signals = { signal: this.abort.signal, interrupt: current.stop.signal, steer: current.steer.signal };
      const outcome = await runTurn(
        deps,
        { ...request, ...signals, validateMs: item.validateMs, loadMs, logger, timing: this.timing },
        (event) => {
          if (event.type === 'response.created') current.responseId = event.response.id;
          if (!this.closed) this.options.send(lane.tag(event));
        },
      );
      kept = outcome.state;
      const response = this.ending ? undefined : outcome.response; // a draining connection starts no successor
      for (const e of steering.afterSteeredTurn(lane, body, response)) this.sendSteer(lane, e);
      const status = outcome.error ? outcome.error.status : 200;
      logTurnAccess(logger, { ...access, status, turn: outcome.access, ms: performance.now() - received });
    } catch (err) {
      for (const e of steering.steersOfUncreated(lane, item)) this.sendSteer(lane, e);
      const apiErr = toApiError(err);
      if (apiErr.status >= 500) logger.error({ err }, 'turn failed');
      this.sendError(apiErr, lane.streamId);
      const code = apiErr.code ?? apiErr.type;
      logTurnAccess(logger, { ...access, status: apiErr.status, code, ms: performance.now() - received });
    } finally {
      settleLane(cache, this.lanes, lane, prevId, kept);
      lane.current = undefined;
    }
  }
}
