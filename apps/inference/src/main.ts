import {
  createLogger,
  createMetricsRegistry,
  Dependencies,
  installShutdown,
  startAdminServer,
  untilQuiet,
} from '@fastloop/service-kit';
import { loadInferenceConfig } from './config';
import { watchEngineHealth } from './engine-health';
import { startInferenceWorker } from './inference-worker';

/** Inference worker: InferenceService/Generate in front of one (here: simulated) accelerator. */
async function main(): Promise<void> {
  const config = loadInferenceConfig();
  const logger = createLogger({ service: 'inference', level: config.LOG_LEVEL }).child({ workerId: config.WORKER_ID });
  const registry = createMetricsRegistry('inference');
  const worker = await startInferenceWorker({ config, logger, registry });
  // An engine in front of another server (vLLM, SGLang) depends on it: named once when it does not
  // answer, /readyz 503 with its address meanwhile, and polled until it does.
  const dependencies = new Dependencies(logger);
  const upstream = worker.engine.upstream ? dependencies.track('engine upstream', worker.engine.upstream) : undefined;
  const admin = await startAdminServer({
    port: config.ADMIN_PORT,
    host: config.BIND_HOST,
    registry,
    isReady: () => worker.grpc.health.isServing(),
    dependencies,
    logger,
  });
  // SERVING once started; an engine in front of another server only while that server answers.
  const stopHealthWatch = await watchEngineHealth({
    engine: worker.engine,
    upstream,
    setServing: (serving) => worker.grpc.health.set(serving),
    intervalMs: config.INFERENCE_ENGINE_HEALTH_INTERVAL_MS,
    logger,
  });
  installShutdown({
    logger,
    steps: [
      { name: 'health NOT_SERVING', run: () => (stopHealthWatch(), worker.grpc.health.set(false)) },
      // The router stops sending here at its next health check; calls until then are served, not
      // refused (an idle worker goes straight on).
      {
        name: 'until routers moved',
        run: () =>
          untilQuiet({
            lastArrival: () => worker.service.lastCallAt,
            quietMs: config.INFERENCE_DRAIN_QUIET_MS,
            maxMs: config.INFERENCE_DRAIN_QUIET_MAX_MS,
          }),
      },
      { name: 'drain gRPC and close engine', run: () => worker.close(20_000) },
      { name: 'close admin server', run: () => admin.close() },
    ],
  });
  logger.info(
    {
      grpcPort: worker.grpc.port,
      adminPort: admin.port,
      engine: worker.engine.name,
      simulated: worker.engine.simulated,
      profile: worker.profile.id,
    },
    'ready',
  );
}

main().catch((err: unknown) => {
  // The logger may not exist yet (bad config): write one JSON line the launcher can show.
  process.stderr.write(
    `${JSON.stringify({ level: 'fatal', service: 'inference', msg: 'failed to start', err: String(err) })}\n`,
  );
  process.exit(1);
});
