import { ApiError, type ResponseCreateRequest } from '@fastloop/protocol';
import type { Steer } from './steering';

/** A `response.create` waiting on its lane. */
export interface LaneJob {
  body: ResponseCreateRequest;
  generate: boolean;
  validateMs: number;
  /** Gives back the bytes the event holds (EDGE_MAX_QUEUED_BYTES*) once its turn ends or it is dropped. */
  release?: () => void;
  /** Steering input this response commits (an automatic successor, or the continuation it waited for). */
  steers?: Steer[];
}

/**
 * One lane of a connection (`stream_id`; the default lane has none): its `response.create` events
 * run one at a time in arrival order, beside the other lanes' responses.
 */
export class Lane {
  readonly queue: LaneJob[] = [];
  running = false;
  /** The latest response this lane created: its cached parent, kept in the connection cache. */
  latest?: string;
  /**
   * The running response: its id once `response.created` is out, how the client stops it at once
   * (`response.interrupt`), and how steering asks it to end at its next safe boundary.
   */
  current?: { responseId?: string; stop: AbortController; steer: AbortController };
  /** Steering input accepted for the running response, in submission order. */
  readonly steers: Steer[] = [];
  /** Steering input waiting for the client's continuation of `parentId` (it owes tool output). */
  waiting?: { parentId: string; steers: Steer[] };

  constructor(readonly streamId: string | undefined) {}

  get busy(): boolean {
    return this.running || this.queue.length > 0;
  }

  /** `event` as this lane sends it: with its `stream_id` (none on the default lane, as before lanes). */
  tag<T extends object>(event: T): T & { stream_id?: string } {
    return this.streamId === undefined ? event : { ...event, stream_id: this.streamId };
  }
}

/** The lane limits of one connection (OpenAI documents 16 and 32). */
export interface LaneLimits {
  /** EDGE_WS_MAX_ACTIVE_RESPONSES: responses running at once on the connection, all lanes together. */
  maxActive: number;
  /** EDGE_WS_MAX_STREAMS: named lanes a connection keeps; an idle one is forgotten to make room. */
  maxStreams: number;
}

/** OpenAI's documented limits per connection. */
export const DEFAULT_LANE_LIMITS: LaneLimits = { maxActive: 16, maxStreams: 32 };

/**
 * A connection's lanes (a leaf: bookkeeping only, the session does the work): the default lane and up to `maxStreams` named ones (least recently used
 * first in the map, so the idle lane forgotten to make room is the one unused longest).
 */
export class LaneTable {
  readonly main = new Lane(undefined);
  private readonly named = new Map<string, Lane>();

  /** @param forget called with a lane dropped to make room (its latest response is no longer kept for it). */
  constructor(
    private readonly limits: LaneLimits,
    private readonly forget: (lane: Lane) => void,
  ) {}

  /** The lane `streamId` names (made on first use), or `too_many_streams` naming it. */
  laneFor(streamId: string | undefined): Lane | ApiError {
    if (streamId === undefined) return this.main;
    const known = this.named.get(streamId);
    if (known) {
      this.named.delete(streamId);
      this.named.set(streamId, known);
      return known;
    }
    if (this.named.size >= this.limits.maxStreams && !this.forgetIdle()) {
      return laneError(
        'too_many_streams',
        `Too many streams on this connection: stream_id '${streamId}' would be number ${this.limits.maxStreams + 1}, and all ${this.limits.maxStreams} (EDGE_WS_MAX_STREAMS) have work in flight; reuse one or wait.`,
      );
    }
    const lane = new Lane(streamId);
    this.named.set(streamId, lane);
    return lane;
  }

  /**
   * The lane a `response.create` joins, or the error naming its `stream_id`: a malformed or one
   * too many stream, one response too many running, or its lane's queue full.
   */
  admit(streamId: string | undefined, maxQueued: number): Lane | ApiError {
    const lane = this.laneFor(streamId);
    if (lane instanceof ApiError) return lane;
    const refused = this.checkActive(lane);
    if (refused) return refused;
    if (!lane.running || lane.queue.length < maxQueued) return lane;
    const where = streamId === undefined ? 'connection' : `stream (stream_id '${streamId}')`;
    return new ApiError({
      status: 400,
      type: 'invalid_request_error',
      code: 'too_many_queued_requests',
      param: streamId === undefined ? null : 'stream_id',
      message: `Too many queued response.create events on this ${where} (limit ${maxQueued}, EDGE_WS_MAX_QUEUED); wait for response.completed.`,
    });
  }

  /**
   * Whether a failed continuation evicts its cached parent: yes, unless the parent is another
   * lane's latest response (a failed fork must not cost the lane it forked from its state).
   */
  evictsParent(lane: Lane, prevId: string): boolean {
    const owner = this.ownerOf(prevId);
    return owner === undefined || owner === lane;
  }

  /** `too_many_active_responses` naming the lane, when starting one more response would pass the limit. */
  checkActive(lane: Lane): ApiError | undefined {
    if (lane.busy || this.running < this.limits.maxActive) return undefined;
    const name = lane.streamId === undefined ? 'the default stream' : `stream_id '${lane.streamId}'`;
    return laneError(
      'too_many_active_responses',
      `Too many active responses on this connection (limit ${this.limits.maxActive}, EDGE_WS_MAX_ACTIVE_RESPONSES): ${name} cannot start one until another completes.`,
    );
  }

  /** Responses running now, all lanes together. */
  get running(): number {
    let n = this.main.running ? 1 : 0;
    for (const lane of this.named.values()) if (lane.running) n++;
    return n;
  }

  all(): Lane[] {
    return [this.main, ...this.named.values()];
  }

  /** The lane whose latest response is `responseId`, if any. */
  ownerOf(responseId: string): Lane | undefined {
    return this.all().find((lane) => lane.latest === responseId);
  }

  /** The lane running the response `responseId` (its `response.created` is out). */
  runningResponse(responseId: string): Lane | undefined {
    return this.all().find((lane) => lane.current?.responseId === responseId);
  }

  private forgetIdle(): boolean {
    for (const [id, lane] of this.named) {
      if (lane.busy) continue;
      this.named.delete(id);
      this.forget(lane);
      return true;
    }
    return false;
  }
}

function laneError(code: string, message: string): ApiError {
  return new ApiError({ status: 400, type: 'invalid_request_error', code, param: 'stream_id', message });
}
