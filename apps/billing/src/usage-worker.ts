import { Worker, type Job } from 'bullmq';
import { bullmqPrefix, isConnectionError, type RedisClient } from '@fastloop/service-kit';
import type { Logger } from 'pino';
import type { BillingMetrics } from './billing-metrics';
import type { ApplyOutcome, LedgerStore } from './ledger-store';
import { InvalidUsageJobError, parseUsageJob, USAGE_QUEUE_NAME } from './usage-job';

export interface UsageProcessorDeps {
  ledger: LedgerStore;
  metrics: BillingMetrics;
  logger: Logger;
}

/** The minimal job shape the processor reads (a BullMQ Job fits; tests pass plain objects). */
export type UsageJob = Pick<Job, 'id' | 'data' | 'attemptsMade'>;

/**
 * Handles one usage job: decode, then one atomic ledger step. Invalid data throws an
 * UnrecoverableError (failed at once, never retried); a Redis error is rethrown as is, so BullMQ
 * retries it with the job's backoff — safe, since the ledger step is idempotent per response id.
 */
export function createUsageProcessor(deps: UsageProcessorDeps): (job: UsageJob) => Promise<ApplyOutcome> {
  return async (job) => {
    const log = deps.logger.child({ jobId: job.id });
    let record;
    try {
      record = parseUsageJob(job.data);
    } catch (err) {
      deps.metrics.failures.inc({ reason: 'invalid' });
      log.error({ err }, 'usage job rejected: invalid data, not retried');
      throw err instanceof InvalidUsageJobError ? err : new InvalidUsageJobError(String(err));
    }
    const stop = deps.metrics.applySeconds.startTimer();
    try {
      const outcome = await deps.ledger.apply(record);
      stop();
      if (outcome === 'applied') deps.metrics.applied.inc();
      else deps.metrics.duplicates.inc();
      log.debug({ responseId: record.responseId, outcome }, 'usage job done');
      return outcome;
    } catch (err) {
      deps.metrics.failures.inc({ reason: 'redis' });
      log.warn(
        { err, responseId: record.responseId, attemptsMade: job.attemptsMade },
        'ledger step failed, job will be retried',
      );
      throw err;
    }
  };
}

export interface UsageWorkerOptions extends UsageProcessorDeps {
  /**
   * Connection template: BullMQ duplicates it for the worker's own (blocking) connections and
   * closes those itself; the caller still closes this one.
   */
  connection: RedisClient;
  /** Jobs processed at once. Default 16. */
  concurrency?: number;
}

/** Starts consuming `fastloop-usage`. `close()` on the returned worker waits for active jobs. */
export function startUsageWorker(options: UsageWorkerOptions): Worker {
  const worker = new Worker(USAGE_QUEUE_NAME, createUsageProcessor(options), {
    connection: options.connection,
    // The edge's outbox queues with the same prefix (a hash tag on Redis Cluster).
    prefix: bullmqPrefix(options.connection),
    concurrency: options.concurrency ?? 16,
  });
  // Without a listener an 'error' event would throw. Redis outages are logged once by the
  // connection's watcher (billing main); the worker would repeat them on every reconnect attempt.
  worker.on('error', (err) => {
    if (isConnectionError(err)) options.logger.debug({ err }, 'usage worker: redis connection error');
    else options.logger.warn({ err }, 'usage worker error');
  });
  return worker;
}
