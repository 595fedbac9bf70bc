import { Counter, Gauge, Histogram, type Registry } from '@fastloop/service-kit';

/** How a Generate call can end, as the `outcome` label. */
export const GENERATE_OUTCOMES = [
  'stop',
  'length',
  'cancelled',
  'prefix_miss',
  'invalid_prompt',
  'worker_overloaded',
  'error',
] as const;
export type GenerateOutcome = (typeof GENERATE_OUTCOMES)[number];

/** The worker's metrics. Every series carries `engine` (`sim` = simulated accelerator). */
export interface InferenceMetrics {
  requests: Counter<'engine' | 'outcome'>;
  promptTokens: Counter<'engine'>;
  cachedTokens: Counter<'engine'>;
  /** `cachedTokens` split by who found them; the two sources sum to it. */
  cachedTokensBySource: Counter<'engine' | 'source'>;
  completionTokens: Counter<'engine'>;
  /** TokenChunk messages written: completion tokens / chunks = tokens per gRPC message. */
  tokenChunks: Counter<'engine'>;
  /** Prompt tokens the engine evaluated (engines with their own KV state report it; the rest were cached). */
  engineEvaluatedTokens: Counter<'engine'>;
  /** Tokens evaluated after a completion so the KV state holds its rendering (llamacpp). */
  engineAlignedTokens: Counter<'engine'>;
  ttft: Histogram<'engine'>;
  inFlight: Gauge<'engine'>;
  sessionCacheTokens: Gauge<'engine'>;
  sessionCacheSessions: Gauge<'engine'>;
  sessionCacheHits: Counter<'engine'>;
  sessionCacheMisses: Counter<'engine'>;
  sessionCacheEvictions: Counter<'engine'>;
  prefixIndexBlocks: Gauge<'engine'>;
  /** The worker's own time per call, by part (see WORKER_TIME_PARTS). */
  workerSeconds: Histogram<'engine' | 'part'>;
  /** Calls whose prompt could not extend the session's log in place (a divergence or a branch: O(history) copy). */
  sequenceCopies: Counter<'engine'>;
}

/**
 * The worker's own work around the engine, per call: `prepare` = arrival → the engine is called
 * (session lookup, prompt assembly, validation, prefix matching); `engine_read` = what the engine
 * reports it spent reading the prompt before it could start (the simulator parses it);
 * `keep` = after the stream (holding prompt ++ completion for the session, metrics).
 */
export const WORKER_TIME_PARTS = ['prepare', 'engine_read', 'keep'] as const;

/**
 * Who found a call's cached tokens: `session` = the session/parent lookup (its common prefix),
 * `content` = the extra tokens only the block-hash index found (held under another key).
 */
