import type { Logger } from '@fastloop/service-kit';
import type { billingV1 } from '@fastloop/proto';
import type { BackendClients } from '../clients/backend-clients';
import type { EdgeMetrics, Transport } from '../edge-metrics';
import type { Principal } from '../auth';
import type { EntryRenderCache } from './entry-render-cache';
import type { RenderOffload } from './render-offload';
import type { EdgeLimits } from './edge-limits';
import type { LargeBodyGate } from './large-body-gate';
import type { RouteCache } from './route-cache';
import type { HeaderVerdicts } from '../safety/header-verdicts';
import type { ConversationState } from './conversation-state';
import type { ReasoningSeal } from './reasoning-seal';
import type { CompactionOptions } from './compaction';
import type { InputItem, ResponseCreateRequest, WebSocketTimingEvent } from '@fastloop/protocol';

/** Where finished responses go after their terminal event (never awaited by the turn). */
export interface ResponseSink {
  /** Persists a `store: true` response and its items (fire and forget; must not throw). */
  save(state: ConversationState, newItemsFrom: number): void;
  /**
   * Whether a response finishing now can be stored; false (Redis away, backlog full) makes the turn
   * answer `store: false` rather than return an id that would never be readable. Default true.
   */
  accepting?(): boolean;
}

/** What a turn needs from the process; built once in main.ts. */
export interface TurnDeps {
  backends: BackendClients;
  metrics: EdgeMetrics;
  logger: Logger;
  renderCache: EntryRenderCache;
  /** Renders costly text off the event loop (worker threads, fair between tenants); absent = in place. */
  renderOffload?: RenderOffload;
  /** Short-lived routing decisions for turns without cached state; absent = always ask the router. */
  routeCache?: RouteCache;
  /** ROUTER_REASK_TIMEOUT_MS: the Route deadline of a continuation with a decision to keep; absent = ROUTER_TIMEOUT_MS. */
  routerReaskTimeoutMs?: number;
  /**
   * EDGE_ROUTE_REVALIDATION: a continuation whose decision expired asks the router beside the turn
   * (`background`: the answer serves the next turn, route-refresh.ts) or before it (`inline`,
   * the default when absent).
   */
  routeRevalidation?: 'background' | 'inline';
  usage: { enqueue(record: billingV1.UsageRecord): void };
  /**
   * Start Generate while the safety verdict is in flight (its round trip then hides under the
   * engine's time to first token); a blocked prompt cancels the call before any token is read.
   * false: nothing reaches a worker before the verdict.
   */
  safetyOverlap?: boolean;
  store?: ResponseSink;
  /** Verdicts of request headers (instructions, tools), classified once per distinct header. */
  headerVerdicts: HeaderVerdicts;
  /** Classify streamed output incrementally and stop a response whose output is blocked; absent = off. */
  outputModeration?: { flushMs: number; flushChars: number; inFlight?: number };
  /** Stored items by id, for `item_reference` to items outside the connection's conversation. */
  items?: ItemLookup;
  /** Takes turns for the CPU stages of large bodies (parse, validate, Classify encoding); absent: none wait. */
  largeBodies?: LargeBodyGate;
  /** Bounds on one request's shape and rendering; DEFAULT_EDGE_LIMITS when absent. */
  limits?: EdgeLimits;
  /**
   * Seals reasoning for `include: ["reasoning.encrypted_content"]` and opens it when sent back;
   * absent: no `encrypted_content` is written, and one sent back is read as its content/summary.
   */
  reasoningSeal?: ReasoningSeal;
  /** How compaction summarises (`POST /v1/responses/compact`, `context_management`); DEFAULT_COMPACTION when absent. */
  compaction?: CompactionOptions;
}

/** Loads a stored response's state for a continuation that missed the connection cache. */
export interface StateLoader {
  load(id: string, tenant: string): Promise<ConversationState | undefined>;
}

/** Finds a stored item by id within one tenant. */
export interface ItemLookup {
  find(id: string, tenant: string): Promise<InputItem | undefined>;
}

/** One turn as a transport hands it to the session core. */
export interface TurnRequest {
  body: ResponseCreateRequest;
  principal: Principal;
  transport: Transport;
  /** The state `body.previous_response_id` resolved to (connection cache or store). */
  previous?: ConversationState;
  /** false: WebSocket warm-up, prepare everything but sample nothing. */
  generate: boolean;
  signal: AbortSignal;
  /**
   * Aborted to end the response at its next chunk (a client's `response.interrupt`): it ends
   * `incomplete`, `interrupted`, without the item being written, not `failed`.
   */
  interrupt?: AbortSignal;
  /** Aborted when steering input waits: the response ends `incomplete`, `steered`, at its next item boundary. */
  steer?: AbortSignal;
  /** Time the transport spent parsing and validating the request, in ms. */
  validateMs: number;
  /** Time spent resolving `previous` (connection cache or response store), in ms. */
  loadMs: number;
  /** Set when the client asked for the `responsesapi.websocket_timing` sideband: sends it (turn-timing.ts). */
  timing?: (event: WebSocketTimingEvent) => void;
  logger: Logger;
}
