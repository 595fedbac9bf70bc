import type { routerV1 } from '@fastloop/proto';
import type { Catalog, CatalogModel } from './catalog';
import { modelNotFound, noWorkerAvailable } from './errors';
import { pickRendezvous, RoundRobin } from './worker-picker';
import type { WorkerSpec } from './workers';

/** Where the router learns which workers may take traffic (the health monitor, or a fake). */
export interface WorkerPool {
  /** Workers that are SERVING now, in a stable order. */
  healthyWorkers(): readonly WorkerSpec[];
}

/** A routing decision plus the catalog entry behind it (for metrics and logs). */
export interface RouteDecision {
  readonly response: routerV1.RouteResponse;
  readonly model: CatalogModel;
  readonly worker: WorkerSpec;
}

/**
 * Resolves models and picks workers. Every worker is assumed to serve every catalog model (one
 * model per deployment today); per-model worker pools would filter `healthyWorkers()` here.
 */
export class Router {
  private readonly roundRobin = new RoundRobin();

  constructor(
    private readonly catalog: Catalog,
    private readonly pool: WorkerPool,
  ) {}

  /**
   * Picks a worker for a request: with an affinity key, rendezvous hashing over healthy workers
   * (same key → same worker while it stays healthy); without one, round-robin.
   * @throws DomainError `model_not_found` (NOT_FOUND) or `no_worker_available` (UNAVAILABLE).
   */
  route(request: Pick<routerV1.RouteRequest, 'model' | 'affinityKey'>): RouteDecision {
    const model = this.catalog.resolve(request.model);
    if (!model) throw modelNotFound(request.model);
    const healthy = this.pool.healthyWorkers();
    const worker = request.affinityKey ? pickRendezvous(request.affinityKey, healthy) : this.roundRobin.next(healthy);
    if (!worker) throw noWorkerAvailable(model.id);
    return {
      model,
      worker,
      response: {
        model: model.id,
        profile: model.profile,
        workerAddress: worker.address,
        workerId: worker.id,
        contextWindow: model.context_window,
        maxOutputTokens: model.max_output_tokens,
        engineModel: model.engine_model,
      },
    };
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
