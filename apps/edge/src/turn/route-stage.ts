import { failureOf } from '../api-errors';
import type { RouteDecision } from './conversation-state';
import { RouteCache } from './route-cache';
import type { TurnDeps, TurnRequest } from './turn-deps';

/**
 * The route stage: the model and worker for this turn. A continuation reuses its conversation's
 * decision (no router call on a cached turn; a dead worker is found by the Generate call, which
 * then routes again with {@link routeFresh}); other turns use a short-lived cached decision.
 */
export async function routeTurn(deps: TurnDeps, req: TurnRequest): Promise<RouteDecision> {
  const prev = req.previous?.route;
  if (prev && prev.requestedModel === req.body.model) return prev;
  const key = RouteCache.key(req.body.model, req.principal.tenant, affinityKey(req));
  const cached = deps.routeCache?.get(key);
  if (cached) return cached;
  const decision = await routeFresh(deps, req);
  deps.routeCache?.set(key, decision);
  return decision;
}

/** Asks the router for the request's model and a worker; its errors become API errors. */
export async function routeFresh(deps: TurnDeps, req: TurnRequest): Promise<RouteDecision> {
  const model = req.body.model;
  const r = await deps.backends
    .route({ model, tenant: req.principal.tenant, affinityKey: affinityKey(req) }, req.signal)
    .catch(failureOf('router', model));
  return {
    requestedModel: model,
    model: r.model,
    profile: r.profile,
    workerAddress: r.workerAddress,
    workerId: r.workerId,
    contextWindow: r.contextWindow,
    maxOutputTokens: r.maxOutputTokens,
    engineModel: r.engineModel,
  };
}

function affinityKey(req: TurnRequest): string {
  return req.body.prompt_cache_key ?? req.body.previous_response_id ?? '';
}
