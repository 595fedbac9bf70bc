import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getProfile, listProfileIds } from '@fastloop/model-profiles';
import {
  closeServer,
  createLogger,
  createMetricsRegistry,
  createRedis,
  Dependencies,
  installShutdown,
  listen,
  startAdminServer,
  startGrpcServer,
  redisAddress,
  watchRedisConnection,
} from '@fastloop/service-kit';
import { ApiKeyAuth } from './auth';
import { BackendClients } from './clients/backend-clients';
import { loadEdgeConfig } from './config';
import { EdgeMetrics } from './edge-metrics';
import { responsesGrpcService } from './grpc/responses-grpc';
import { HttpApi } from './http/http-api';
import { ConnectionLimits } from './session/connection-limits';
import { QueuedBytes } from './session/queued-bytes';
import { StateCacheBudget } from './session/state-cache';
import { ResponseStore } from './store/response-store';
import { StoredItemLookup } from './store/stored-item-lookup';
import { StoredStateLoader } from './store/stored-state-loader';
import { StoreWriter } from './store/store-writer';
import { createRenderPool } from './render-pool/render-pool';
import { EntryRenderCache } from './turn/entry-render-cache';
import { HeaderVerdicts } from './safety/header-verdicts';
import { RouteCache } from './turn/route-cache';
import { DEV_REASONING_KEYS, parseReasoningKeys, ReasoningSeal } from './turn/reasoning-seal';
import type { TurnDeps } from './turn/turn-deps';
import { edgeLimitsFromConfig } from './turn/edge-limits';
import { largeBodyGateFromConfig } from './turn/large-body-gate';
import { UsageOutbox, usageOutboxOptionsFromConfig, UsageReporter } from './usage';
import { WsGateway } from './ws/ws-gateway';
import { wsDeflateFromConfig } from './ws/ws-deflate';
import { warmCatalogProfiles } from './warm-profiles';

