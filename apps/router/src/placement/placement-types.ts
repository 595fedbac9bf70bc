import type { KvView } from '../fleet/kv-view';
import type { WorkerSpec } from '../workers';

/** What a Route request tells placement (router.proto RouteRequest, minus the model). */
export interface PlacementRequest {
  /** The `hash` policy's key (prompt_cache_key or previous_response_id); tie-breaks elsewhere. */
  readonly affinityKey: string;
  /** The session the request continues, within `cacheSalt` ('' = a new conversation). */
  readonly sessionKey: string;
  readonly cacheSalt: string;
  /** The worker the caller believes holds the session ('' = unknown). */
  readonly sessionWorkerId: string;
  /** Tokens the caller believes that worker holds for it (0 = unknown). */
  readonly sessionTokens: number;
  /** The conversation root ('' = none). */
  readonly prefixKey: string;
  /** service_tier ('' = auto). */
  readonly serviceTier: string;
  /** max_output_tokens (0 = unknown). */
  readonly expectedOutputTokens: number;
}

/** A worker placement may choose: serving, not excluded, with what its reports say. */
export interface Candidate {
  readonly spec: WorkerSpec;
  /** In-flight calls the worker reported, plus this router's decisions since its report. */
  readonly load: number;
  /** Prompt tokens queued for prefill on the worker (0 when unknown). */
  readonly queuedTokens: number;
  /** Calls beyond which the worker refuses (`worker_overloaded`); Infinity when unknown. */
  readonly maxConcurrency: number;
  /** Whether the worker's stats stream is up (so `kv` is its real holdings, not an empty view). */
  readonly statsKnown: boolean;
  readonly kv: KvView;
}

/** Why a worker was chosen (router.proto RouteResponse.reason; a metric label). */
export type PlacementReason = 'session' | 'prefix' | 'load' | 'hash' | 'round_robin' | 'least_loaded';

/** A placement decision. */
export interface Placement {
  readonly worker: WorkerSpec;
  readonly reason: PlacementReason;
  /** RouteResponse.reuse_ms; undefined = until the worker fails. */
  readonly reuseMs: number | undefined;
  /** Prompt tokens the chosen worker is expected to hold for this request (0 = none known). */
  readonly expectedCachedTokens: number;
}

/** A placement policy (`ROUTER_POLICY`): picks one of the candidates (never an empty list). */
export interface PlacementPolicy {
  readonly name: string;
  place(request: PlacementRequest, candidates: readonly Candidate[]): Placement;
}
