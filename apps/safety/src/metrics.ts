import { Counter, Histogram, type Registry } from '@fastloop/service-kit';

/** The safety service's own series (default process metrics come with the registry). */
export interface SafetyMetrics {
  /** `safety_classifications_total{verdict}`: verdict is allow, block or error. */
  readonly classifications: Counter<'verdict'>;
  /** `safety_classify_duration_seconds`: state check + scan + new state, per call. */
  readonly classifyDuration: Histogram;
  /** `safety_items_scanned_total`: items scanned (only new items: the point of the state). */
  readonly itemsScanned: Counter;
  readonly outputBatches: Counter;
  readonly moderationSessions: Counter;
  /** `safety_findings_total{rule_id,action}`: matches in newly scanned items. */
  readonly findings: Counter<'rule_id' | 'action'>;
  /** `safety_guard_calls_total{result}`: guard model calls by verdict (or unavailable, unreadable, prefix_miss, context_full). */
  readonly guardCalls: Counter<'result'>;
  /** `safety_guard_prompt_tokens_total`: tokens sent to the guard worker (only what is new). */
  readonly guardPromptTokens: Counter;
  /** `safety_guard_cached_tokens_total`: tokens the guard worker reused from its session. */
  readonly guardCachedTokens: Counter;
  /** `safety_guard_prefill_tokens_total`: guard prompt tokens the worker evaluated (prompt − cached). */
  readonly guardPrefillTokens: Counter;
  /** `safety_guard_duration_seconds`: one guard Generate call. */
  readonly guardDuration: Histogram;
}

/** Registers the safety metrics on `registry`. */
export function createSafetyMetrics(registry: Registry): SafetyMetrics {
  return {
    classifications: new Counter({
      name: 'safety_classifications_total',
      help: 'Classify calls by verdict (error = refused request).',
      labelNames: ['verdict'],
      registers: [registry],
    }),
    classifyDuration: new Histogram({
      name: 'safety_classify_duration_seconds',
      help: 'Time to classify one request.',
      // Sub-millisecond buckets: a turn's new items usually scan in microseconds.
      buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    itemsScanned: new Counter({
      name: 'safety_items_scanned_total',
      help: 'Conversation items scanned (batches of streamed output are not items: see safety_output_batches_total).',
      registers: [registry],
    }),
    moderationSessions: new Counter({
      name: 'safety_moderation_sessions_total',
      help: 'Output moderation sessions (ModerateStream calls) started: one per moderated response.',
      registers: [registry],
    }),
    outputBatches: new Counter({
      name: 'safety_output_batches_total',
      help: 'Batches of streamed output moderated (Classify calls with `output`).',
      registers: [registry],
    }),
    guardCalls: new Counter({
      name: 'safety_guard_calls_total',
      help: 'Guard model calls by result.',
      labelNames: ['result'],
      registers: [registry],
    }),
    guardPromptTokens: new Counter({
      name: 'safety_guard_prompt_tokens_total',
      help: 'Prompt tokens sent to the guard worker.',
      registers: [registry],
    }),
    guardCachedTokens: new Counter({
      name: 'safety_guard_cached_tokens_total',
      help: 'Tokens the guard worker reused from its session.',
      registers: [registry],
    }),
    guardPrefillTokens: new Counter({
      name: 'safety_guard_prefill_tokens_total',
      help: 'Guard prompt tokens the worker had to prefill (prompt minus cached).',
      registers: [registry],
    }),
    guardDuration: new Histogram({
      name: 'safety_guard_duration_seconds',
      help: 'One guard Generate call.',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    findings: new Counter({
      name: 'safety_findings_total',
      help: 'Rule matches in newly scanned items.',
      labelNames: ['rule_id', 'action'],
      registers: [registry],
    }),
  };
}
