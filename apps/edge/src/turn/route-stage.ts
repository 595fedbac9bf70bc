import { ApiError } from '@fastloop/protocol';
import { failureOf } from '../api-errors';
import type { RouteDecision } from './conversation-state';
import { RouteCache } from './route-cache';
import { ASK_ROUTER, RouteRefresh } from './route-refresh';
import { affinityKeyOf, routeRequestOf } from './route-hints';
import type { TurnDeps, TurnRequest } from './turn-deps';

/** A turn's route, and the router's next decision for its conversation when asked beside the turn. */
export interface TurnRoute {
  readonly route: RouteDecision;
  /** Set when a continuation's decision had expired and the router is asked in the background. */
  readonly refresh?: RouteRefresh;
}

/**
 * The route stage: the model and worker for this turn. A continuation reuses its conversation's
 * decision (or the fresher one the router answered beside its last turn) while the router's `reuse_ms` lasts
 * (forever from a router without it): no router call on a cached turn. A dead worker is found by
 * the Generate call, which then routes again with {@link routeFresh}; an expired decision asks the
 * router, which may move the conversation (its worker drains, or is over the load bound): beside
 * the turn by default ({@link RouteRefresh}) when the router let it be reused for a while, else
 * (reuse_ms 0, or EDGE_ROUTE_REVALIDATION `inline`) before it.
 * Other turns use a short-lived cached decision.
 */
export async function routeTurn(deps: TurnDeps, req: TurnRequest): Promise<TurnRoute> {
  const state = req.previous;
  if (state && state.route.requestedModel === req.body.model) {
    const next = state.routeRefresh?.next;
    const current = next === undefined || next === ASK_ROUTER ? state.route : next;
    const expired = current.reuseUntil !== undefined && Date.now() >= current.reuseUntil;
    if (next !== ASK_ROUTER && !expired) return { route: current };
    const ask = () => routeFresh(deps, req, [], deps.routerReaskTimeoutMs);
    if (next !== ASK_ROUTER && revalidatesInBackground(deps, req, current))
      return { route: current, refresh: new RouteRefresh(deps, req, current, afterThisTurnsWork(ask)) };
    return { route: await ask().catch((err: unknown) => keptOnRouterOutage(deps, current, err)) };
  }
  const key = RouteCache.key(req.body.model, req.principal.tenant, affinityKeyOf(req));
  const cached = deps.routeCache?.get(key);
  if (cached) return { route: cached };
  const decision = await routeFresh(deps, req);
  // A router that bounds reuse (reuse_ms) places every new conversation itself: a key such as
  // prompt_cache_key names a group of conversations, and reusing its decision would bypass the
  // router's load bound for the whole group.
  if (decision.reuseUntil === undefined) deps.routeCache?.set(key, decision);
  return { route: decision };
}

/**
 * Whether an expired decision may serve this turn while the router is asked beside it: not when
 * the router places every turn (reuse_ms 0: round-robin, least-loaded), and not over HTTP or SSE,
 * whose next turn starts from the store's state, which cannot carry the answer (the router's moves
 * would never take effect); a WebSocket's or gRPC stream's connection cache carries it.
 */
export function revalidatesInBackground(deps: TurnDeps, req: TurnRequest, current: RouteDecision): boolean {
  const cached = req.transport === 'websocket' || req.transport === 'grpc';
  return deps.routeRevalidation === 'background' && cached && (current.reuseMs ?? 0) > 0;
}

/**
 * Runs `ask` once the work queued now is done (a macrotask): the Route call's encoding and HTTP/2
 * setup then come after the turn's render and Generate call instead of before them.
 */
function afterThisTurnsWork<T>(ask: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => setImmediate(() => ask().then(resolve, reject)));
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
    reuseMs: r.reuseMs,
  };
}
