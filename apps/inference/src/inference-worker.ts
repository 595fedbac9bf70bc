import type { Logger } from 'pino';
import type { ModelProfile } from '@fastloop/model-profiles';
import { inferenceV1 } from '@fastloop/proto';
import { Gauge, startGrpcServer, type GrpcServer, type Registry } from '@fastloop/service-kit';
import type { InferenceConfig } from './config';
import { createEngine, loadProfile } from './create-engine';
import type { Engine } from './engine';
import { SlotScheduler } from './slot-scheduler';
import { GenerateService } from './generate-service';
import { createInferenceMetrics } from './inference-metrics';
import { SessionCache } from './session-cache';
import { KvEventLog } from './worker-stats/kv-event-log';
import { LoadMeter } from './worker-stats/load-meter';
import { WorkerStatsService } from './worker-stats/worker-stats-service';

/** Fully qualified gRPC service name (also its grpc.health.v1 name). */
export const INFERENCE_SERVICE_NAME = 'fastloop.inference.v1.InferenceService';

/** Options of {@link startInferenceWorker}. */
export interface InferenceWorkerOptions {
  config: InferenceConfig;
  logger: Logger;
  registry: Registry;
  /** Overrides INFERENCE_PROFILE (tests). */
  profile?: ModelProfile;
  /** Overrides INFERENCE_ENGINE (tests pass a fake). */
  engine?: Engine;
}

/** A started worker. Its gRPC health stays NOT_SERVING until the caller sets it. */
export interface InferenceWorker {
  readonly grpc: GrpcServer;
  readonly service: GenerateService;
  readonly engine: Engine;
  readonly sessions: SessionCache;
  readonly profile: ModelProfile;
  /** WatchWorkerStats: the load and KV events routers place by. */
  readonly stats: WorkerStatsService;
  /**
   * Stops accepting calls, lets in-flight ones finish for up to `graceMs`, cancels the rest, then
   * closes the engine and drops the sessions. Idempotent.
   */
  close(graceMs?: number): Promise<void>;
}

/** Builds the engine, the session cache and InferenceService, and serves them on GRPC_PORT. */
export async function startInferenceWorker(options: InferenceWorkerOptions): Promise<InferenceWorker> {
  const { config, logger } = options;
  const profile = options.profile ?? (await loadProfile(config));
  profile.warmUp();
  const meter = new LoadMeter();
  // Metered so the worker can report the prefill queued ahead of a new call (WatchWorkerStats).
  const engine = meter.meter(options.engine ?? (await createEngine(config, profile, logger)));
  const kv = new KvEventLog();
  const metrics = createInferenceMetrics(options.registry, {
    engine: engine.name,
    simulated: engine.simulated,
    profile: profile.id,
    workerId: config.WORKER_ID,
  });
  // The same backlog the router reads (WatchWorkerStats), for Prometheus: what the inference
  // autoscaler scales on (deploy/k8s/base/autoscaling.yaml).
  new Gauge({
    name: 'inference_queued_tokens',
    help: 'Prompt tokens of calls in the engine still to be prefilled (no first token yet): the backlog autoscaling follows',
    labelNames: ['engine'],
    registers: [options.registry],
    collect() {
      this.set({ engine: engine.name }, meter.queuedPrefillTokens);
    },
  });
  const sessions = new SessionCache({
    maxTokens: config.INFERENCE_SESSION_CACHE_TOKENS,
    maxEntries: config.INFERENCE_SESSION_CACHE_ENTRIES,
    onEvict: () => metrics.sessionCacheEvictions.inc({ engine: engine.name }),
    listener: kv,
  });
  const service = new GenerateService({
    engine,
    sessions,
    metrics,
    logger,
    profileStopTokens: profile.stopTokens,
    vocabSize: profile.vocabSize,
    maxConcurrency: config.INFERENCE_MAX_CONCURRENCY,
    slots: new SlotScheduler({
      capacity: config.INFERENCE_MAX_CONCURRENCY,
      waitMs: config.INFERENCE_SLOT_WAIT_MS,
      ...(config.INFERENCE_SLOT_RESERVE >= 0 ? { reserve: config.INFERENCE_SLOT_RESERVE } : {}),
      shares: config.INFERENCE_TENANT_SHARES,
    }),
    maxOutputTokens: config.INFERENCE_MAX_OUTPUT_TOKENS,
    prefixCaching: config.INFERENCE_PREFIX_CACHING,
    maxChunkTokens: config.INFERENCE_MAX_CHUNK_TOKENS,
  });
  const stats = new WorkerStatsService({
    workerId: config.WORKER_ID,
    kv,
    meter,
    inFlight: () => service.inFlightCount,
    held: () => ({ sessions: sessions.size, tokens: sessions.totalTokens, blocks: sessions.index.size }),
    kvCapacityTokens: config.INFERENCE_SESSION_CACHE_TOKENS,
    maxConcurrency: config.INFERENCE_MAX_CONCURRENCY,
    logger,
  });
  const grpc = await startGrpcServer({
    port: config.GRPC_PORT,
    host: config.BIND_HOST,
    logger,
    internalToken: config.FASTLOOP_INTERNAL_TOKEN,
    services: [
      {
        name: INFERENCE_SERVICE_NAME,
        definition: inferenceV1.InferenceServiceService,
        implementation: { ...service.implementation(), watchWorkerStats: stats.handler },
        drain: () => {
          stats.drain();
          service.mux.drain();
        },
      },
    ],
  });
  let closing: Promise<void> | undefined;
  const close = (graceMs = 10_000) =>
    (closing ??= (async () => {
      // Calls still running when the grace period ends are cancelled so their handlers return.
      const timer = setTimeout(() => service.abortAll(), graceMs);
      timer.unref();
      await grpc.close(graceMs);
      clearTimeout(timer);
      service.abortAll();
      await service.whenIdle();
      await engine.close();
      sessions.clear();
    })());
  return { grpc, service, engine, sessions, profile, stats, close };
}
