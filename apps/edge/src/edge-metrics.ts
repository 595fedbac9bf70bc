import { Counter, Gauge, Histogram, type Registry } from '@fastloop/service-kit';

/**
 * Stages of one turn, timed separately so the saving of a cached turn is visible per stage
 * (`compact`: in-line compaction's summary, on the turns that compact).
 */
export type TurnStage =
  'validate' | 'load' | 'safety' | 'route' | 'render' | 'compact' | 'queue' | 'ttft' | 'stream' | 'post';
export type Transport = 'http' | 'sse' | 'websocket' | 'grpc';

/** How each metric is made (kept out of the constructor: one short definition each). */
const METRICS = {
  stageSeconds: (registry: Registry) =>
    new Histogram({
      name: 'fastloop_edge_turn_stage_seconds',
      help: 'Time spent in each stage of a turn',
      labelNames: ['stage', 'transport', 'cached'],
      // Sub-millisecond buckets: the point of a cached turn is that these stages become tiny.
      buckets: [
        0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
      ],
      registers: [registry],
    }),
  turns: (registry: Registry) =>
    new Counter({
      name: 'fastloop_edge_turns_total',
      help: 'Turns by terminal status',
      labelNames: ['transport', 'cached', 'status'],
      registers: [registry],
    }),
  errors: (registry: Registry) =>
    new Counter({
      name: 'fastloop_edge_errors_total',
      help: 'Errors returned to clients by code',
      labelNames: ['transport', 'code'],
      registers: [registry],
    }),
  cacheLookups: (registry: Registry) =>
    new Counter({
      name: 'fastloop_edge_state_cache_lookups_total',
      help: 'previous_response_id lookups: hit (connection cache), store (response store), miss',
      labelNames: ['result'],
      registers: [registry],
    }),
  cacheEvictions: (registry: Registry) =>
    new Counter({
      name: 'fastloop_edge_state_cache_evictions_total',
      help: 'Conversation states evicted',
      labelNames: ['reason'],
      registers: [registry],
    }),
  cacheBytes: (registry: Registry) =>
    new Gauge({
      name: 'fastloop_edge_state_cache_bytes',
      help: 'Bytes held by all connection caches',
      registers: [registry],
    }),
  connections: (registry: Registry) =>
    new Gauge({
      name: 'fastloop_edge_open_connections',
      help: 'Open persistent connections',
      labelNames: ['transport'],
      registers: [registry],
    }),
  engineFirstItemSeconds: (registry: Registry) =>
    new Histogram({
      name: 'fastloop_edge_engine_first_item_seconds',
      help: "The worker's own time from receiving Generate to sending the chunk that opened the response's first output item (as it reports per chunk); the client's time to that item minus this is what the API added",
      labelNames: ['transport', 'cached'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  firstItemOverheadSeconds: (registry: Registry) =>
    new Histogram({
      name: 'fastloop_edge_first_item_overhead_seconds',
      help: "What the edge and its internal hops added before a response's first output item: from the request reaching the edge to emitting that item, minus the engine's own time to it (queueing behind a running response on the connection excluded)",
      labelNames: ['transport', 'cached'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
  safetyFindings: (registry: Registry) =>
    new Counter({
      name: 'fastloop_edge_safety_findings_total',
      help: 'Safety findings the edge acted on without refusing (flag, redact), by category and where they were found (input, header, output)',
      labelNames: ['category', 'action', 'source'],
      registers: [registry],
    }),
  outputBlocks: (registry: Registry) =>
    new Counter({
      name: 'fastloop_edge_output_blocks_total',
      help: 'Responses stopped by output moderation (incomplete, content_filter)',
      labelNames: ['rule'],
      registers: [registry],
    }),
  prefixMisses: (registry: Registry) =>
    new Counter({
      name: 'fastloop_edge_prefix_misses_total',
      help: 'Generate calls answered prefix_miss and resent in full',
      registers: [registry],
    }),
  routesKept: (registry: Registry) =>
    new Counter({
      name: 'fastloop_edge_routes_kept_total',
      help: "Continuations kept on their conversation's worker because the router could not answer when their decision expired",
      registers: [registry],
    }),
  routeRevalidations: (registry: Registry) =>
    new Counter({
      name: 'fastloop_edge_route_revalidations_total',
      help: 'Expired continuation routes asked of the router beside the turn, by answer: same worker, moved (serves the next turn), refused (the next turn asks first); an outage counts in routes_kept',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
  workerRetries: (registry: Registry) =>
    new Counter({
      name: 'fastloop_edge_worker_retries_total',
      help: 'Turns re-routed to another worker after one failed before the first token (invisible to the client)',
      labelNames: ['code'],
      registers: [registry],
    }),
};

/** The edge's Prometheus metrics. */
export class EdgeMetrics {
  readonly stageSeconds: Histogram<'stage' | 'transport' | 'cached'>;
  readonly turns: Counter<'transport' | 'cached' | 'status'>;
  readonly errors: Counter<'transport' | 'code'>;
  readonly cacheLookups: Counter<'result'>;
  readonly cacheEvictions: Counter<'reason'>;
  readonly cacheBytes: Gauge;
  readonly connections: Gauge<'transport'>;
  readonly prefixMisses: Counter;
  /** Turns sent to another worker after one failed before the first token, by its error code. */
  readonly workerRetries: Counter<'code'>;
  /** Continuations that kept their expired route because the router could not answer. */
  readonly routesKept: Counter;
  /** Expired routes revalidated beside the turn, by what the router answered. */
  readonly routeRevalidations: Counter<'result'>;
  readonly safetyFindings: Counter<'category' | 'action' | 'source'>;
  readonly outputBlocks: Counter<'rule'>;
  readonly engineFirstItemSeconds: Histogram<'transport' | 'cached'>;
  readonly firstItemOverheadSeconds: Histogram<'transport' | 'cached'>;

  constructor(registry: Registry) {
    this.stageSeconds = METRICS.stageSeconds(registry);
    this.turns = METRICS.turns(registry);
    this.errors = METRICS.errors(registry);
    this.cacheLookups = METRICS.cacheLookups(registry);
    this.cacheEvictions = METRICS.cacheEvictions(registry);
    this.cacheBytes = METRICS.cacheBytes(registry);
    this.connections = METRICS.connections(registry);
    this.engineFirstItemSeconds = METRICS.engineFirstItemSeconds(registry);
    this.firstItemOverheadSeconds = METRICS.firstItemOverheadSeconds(registry);
    this.safetyFindings = METRICS.safetyFindings(registry);
    this.outputBlocks = METRICS.outputBlocks(registry);
    this.prefixMisses = METRICS.prefixMisses(registry);
    this.workerRetries = METRICS.workerRetries(registry);
    this.routesKept = METRICS.routesKept(registry);
    this.routeRevalidations = METRICS.routeRevalidations(registry);
  }
}

/** Records the duration of each stage of one turn. */
export class StageTimer {
  private last = performance.now();
  /** When the timer (the turn's pipeline) started, `performance.now()`. */
  readonly startedAt = this.last;
  readonly stages: Partial<Record<TurnStage, number>> = {};

  constructor(
    private readonly metrics: EdgeMetrics,
    private readonly transport: Transport,
    private readonly cached: boolean,
  ) {}

  /** Ends `stage` now (its time since the previous mark, plus `extraMs` spent before) and starts the next. */
  mark(stage: TurnStage, extraMs = 0): void {
    const now = performance.now();
    this.record(stage, now - this.last + extraMs);
    this.last = now;
  }

  /** Records a stage measured elsewhere (ms) without moving the mark. */
  record(stage: TurnStage, ms: number): void {
    this.stages[stage] = (this.stages[stage] ?? 0) + ms;
    this.metrics.stageSeconds.observe({ stage, transport: this.transport, cached: String(this.cached) }, ms / 1000);
  }

  /** Restarts the clock without recording (e.g. after time spent waiting on the client). */
  reset(): void {
    this.last = performance.now();
  }
}
