import type { Logger } from '@fastloop/service-kit';
import type { ApiError, ResponseStreamEvent, toWsErrorEvent, WebSocketTimingEvent } from '@fastloop/protocol';
import type { Principal } from '../auth';
import type { Transport } from '../edge-metrics';
import type { StateLoader, TurnDeps } from '../turn/turn-deps';
import type { LaneLimits } from './lanes';
import type { QueuedBytes } from './queued-bytes';
import type { ConnectionStateCache } from './state-cache';
import type { SteerEvent } from './steering';

/** What the server sends on a persistent connection: a streaming event or an error event, with its lane's `stream_id`. */
export type ServerEvent = (
  | ResponseStreamEvent
  | WebSocketTimingEvent
  | ReturnType<typeof toWsErrorEvent>
  | (SteerEvent & { sequence_number: number })
) & { stream_id?: string };

export interface SessionOptions {
  deps: TurnDeps;
  principal: Principal;
  transport: Extract<Transport, 'websocket' | 'grpc'>;
  cache: ConnectionStateCache;
  loader?: StateLoader;
  /** Sends one server event (a streaming event or an error frame) to the client. */
  send: (event: ServerEvent) => void;
  logger: Logger;
  /** `response.create` events waiting behind the one in flight on a lane; more are rejected. */
  maxQueued: number;
  /** Largest client event accepted, in bytes; larger ones get `payload_too_large`. Absent: no bound here. */
  maxPayloadBytes?: number;
  /** Lane limits (EDGE_WS_MAX_ACTIVE_RESPONSES, EDGE_WS_MAX_STREAMS); default OpenAI's 16 and 32. */
  lanes?: LaneLimits;
  /**
   * Takes one of the tenant's connection slots for a response running beside another on this
   * connection (per-tenant fairness: lanes count like connections); its release, or the refusal.
   */
  acquireLaneSlot?: () => (() => void) | ApiError;
  /** Steering inputs waiting on one response (EDGE_WS_MAX_PENDING_STEERS); more get `too_many_pending_steers`. */
  maxPendingSteers?: number;
  /** Bounds the bytes of events running or queued, per connection, tenant and process; absent: counts only. */
  queuedBytes?: QueuedBytes;
  /** The client asked for `responsesapi.websocket_timing` before each terminal event. */
  timing?: boolean;
}

/** Steering inputs that may wait on one response by default. */
export const DEFAULT_MAX_PENDING_STEERS = 16;
