import {
  createLogger,
  createMetricsRegistry,
  installShutdown,
  startAdminServer,
  startGrpcServer,
} from '@fastloop/service-kit';
import { loadCatalog } from './catalog';
import { loadRouterConfig } from './config';
import { createRouterMetrics } from './metrics';
import { Router } from './router';
import { createRouterService } from './router-service';
import { WorkerHealthMonitor } from './worker-health';

async function main(): Promise<void> {
  const { config, workers } = loadRouterConfig();
  const logger = createLogger({ service: 'router', level: config.LOG_LEVEL });
  const catalog = loadCatalog(config.ROUTER_CATALOG_FILE);
  logger.info({ source: catalog.source, models: catalog.models.map((m) => m.id) }, 'model catalog loaded');
  if (workers.length === 0) logger.warn('INFERENCE_WORKERS is empty: every Route will answer no_worker_available');
  const registry = createMetricsRegistry('router');
  const metrics = createRouterMetrics(registry);
  for (const w of workers) metrics.workerHealthy.set({ worker: w.id }, 0);
  const monitor = new WorkerHealthMonitor({
    workers,
    intervalMs: config.ROUTER_HEALTH_INTERVAL_MS,
    timeoutMs: config.ROUTER_HEALTH_TIMEOUT_MS,
    service: config.ROUTER_HEALTH_SERVICE,
    logger,
    onChange: (w, healthy) => metrics.workerHealthy.set({ worker: w.id }, healthy ? 1 : 0),
  });
  monitor.start();
  const router = new Router(catalog, monitor);
  const grpc = await startGrpcServer({
    port: config.GRPC_PORT,
    host: config.BIND_HOST,
    logger,
    internalToken: config.FASTLOOP_INTERNAL_TOKEN,
    services: [createRouterService({ router, metrics, logger })],
  });
  const admin = await startAdminServer({
    port: config.ADMIN_PORT,
    host: config.BIND_HOST,
    registry,
    logger,
    isReady: () => grpc.health.isServing(),
  });
  // Ready once the catalog is loaded: workers may come later (Route answers no_worker_available
  // meanwhile), so the router never waits on, or restarts with, the inference fleet.
  grpc.health.set(true);
  installShutdown({
    logger,
    steps: [
      { name: 'health NOT_SERVING', run: () => grpc.health.set(false) },
      { name: 'drain gRPC', run: () => grpc.close() },
      { name: 'stop worker health checks', run: () => monitor.close() },
      { name: 'close admin server', run: () => admin.close() },
    ],
  });
  logger.info({ grpcPort: grpc.port, adminPort: admin.port, workers: workers.map((w) => w.id) }, 'ready');
}

main().catch((err: unknown) => {
  // Config may be what failed, so this logger uses defaults.
  createLogger({ service: 'router' }).fatal({ err }, 'startup failed');
  process.exit(1);
});
