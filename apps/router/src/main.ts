import {
  createLogger,
  createMetricsRegistry,
  installShutdown,
  startAdminServer,
  startGrpcServer,
} from '@fastloop/service-kit';
import { loadCatalog } from './catalog';
import { loadRouterConfig } from './config';
import { DnsWorkers } from './fleet/dns-workers';
import { Fleet } from './fleet/fleet';
import { createRouterMetrics } from './metrics';
import { createPolicy } from './placement/create-policy';
import { Router } from './router';
import { createRouterService } from './router-service';

const LOAD_KINDS = ['in_flight', 'queued_prefill_tokens', 'sessions', 'kv_tokens', 'kv_capacity_tokens'] as const;

async function main(): Promise<void> {
  const { config, workers } = loadRouterConfig();
  const logger = createLogger({ service: 'router', level: config.LOG_LEVEL });
  const catalog = loadCatalog(config.ROUTER_CATALOG_FILE);
  logger.info({ source: catalog.source, models: catalog.models.map((m) => m.id) }, 'model catalog loaded');
  if (workers.length === 0 && !config.INFERENCE_WORKERS_DNS)
    logger.warn('INFERENCE_WORKERS is empty: every Route will answer no_worker_available');
  const registry = createMetricsRegistry('router');
  const metrics = createRouterMetrics(registry);
  const fleet = new Fleet({
    healthService: config.ROUTER_HEALTH_SERVICE,
    statsIntervalMs: config.ROUTER_STATS_INTERVAL_MS,
    internalToken: config.FASTLOOP_INTERNAL_TOKEN,
    logger,
    onServingChange: (w, serving) => metrics.workerHealthy.set({ worker: w.id }, serving ? 1 : 0),
    onStats: (link) => {
      const l = link.load;
      if (!l) return;
      const values = [l.inFlight, l.queuedPrefillTokens, l.sessions, l.kvTokens, l.kvCapacityTokens];
      LOAD_KINDS.forEach((kind, i) => metrics.workerLoad.set({ worker: link.spec.id, kind }, values[i]));
    },
    onRemoved: (w) => {
      metrics.workerHealthy.remove({ worker: w.id });
      for (const kind of LOAD_KINDS) metrics.workerLoad.remove({ worker: w.id, kind });
    },
  });
  for (const w of workers) metrics.workerHealthy.set({ worker: w.id }, 0);
  fleet.setWorkers('static', workers);
  const dns = config.INFERENCE_WORKERS_DNS
    ? new DnsWorkers({
        target: config.INFERENCE_WORKERS_DNS,
        intervalMs: config.ROUTER_DNS_INTERVAL_MS,
        servers: config.ROUTER_DNS_SERVERS,
        logger,
        onChange: (found) => fleet.setWorkers('dns', found),
      })
    : undefined;
  await dns?.start();
  const policy = createPolicy(config.ROUTER_POLICY, {
    epsilon: config.ROUTER_LOAD_EPSILON,
    sessionEpsilon: Math.max(config.ROUTER_LOAD_EPSILON, config.ROUTER_SESSION_LOAD_EPSILON),
    reuseMs: config.ROUTER_REUSE_MS,
    decodeWeight: config.ROUTER_DECODE_WEIGHT,
  });
  const router = new Router(catalog, fleet, policy);
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
      { name: 'stop watching workers', run: () => (dns?.close(), fleet.close()) },
      { name: 'close admin server', run: () => admin.close() },
    ],
  });
  logger.info(
    {
      grpcPort: grpc.port,
      adminPort: admin.port,
      policy: policy.name,
      workers: workers.map((w) => w.id),
      dns: config.INFERENCE_WORKERS_DNS,
    },
    'ready',
  );
}

main().catch((err: unknown) => {
  // Config may be what failed, so this logger uses defaults.
  createLogger({ service: 'router' }).fatal({ err }, 'startup failed');
  process.exit(1);
});
