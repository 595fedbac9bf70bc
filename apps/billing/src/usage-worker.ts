import { Worker, type Job } from 'bullmq';
import { bullmqPrefix, isConnectionError, type RedisClient } from '@fastloop/service-kit';
import type { Logger } from 'pino';
import type { BillingMetrics } from './billing-metrics';
import type { ApplyOutcome, LedgerStore } from './ledger-store';
import { InvalidUsageJobError, readUsageJob, USAGE_QUEUE_NAME } from './usage-job';

export interface UsageProcessorDeps {
  ledger: LedgerStore;
  metrics: BillingMetrics;
  logger: Logger;
}

/** The minimal job shape the processor reads (a BullMQ Job fits; tests pass plain objects). */
export type UsageJob = Pick<Job, 'id' | 'name' | 'data' | 'attemptsMade'>;

/** What a batch job did: records applied, and records skipped as applied already. */
export interface BatchOutcome {
  applied: number;
  duplicate: number;
}

/**
 * Handles one usage job: decode, then one ledger step for its records (one round trip per tenant).
 * Data that is not a job fails at once, never retried (UnrecoverableError); a batch's invalid
 * records fail the job the same way, after its valid ones were applied, so the job stays in
 * `failed` naming them (a retry of it applies nothing twice). A Redis error is rethrown as is, so
 * BullMQ retries the job with its backoff: safe, since the ledger step is idempotent per response id.
 */
export function createUsageProcessor(
  deps: UsageProcessorDeps,
): (job: UsageJob) => Promise<ApplyOutcome | BatchOutcome> {
  return async (job) => {
    const log = deps.logger.child({ jobId: job.id });
    let read;
    try {
      read = readUsageJob(job.name, job.data);
    } catch (err) {
      deps.metrics.failures.inc({ reason: 'invalid' });
      log.error({ err }, 'usage job rejected: invalid data, not retried');
      throw err instanceof InvalidUsageJobError ? err : new InvalidUsageJobError(String(err));
    }
    const stop = deps.metrics.applySeconds.startTimer();
    let outcomes: ApplyOutcome[];
    try {
      outcomes = await deps.ledger.applyAll(read.records);
      stop();
    } catch (err) {
      deps.metrics.failures.inc({ reason: 'redis' });
      log.warn(
        { err, records: read.records.length, attemptsMade: job.attemptsMade },
        'ledger step failed, job will be retried',
      );
      throw err;
    }
    const applied = outcomes.filter((o) => o === 'applied').length;
    deps.metrics.applied.inc(applied);
    deps.metrics.duplicates.inc(outcomes.length - applied);
    log.debug({ records: outcomes.length, applied }, 'usage job done');
    if (read.invalid.length > 0) {
      deps.metrics.failures.inc({ reason: 'invalid' }, read.invalid.length);
      const err = new InvalidUsageJobError(`invalid usage batch: ${read.invalid.join('; ')}`);
      log.error({ err, applied }, 'usage batch: invalid records not applied, job failed (not retried)');
      throw err;
    }
    return read.batch ? { applied, duplicate: outcomes.length - applied } : outcomes[0];
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
