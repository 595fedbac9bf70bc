import {
  createLogger,
  createMetricsRegistry,
  createRedis,
  installShutdown,
  settleWithin,
  startAdminServer,
  type Logger,
} from '@fastloop/service-kit';
import type { Redis } from 'ioredis';
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
  watchRedis(redis, logger);
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
      // away the graceful close never finishes, so it is forced after 10 s (nothing is lost: jobs
      // live in Redis).
      {
        name: 'close usage worker',
        run: async () => {
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

/** Logs Redis outages once per transition instead of once per reconnect attempt. */
function watchRedis(redis: Redis, logger: Logger): void {
  let down = false;
  redis.on('ready', () => {
    down = false;
    logger.info('redis connected');
  });
  redis.on('error', (err) => {
    if (!down) logger.warn({ err }, 'redis unreachable, retrying');
    down = true;
  });
}

/** QUIT when connected (lets replies drain); a client still reconnecting is just dropped. */
async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') return redis.disconnect();
  await redis.quit().catch(() => redis.disconnect());
}

main().catch((err: unknown) => {
  createLogger({ service: 'billing' }).fatal({ err }, 'billing failed to start');
  process.exit(1);
});
