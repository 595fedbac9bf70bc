import { ApiError } from '@fastloop/protocol';
import { failureOf } from '../api-errors';
import type { RouteDecision } from './conversation-state';
import { RouteCache } from './route-cache';
import { affinityKeyOf, routeRequestOf } from './route-hints';
import type { TurnDeps, TurnRequest } from './turn-deps';

/**
 * The route stage: the model and worker for this turn. A continuation reuses its conversation's
 * decision while the router's `reuse_ms` lasts (forever from a router without it): no router call
 * on a cached turn. A dead worker is found by the Generate call, which then routes again with
 * {@link routeFresh}; an expired decision asks the router, which may move the conversation (its
 * worker drains, or is over the load bound). Other turns use a short-lived cached decision.
 */
export async function routeTurn(deps: TurnDeps, req: TurnRequest): Promise<RouteDecision> {
  const prev = req.previous?.route;
  if (prev && prev.requestedModel === req.body.model) {
    if (prev.reuseUntil === undefined || Date.now() < prev.reuseUntil) return prev;
    return routeFresh(deps, req, [], deps.routerReaskTimeoutMs).catch((err: unknown) =>
      keptOnRouterOutage(deps, prev, err),
    );
  }
  const key = RouteCache.key(req.body.model, req.principal.tenant, affinityKeyOf(req));
  const cached = deps.routeCache?.get(key);
  if (cached) return cached;
  const decision = await routeFresh(deps, req);
  // A router that bounds reuse (reuse_ms) places every new conversation itself: a key such as
  // prompt_cache_key names a group of conversations, and reusing its decision would bypass the
  // router's load bound for the whole group.
  if (decision.reuseUntil === undefined) deps.routeCache?.set(key, decision);
  return decision;
}

/**
 * An expired continuation's decision when the router cannot answer (down, or past
 * ROUTER_REASK_TIMEOUT_MS on a saturated host; 31 turns of 500 agent loops once failed
 * router_unavailable so in bench/load): the conversation stays on its worker, which holds its prefix. Asking again was to
 * let the router move it; a dead worker is still found by the Generate call, which routes anew.
 * The next turn asks again. Any other failure (the model left the catalog) fails the turn.
 */
function keptOnRouterOutage(deps: TurnDeps, prev: RouteDecision, err: unknown): RouteDecision {
  if (!(err instanceof ApiError) || err.code !== 'router_unavailable') throw err;
  deps.metrics.routesKept.inc();
  return prev;
}

/**
 * Asks the router for the request's model and a worker, never one of `excludeWorkerIds` (a retry
 * after one failed), within `deadlineMs` (default ROUTER_TIMEOUT_MS); its errors become API errors.
 */
export async function routeFresh(
  deps: TurnDeps,
  req: TurnRequest,
  excludeWorkerIds: readonly string[] = [],
  deadlineMs?: number,
): Promise<RouteDecision> {
  const model = req.body.model;
  const r = await deps.backends
    .route(routeRequestOf(req, model, excludeWorkerIds), req.signal, deadlineMs)
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
    reuseUntil: r.reuseMs === undefined ? undefined : Date.now() + r.reuseMs,
  };
}
