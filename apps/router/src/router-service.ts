import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { routerV1 } from '@fastloop/proto';
import {
  ErrorCode,
  errorCodeOf,
  MuxServer,
  toGrpcError,
  type GrpcServiceBinding,
  type Logger,
} from '@fastloop/service-kit';
import type { RouterMetrics } from './metrics';
import type { Router } from './router';

/** Fully qualified gRPC service name (also its grpc.health.v1 name). */
export const ROUTER_SERVICE_NAME = 'fastloop.router.v1.RouterService';

export interface RouterServiceDeps {
  router: Router;
  metrics: RouterMetrics;
  logger: Logger;
}

/**
 * Binds {@link Router} to gRPC: metrics, logs and domain error → gRPC status. Both transports (a
 * call each, and calls on RouteStream) run the same {@link routeOne}.
 */
export function createRouterService(deps: RouterServiceDeps): GrpcServiceBinding {
  const mux = new MuxServer();
  // A refusal rejects: the stream answers it as the call's error frame, with its code.
  const routeOnMux = async (request: routerV1.RouteRequest): Promise<routerV1.RouteResponse> => routeOne(deps, request);
  const implementation: routerV1.RouterServiceServer = {
    route: (
      call: ServerUnaryCall<routerV1.RouteRequest, routerV1.RouteResponse>,
      callback: sendUnaryData<routerV1.RouteResponse>,
    ) => {
      try {
        callback(null, routeOne(deps, call.request));
      } catch (err) {
        callback(toGrpcError(err));
      }
    },
    routeStream: (stream) => mux.serveUnary(stream, routeOnMux),
    listModels: (
      _call: ServerUnaryCall<routerV1.ListModelsRequest, routerV1.ListModelsResponse>,
      callback: sendUnaryData<routerV1.ListModelsResponse>,
    ) => {
      callback(null, deps.router.listModels());
    },
  };
  return {
    name: ROUTER_SERVICE_NAME,
    definition: routerV1.RouterServiceService,
    implementation,
    drain: () => mux.drain(),
  };
}

/** One Route call, counted and logged; throws the refusal (a DomainError) for the transport to map. */
function routeOne(deps: RouterServiceDeps, request: routerV1.RouteRequest): routerV1.RouteResponse {
  const endTimer = deps.metrics.routeDuration.startTimer();
  try {
    const decision = deps.router.route(request);
    endTimer();
    const { placement } = decision;
    deps.metrics.decisions.inc({ model: decision.model.id, worker: placement.worker.id });
    deps.metrics.placements.inc({ policy: deps.router.policyName, reason: placement.reason });
    const from = request.sessionWorkerId;
    if (from && from !== placement.worker.id) {
      deps.metrics.sessionMoves.inc();
      deps.logger.debug({ from, to: placement.worker.id, reason: placement.reason }, 'session moved');
    }
    return decision.response;
  } catch (err) {
    endTimer();
    const code = errorCodeOf(err) ?? ErrorCode.internal;
    deps.metrics.errors.inc({ code });
    if (code === ErrorCode.internal) deps.logger.error({ err }, 'route failed');
    else deps.logger.debug({ code, model: request.model, tenant: request.tenant }, 'route refused');
    throw err;
  }
}
