import { Counter, Gauge, Histogram, type Registry } from '@fastloop/service-kit';

/** The router's own series (default process metrics come with the registry). */
export interface RouterMetrics {
  /** `router_route_decisions_total{model,worker}`: model is the canonical id (bounded by the catalog). */
  readonly decisions: Counter<'model' | 'worker'>;
  /** `router_route_errors_total{code}`: refused routes by error code (client model names never become labels). */
  readonly errors: Counter<'code'>;
  /** `router_worker_healthy{worker}`: 1 while the worker's latest health check said SERVING. */
  readonly workerHealthy: Gauge<'worker'>;
  /** `router_route_duration_seconds`: time to resolve and pick, per Route call. */
  readonly routeDuration: Histogram;
}

/** Registers the router metrics on `registry`. */
export function createRouterMetrics(registry: Registry): RouterMetrics {
  return {
    decisions: new Counter({
      name: 'router_route_decisions_total',
      help: 'Route decisions by canonical model and worker.',
      labelNames: ['model', 'worker'],
      registers: [registry],
    }),
    errors: new Counter({
      name: 'router_route_errors_total',
      help: 'Route calls refused, by error code.',
      labelNames: ['code'],
      registers: [registry],
    }),
    workerHealthy: new Gauge({
      name: 'router_worker_healthy',
      help: '1 while the worker answers SERVING, else 0.',
      labelNames: ['worker'],
      registers: [registry],
    }),
    routeDuration: new Histogram({
      name: 'router_route_duration_seconds',
      help: 'Time to route one request.',
      // A decision is a map lookup plus a few hashes: microseconds.
      buckets: [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.005, 0.01],
      registers: [registry],
    }),
  };
}
