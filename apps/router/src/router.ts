import type { routerV1 } from '@fastloop/proto';
import type { Catalog, CatalogModel } from './catalog';
import { modelNotFound, noWorkerAvailable } from './errors';
import type { PendingLoad } from './placement/pending-load';
import type { Candidate, Placement, PlacementPolicy, PlacementRequest } from './placement/placement-types';

/** Where the router learns which workers may take a request and how loaded they are (the fleet, or a fake). */
export interface WorkerPool {
  /** Serving workers not in `exclude`, with their load and holdings, in a stable order. */
  candidates(exclude?: readonly string[]): Candidate[];
  /** This router's decisions not yet in the workers' reports. */
  readonly pending: PendingLoad;
}

/** A routing decision plus the catalog entry and placement behind it (for metrics and logs). */
export interface RouteDecision {
  readonly response: routerV1.RouteResponse;
  readonly model: CatalogModel;
  readonly placement: Placement;
}

/** The fields of a Route request placement reads. */
export type RouteInput = Pick<routerV1.RouteRequest, 'model'> & Partial<routerV1.RouteRequest>;

/**
 * Resolves models and places requests on workers with the configured policy (ROUTER_POLICY). Every
 * worker is assumed to serve every catalog model (one model per deployment today); per-model
 * worker pools would filter the candidates here.
 */
export class Router {
  constructor(
    private readonly catalog: Catalog,
    private readonly pool: WorkerPool,
    private readonly policy: PlacementPolicy,
  ) {}

  /** The policy's name (metrics label). */
  get policyName(): string {
    return this.policy.name;
  }

  /**
   * Places a request on a serving worker (not one the caller excludes: its retry after a failure).
   * @throws DomainError `model_not_found` (NOT_FOUND) or `no_worker_available` (UNAVAILABLE).
   */
  route(request: RouteInput): RouteDecision {
    const model = this.catalog.resolve(request.model);
    if (!model) throw modelNotFound(request.model);
    const candidates = this.pool.candidates(request.excludeWorkerIds ?? []);
    if (candidates.length === 0) throw noWorkerAvailable(model.id);
    const placement = this.policy.place(placementRequest(request), candidates);
    this.pool.pending.add(placement.worker.id);
    const response: routerV1.RouteResponse = {
      model: model.id,
      profile: model.profile,
      workerAddress: placement.worker.address,
      workerId: placement.worker.id,
      contextWindow: model.context_window,
      maxOutputTokens: model.max_output_tokens,
      engineModel: model.engine_model,
      reason: placement.reason,
    };
    if (placement.reuseMs !== undefined) response.reuseMs = placement.reuseMs;
    return { model, placement, response };
  }

  /** The catalog in file order, as /v1/models shows it. */
  listModels(): routerV1.ListModelsResponse {
    return {
      models: this.catalog.models.map((m) => ({
        id: m.id,
        ownedBy: m.owned_by,
        created: m.created,
        aliases: [...m.aliases],
        contextWindow: m.context_window,
        profile: m.profile,
        pricing: {
          inputUsdPerMillion: m.pricing.input_usd_per_million,
          cachedInputUsdPerMillion: m.pricing.cached_input_usd_per_million,
          outputUsdPerMillion: m.pricing.output_usd_per_million,
        },
      })),
    };
  }
}

function placementRequest(r: RouteInput): PlacementRequest {
  return {
    affinityKey: r.affinityKey ?? '',
    sessionKey: r.sessionKey ?? '',
    cacheSalt: r.cacheSalt ?? '',
    sessionWorkerId: r.sessionWorkerId ?? '',
    sessionTokens: r.sessionTokens ?? 0,
    prefixKey: r.prefixKey ?? '',
    serviceTier: r.serviceTier ?? '',
    expectedOutputTokens: r.expectedOutputTokens ?? 0,
  };
}
