import { Counter, Gauge, Histogram, type Registry } from '@fastloop/service-kit';

/** How a Generate call can end, as the `outcome` label. */
export const GENERATE_OUTCOMES = ['stop', 'length', 'cancelled', 'prefix_miss', 'invalid_prompt', 'worker_overloaded', 'error'] as const;
export type GenerateOutcome = (typeof GENERATE_OUTCOMES)[number];

/** The worker's metrics. Every series carries `engine` (`sim` = simulated accelerator). */
export interface InferenceMetrics {
  requests: Counter<'engine' | 'outcome'>;
  promptTokens: Counter<'engine'>;
  cachedTokens: Counter<'engine'>;
  completionTokens: Counter<'engine'>;
  ttft: Histogram<'engine'>;
  inFlight: Gauge<'engine'>;
  sessionCacheTokens: Gauge<'engine'>;
  sessionCacheSessions: Gauge<'engine'>;
  sessionCacheHits: Counter<'engine'>;
  sessionCacheMisses: Counter<'engine'>;
  sessionCacheEvictions: Counter<'engine'>;
}

/** Describes the worker: one series with value 1, so dashboards can show the engine is simulated. */
export interface EngineInfo {
  engine: string;
  simulated: boolean;
  profile: string;
  workerId: string;
}

/** Registers the worker's metrics on `registry`. */
export function createInferenceMetrics(registry: Registry, info: EngineInfo): InferenceMetrics {
  const registers = [registry];
  const engine = ['engine'] as const;
  const infoGauge = new Gauge({
    name: 'inference_engine_info',
    help: 'Engine behind this worker (simulated="true" means no real model runs)',
    labelNames: ['engine', 'simulated', 'profile', 'worker_id'] as const,
    registers,
  });
  infoGauge.set({ engine: info.engine, simulated: String(info.simulated), profile: info.profile, worker_id: info.workerId }, 1);
  const metrics: InferenceMetrics = {
    requests: new Counter({ name: 'inference_requests_total', help: 'Generate calls by outcome', labelNames: ['engine', 'outcome'] as const, registers }),
    promptTokens: new Counter({ name: 'inference_prompt_tokens_total', help: 'Prompt tokens (prefix + new)', labelNames: engine, registers }),
    cachedTokens: new Counter({ name: 'inference_cached_tokens_total', help: 'Prompt tokens reused from a session', labelNames: engine, registers }),
    completionTokens: new Counter({ name: 'inference_completion_tokens_total', help: 'Tokens sampled and sent', labelNames: engine, registers }),
    ttft: new Histogram({
      name: 'inference_ttft_seconds',
      help: 'Engine time from request arrival to the first chunk written',
      labelNames: engine,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    inFlight: new Gauge({ name: 'inference_in_flight', help: 'Generate calls in progress', labelNames: engine, registers }),
    sessionCacheTokens: new Gauge({ name: 'inference_session_cache_tokens', help: 'Tokens held for session prefix reuse', labelNames: engine, registers }),
    sessionCacheSessions: new Gauge({ name: 'inference_session_cache_sessions', help: 'Sessions held for prefix reuse', labelNames: engine, registers }),
    sessionCacheHits: new Counter({ name: 'inference_session_cache_hits_total', help: 'Calls whose session was held', labelNames: engine, registers }),
    sessionCacheMisses: new Counter({
      name: 'inference_session_cache_misses_total',
      help: 'Calls with a session key whose prefix the worker did not hold (each prefix_miss included)',
      labelNames: engine,
      registers,
    }),
    sessionCacheEvictions: new Counter({ name: 'inference_session_cache_evictions_total', help: 'Sessions evicted to respect a bound', labelNames: engine, registers }),
  };
  // Series exist from the start (at 0), so rates and dashboards work before the first call.
  const label = { engine: info.engine };
  for (const outcome of GENERATE_OUTCOMES) metrics.requests.inc({ ...label, outcome }, 0);
  for (const c of [metrics.promptTokens, metrics.cachedTokens, metrics.completionTokens, metrics.sessionCacheHits, metrics.sessionCacheMisses, metrics.sessionCacheEvictions]) {
    c.inc(label, 0);
  }
  for (const g of [metrics.inFlight, metrics.sessionCacheTokens, metrics.sessionCacheSessions]) g.set(label, 0);
  return metrics;
}
