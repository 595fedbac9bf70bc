import { ApiError } from '@fastloop/protocol';
import type { RouteDecision } from './conversation-state';
import type { TurnDeps, TurnRequest } from './turn-deps';

/** A conversation's next turn asks the router before it starts (the router refused the last ask). */
export const ASK_ROUTER = 'ask-router';

/** What a conversation's next turn routes from, beside its own route: see {@link RouteRefresh}. */
export type NextRoute = RouteDecision | typeof ASK_ROUTER;

/**
 * The router asked beside a continuation whose decision expired (EDGE_ROUTE_REVALIDATION
 * `background`, the default; on a WebSocket or gRPC stream, whose connection cache carries the
 * answer to the next turn): the turn goes on with its conversation's decision at once, and the
 * router's answer is what the next turn starts from — stale-while-revalidate (RFC 5861), so a move
 * the router decides takes effect one turn later instead of costing every continuation a round
 * trip before its Generate call (~3 ms here once reuse_ms has passed, which an agent's tool call
 * usually outlasts). An outage keeps the decision (the next turn asks again, as inline); a refusal
 * (the model left the catalog) makes the next turn ask before it starts, so the client sees it.
 */
export class RouteRefresh {
  private answer?: NextRoute;

  /** @param current the decision the turn goes on with. */
  constructor(deps: TurnDeps, req: TurnRequest, current: RouteDecision, asking: Promise<RouteDecision>) {
    asking.then(
      (decision) => {
        this.answer = decision;
        deps.metrics.routeRevalidations.inc({ result: decision.workerId === current.workerId ? 'same' : 'moved' });
      },
      (err: unknown) => {
        if (req.signal?.aborted) return; // the turn was cancelled, not the route refused
        if (err instanceof ApiError && err.code === 'router_unavailable') {
          deps.metrics.routesKept.inc();
          return;
        }
        req.logger.warn({ err }, 'the router refused a continuation asked beside its turn; its next turn asks first');
        deps.metrics.routeRevalidations.inc({ result: 'refused' });
        this.answer = ASK_ROUTER;
      },
    );
  }

  /** The router's answer once in: undefined while it is not (or on an outage), and the next turn asks again. */
  get next(): NextRoute | undefined {
    return this.answer;
  }
}