export const CACHED_TOKEN_SOURCES = ['session', 'content'] as const;

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
  infoGauge.set(
    { engine: info.engine, simulated: String(info.simulated), profile: info.profile, worker_id: info.workerId },
    1,
  );
  const metrics: InferenceMetrics = {
    requests: new Counter({
      name: 'inference_requests_total',
      help: 'Generate calls by outcome',
      labelNames: ['engine', 'outcome'] as const,
      registers,
    }),
    promptTokens: new Counter({
      name: 'inference_prompt_tokens_total',
      help: 'Prompt tokens (prefix + new)',
      labelNames: engine,
      registers,
    }),
    cachedTokens: new Counter({
      name: 'inference_cached_tokens_total',
      help: 'Prompt tokens reused from held sequences (not prefilled)',
      labelNames: engine,
      registers,
    }),
    cachedTokensBySource: new Counter({
      name: 'inference_cached_tokens_by_source_total',
      help: 'Cached prompt tokens by who found them: session lookup, or the extra found by content (block hashes)',
      labelNames: ['engine', 'source'] as const,
      registers,
    }),
    completionTokens: new Counter({
      name: 'inference_completion_tokens_total',
      help: 'Tokens sampled and sent',
      labelNames: engine,
      registers,
    }),
    tokenChunks: new Counter({
      name: 'inference_token_chunks_total',
      help: 'TokenChunk messages written (inference_completion_tokens_total / this = tokens per message)',
      labelNames: engine,
      registers,
    }),
    engineEvaluatedTokens: new Counter({
      name: 'inference_engine_evaluated_tokens_total',
      help: "Prompt tokens the engine really evaluated while prefilling calls, as its own meter counts them (engines that keep KV state, e.g. llamacpp's token meter)",
      labelNames: engine,
      registers,
    }),
    engineAlignedTokens: new Counter({
      name: 'inference_engine_aligned_tokens_total',
      help: "Tokens the engine evaluated after a completion so that its KV state holds the chat template's rendering of what it sampled (llamacpp); the next turn's prompt then starts with them",
      labelNames: engine,
      registers,
    }),
    ttft: new Histogram({
      name: 'inference_ttft_seconds',
      help: 'Engine time from request arrival to the first chunk written',
      labelNames: engine,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    inFlight: new Gauge({
      name: 'inference_in_flight',
      help: 'Generate calls in progress',
      labelNames: engine,
      registers,
    }),
    sessionCacheTokens: new Gauge({
      name: 'inference_session_cache_tokens',
      help: 'Tokens held for session prefix reuse',
      labelNames: engine,
      registers,
    }),
    sessionCacheSessions: new Gauge({
      name: 'inference_session_cache_sessions',
      help: 'Sessions held for prefix reuse',
      labelNames: engine,
      registers,
    }),
    sessionCacheHits: new Counter({
      name: 'inference_session_cache_hits_total',
      help: 'Calls whose session was held',
      labelNames: engine,
      registers,
    }),
    sessionCacheMisses: new Counter({
      name: 'inference_session_cache_misses_total',
      help: 'Calls with a session key whose prefix the worker did not hold (each prefix_miss included)',
      labelNames: engine,
      registers,
    }),
    sessionCacheEvictions: new Counter({
      name: 'inference_session_cache_evictions_total',
      help: 'Sessions evicted to respect a bound',
      labelNames: engine,
      registers,
    }),
    prefixIndexBlocks: new Gauge({
      name: 'inference_prefix_index_blocks',
      help: 'Block memberships in the content index of held sequences (one per 64 held tokens at most)',
      labelNames: engine,
      registers,
    }),
    workerSeconds: new Histogram({
      name: 'inference_worker_seconds',
      help: "The worker's own time per Generate call by part: prepare (lookup, assembly, prefix match), engine_read (the engine reading the prompt), keep (after the stream)",
      labelNames: ['engine', 'part'] as const,
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers,
    }),
    sequenceCopies: new Counter({
      name: 'inference_sequence_copies_total',
      help: 'Calls that copied a held prefix into a new log (the prompt diverged from the session, or branched from it) instead of appending in place',
      labelNames: engine,
      registers,
    }),
  };
  // Series exist from the start (at 0), so rates and dashboards work before the first call.
  const label = { engine: info.engine };
  for (const outcome of GENERATE_OUTCOMES) metrics.requests.inc({ ...label, outcome }, 0);
  for (const source of CACHED_TOKEN_SOURCES) metrics.cachedTokensBySource.inc({ ...label, source }, 0);
  for (const c of [
    metrics.promptTokens,
    metrics.cachedTokens,
    metrics.completionTokens,
    metrics.engineEvaluatedTokens,
    metrics.engineAlignedTokens,
    metrics.sessionCacheHits,
    metrics.sessionCacheMisses,
    metrics.sessionCacheEvictions,
    metrics.sequenceCopies,
  ]) {
    c.inc(label, 0);
  }
  for (const g of [
    metrics.inFlight,
    metrics.sessionCacheTokens,
    metrics.sessionCacheSessions,
    metrics.prefixIndexBlocks,
  ])
    g.set(label, 0);
  return metrics;
}
