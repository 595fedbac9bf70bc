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
  /** `router_placements_total{policy,reason}`: why each worker was chosen (session, prefix, load, hash, …). */
  readonly placements: Counter<'policy' | 'reason'>;
  /** `router_session_moves_total`: requests placed away from the worker the caller said holds their session. */
  readonly sessionMoves: Counter;
  /** `router_worker_load{worker,kind}`: the worker's latest report (in_flight, queued_prefill_tokens, sessions, kv_tokens, kv_capacity_tokens). */
  readonly workerLoad: Gauge<'worker' | 'kind'>;
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
    placements: new Counter({
      name: 'router_placements_total',
      help: 'Placements by policy and by why the worker was chosen.',
      labelNames: ['policy', 'reason'],
      registers: [registry],
    }),
    sessionMoves: new Counter({
      name: 'router_session_moves_total',
      help: 'Requests placed away from the worker that held their session (it failed, drained, or was over the load bound).',
      registers: [registry],
    }),
    workerLoad: new Gauge({
      name: 'router_worker_load',
      help: "A worker's latest load report, by kind: in_flight, queued_prefill_tokens, sessions, kv_tokens, kv_capacity_tokens.",
      labelNames: ['worker', 'kind'],
      registers: [registry],
    }),
  };
}
