import {
  createLogger,
  createMetricsRegistry,
  createRedis,
  Dependencies,
  installShutdown,
  redisAddress,
  settleWithin,
  startAdminServer,
  watchRedisConnection,
  type RedisClient,
} from '@fastloop/service-kit';
import { createBillingMetrics } from './billing-metrics';
import { loadBillingConfig } from './billing-config';
import { LedgerStore } from './ledger-store';
import { startUsageReportServer } from './usage-report-server';
import { startUsageWorker } from './usage-worker';

async function main(): Promise<void> {
  const config = loadBillingConfig();
  const logger = createLogger({ service: 'billing', level: config.LOG_LEVEL });
  const registry = createMetricsRegistry('billing');
  const metrics = createBillingMetrics(registry);

  const redis = createRedis(config.REDIS_URL);
  // Not ready until Redis answers; meanwhile one warning names it, and the client keeps retrying.
  const dependencies = new Dependencies(logger);
  watchRedisConnection(redis, dependencies.track('redis', redisAddress(config.REDIS_URL)));
  const ledger = new LedgerStore(redis, { dedupeTtlSeconds: config.BILLING_DEDUPE_TTL_SECONDS });
  const worker = startUsageWorker({
    connection: redis,
    ledger,
    metrics,
    logger,
    concurrency: config.BILLING_CONCURRENCY,
  });

  let draining = false;
  const admin = await startAdminServer({
    port: config.ADMIN_PORT,
    host: config.BIND_HOST,
    registry,
    logger,
    isReady: () => !draining && worker.isRunning() && redis.status === 'ready',
    dependencies,
  });
  if (!config.FASTLOOP_INTERNAL_TOKEN)
    logger.warn(
      "FASTLOOP_INTERNAL_TOKEN is not set: the usage report answers every tenant's ledger to anyone who can reach BILLING_HTTP_PORT",
    );
  const report = await startUsageReportServer({
    port: config.BILLING_HTTP_PORT,
    host: config.BIND_HOST,
    ledger,
    logger,
    internalToken: config.FASTLOOP_INTERNAL_TOKEN,
  });

  installShutdown({
    logger,
    steps: [
      { name: 'not ready', run: () => void (draining = true) },
      { name: 'close usage report', run: () => report.close() },
      // Waits for active jobs; a job cut short by the timeout is redelivered and deduped. With Redis
      // away the graceful close never finishes, so it is forced: at once when Redis is already down
      // (no job can end without its ledger write), else after 10 s. Nothing is lost: jobs live in Redis.
      {
        name: 'close usage worker',
        run: async () => {
          if (redis.status !== 'ready') {
            logger.warn({ redis: redis.status }, 'redis is not connected: closing the usage worker without waiting');
            await settleWithin(worker.close(true), 2_000);
            return;
          }
          if ((await settleWithin(worker.close(), 10_000)) !== 'timeout') return;
          logger.warn('usage worker did not close within 10 s (Redis unreachable?); forcing');
          await settleWithin(worker.close(true), 2_000);
        },
      },
      { name: 'close redis', run: () => closeRedis(redis) },
      { name: 'close admin server', run: () => admin.close() },
    ],
  });

  await worker.waitUntilReady();
  logger.info({ adminPort: admin.port, httpPort: report.port }, 'ready');
}

/** QUIT when connected (lets replies drain); a client still reconnecting is just dropped. */
async function closeRedis(redis: RedisClient): Promise<void> {
  if (redis.status !== 'ready') return redis.disconnect();
  await redis.quit().catch(() => redis.disconnect());
}

main().catch((err: unknown) => {
  createLogger({ service: 'billing' }).fatal({ err }, 'billing failed to start');
  process.exit(1);
});