async function main(): Promise<void> {
  const config = loadEdgeConfig();
  const logger = createLogger({ service: 'edge', level: config.LOG_LEVEL });
  const registry = createMetricsRegistry('edge');
  // The router may name any profile; build their tokenizer tables before taking traffic.
  for (const id of listProfileIds()) getProfile(id).warmUp();
  const metrics = new EdgeMetrics(registry);
  if (!config.EDGE_REASONING_KEYS)
    logger.warn(
      'EDGE_REASONING_KEYS is not set: using the development key; anyone who knows it can read and forge reasoning encrypted_content',
    );
  const reasoningSeal = new ReasoningSeal(parseReasoningKeys(config.EDGE_REASONING_KEYS ?? DEV_REASONING_KEYS));
  const auth = new ApiKeyAuth(config.FASTLOOP_API_KEYS, config.FASTLOOP_ADMIN_API_KEYS);
  const backends = new BackendClients({
    safetyAddress: config.SAFETY_ADDRESS,
    routerAddress: config.ROUTER_ADDRESS,
    safetyTimeoutMs: config.SAFETY_TIMEOUT_MS,
    routerTimeoutMs: config.ROUTER_TIMEOUT_MS,
    inferenceTimeoutMs: config.INFERENCE_TIMEOUT_MS,
    inferenceIdleTimeoutMs: config.INFERENCE_IDLE_TIMEOUT_MS,
    internalToken: config.FASTLOOP_INTERNAL_TOKEN,
    mux: config.EDGE_GRPC_MUX,
    safetyStreams: config.EDGE_SAFETY_STREAMS,
    workerStreams: config.EDGE_WORKER_STREAMS,
  });
  // The store's commands fail after a bounded wait instead of queueing forever (BullMQ-style
  // `maxRetriesPerRequest: null`): a client asking for a stored response gets a 503, not a hang.
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: 2, commandTimeout: 5_000 });
  // The edge serves without Redis (store: true is answered `store: false`, usage waits in the
  // outbox): an outage is logged once, with the address, and readiness does not depend on it.
  watchRedisConnection(
    redis,
    new Dependencies(logger).track('redis', redisAddress(config.REDIS_URL), { gatesReadiness: false }),
  );
  const store = new ResponseStore(redis, config.EDGE_STORE_TTL_SECONDS);
  const storeWriter = new StoreWriter(store, logger.child({ component: 'store' }), {
    retryForMs: config.EDGE_STORE_RETRY_MS,
    isAvailable: () => redis.status === 'ready',
  });
  const renderCache = new EntryRenderCache(config.EDGE_RENDER_CACHE_ENTRIES, config.EDGE_RENDER_CACHE_TOKENS);
  // Large inputs tokenize on threads of their own, fairly between tenants (issue 17).
  const renderPool = createRenderPool({
    size: config.EDGE_RENDER_THREADS || undefined,
    timeoutMs: config.EDGE_RENDER_TIMEOUT_MS,
    pace: { perSecond: config.EDGE_TENANT_RENDER_MS_PER_SECOND, burst: config.EDGE_TENANT_RENDER_BURST_MS },
    logger: logger.child({ component: 'render-pool' }),
    registry,
  });
  const renderOffload = { pool: renderPool, minCost: config.EDGE_RENDER_POOL_MIN_CHARS };
  const loader = new StoredStateLoader(store, storeWriter, renderCache, reasoningSeal, renderOffload);
  const usage = new UsageOutbox(
    usageOutboxOptionsFromConfig(config, {
      redisUrl: config.REDIS_URL,
      registry,
      logger: logger.child({ component: 'usage' }),
    }),
  );
  const routeCache = new RouteCache(config.EDGE_ROUTE_CACHE_TTL_MS);
  const items = new StoredItemLookup(store, storeWriter);
  const deps: TurnDeps = {
    backends,
    metrics,
    logger,
    renderCache,
    renderOffload,
    routeCache,
    routerReaskTimeoutMs: config.ROUTER_REASK_TIMEOUT_MS,
    routeRevalidation: config.EDGE_ROUTE_REVALIDATION,
    usage,
    store: storeWriter,
    items,
    safetyOverlap: config.EDGE_SAFETY_OVERLAP,
    limits: edgeLimitsFromConfig(config),
    largeBodies: largeBodyGateFromConfig(config, renderPool),
    headerVerdicts: new HeaderVerdicts(config.EDGE_SAFETY_HEADER_CACHE_ENTRIES),
    outputModeration: config.EDGE_OUTPUT_MODERATION
      ? {
          flushMs: config.EDGE_OUTPUT_MODERATION_FLUSH_MS,
          flushChars: config.EDGE_OUTPUT_MODERATION_FLUSH_CHARS,
          inFlight: config.EDGE_OUTPUT_MODERATION_IN_FLIGHT,
        }
      : undefined,
    reasoningSeal,
    compaction: {
      maxSummaryTokens: config.EDGE_COMPACTION_MAX_OUTPUT_TOKENS,
      keepUserChars: config.EDGE_COMPACTION_KEEP_USER_CHARS,
    },
  };
  const budget = new StateCacheBudget(config.EDGE_CACHE_TOTAL_BYTES, metrics);
  const limits = new ConnectionLimits({
    maxConnections: config.EDGE_MAX_CONNECTIONS,
    maxPerTenant: config.EDGE_MAX_CONNECTIONS_PER_TENANT,
  });
  const queuedBytes = new QueuedBytes({
    perConnection: config.EDGE_MAX_QUEUED_BYTES_PER_CONNECTION,
    perTenant: config.EDGE_MAX_QUEUED_BYTES_PER_TENANT,
    perProcess: config.EDGE_MAX_QUEUED_BYTES,
  });
  queuedBytes.register(registry);
  const sessionLimits = {
    queuedBytes,
    connectionCacheBytes: config.EDGE_CONN_CACHE_BYTES,
    maxQueued: config.EDGE_WS_MAX_QUEUED,
    lanes: { maxActive: config.EDGE_WS_MAX_ACTIVE_RESPONSES, maxStreams: config.EDGE_WS_MAX_STREAMS },
    maxPendingSteers: config.EDGE_WS_MAX_PENDING_STEERS,
    maxBufferedBytes: config.EDGE_MAX_BUFFERED_BYTES,
    limits,
  };

  const usageReports = new UsageReporter({
    billingUrl: config.BILLING_URL,
    internalToken: config.FASTLOOP_INTERNAL_TOKEN,
    listModels: () => backends.listModels(),
  });
  const http = new HttpApi({
    deps,
    auth,
    maxBodyBytes: config.EDGE_MAX_BODY_BYTES,
    maxBufferedBytes: config.EDGE_MAX_BUFFERED_BYTES,
    queuedBytes,
    loader,
    store: { store, writer: storeWriter },
    usage: usageReports,
  });
  const ws = new WsGateway({
    deps,
    auth,
    budget,
    loader,
    maxPayloadBytes: config.EDGE_MAX_BODY_BYTES,
    maxConnectionMs: config.EDGE_WS_MAX_CONNECTION_MS,
    deflate: wsDeflateFromConfig(config),
    ...sessionLimits,
  });
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => http.handle(req, res));
  server.on('upgrade', (req, socket, head) => ws.handleUpgrade(req, socket, head));
  await listen(server, config.PORT, config.BIND_HOST);
  const port = (server.address() as AddressInfo).port;

  const grpcBinding = responsesGrpcService({
    deps,
    auth,
    budget,
    loader,
    maxPayloadBytes: config.EDGE_MAX_BODY_BYTES,
    // A gRPC session lives as long as a WebSocket may (one connection core, one limit).
    maxConnectionMs: config.EDGE_WS_MAX_CONNECTION_MS,
    ...sessionLimits,
  });
  // As the WebSocket layer does: messages up to twice the limit get a polite error, larger ones
  // are refused by grpc-js (RESOURCE_EXHAUSTED) before they are buffered whole.
  const grpc = await startGrpcServer({
    port: config.EDGE_GRPC_PORT,
    host: config.BIND_HOST,
    services: [grpcBinding],
    logger,
    maxReceiveMessageLength: config.EDGE_MAX_BODY_BYTES * 2 + 1024,
  });
  const profileIds = await warmCatalogProfiles(() => backends.listModels(), logger, {
    waitMs: config.EDGE_STARTUP_CATALOG_WAIT_MS,
  });
  await renderPool.warm?.(profileIds);
  let ready = true;
  const admin = await startAdminServer({
    port: config.ADMIN_PORT,
    host: config.BIND_HOST,
    registry,
    isReady: () => ready,
    logger,
  });
  grpc.health.set(true);
  logger.info({ port, grpcPort: grpc.port, adminPort: admin.port }, 'ready');

  installShutdown({
    logger,
    steps: [
      {
        name: 'not ready',
        run: () => {
          ready = false;
          grpc.health.set(false);
        },
      },
      // Running responses finish, their store writes land, then 1001: a client that reconnects to
      // another edge finds its last stored response there.
      { name: 'drain websockets', run: () => ws.close(10_000, () => storeWriter.flush()) },
      { name: 'drain http', run: () => closeServer(server) },
      { name: 'drain grpc', run: () => grpc.close() },
      // Usage first: a record must never be lost, and the outbox spills to disk if Redis is away.
      { name: 'flush usage outbox', run: () => usage.close() },
      { name: 'flush store', run: () => storeWriter.flush() },
      {
        name: 'close clients',
        run: async () => {
          backends.close();
          redis.disconnect();
          await renderPool.close();
        },
      },
      { name: 'admin', run: () => admin.close() },
    ],
  });
}

main().catch((err: unknown) => {
  createLogger({ service: 'edge' }).fatal({ err }, 'edge failed to start');
  process.exit(1);
});
