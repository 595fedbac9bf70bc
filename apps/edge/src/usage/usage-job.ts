import { billingV1 } from '@fastloop/proto';
import { bullmqPrefix, createRedis, type RedisClient } from '@fastloop/service-kit';
import { Queue, type JobsOptions } from 'bullmq';
import { createHash } from 'node:crypto';
import { withTimeout } from './wakeup';

/**
 * The BullMQ queue usage records go to. The contract (one `usage-batch` job per delivery round,
 * its data the proto3 JSON of `fastloop.billing.v1.UsageBatch`, its id a hash of the records'
 * response ids) is documented in proto/fastloop/billing/v1/usage.proto; the consumer declares the
 * same names in apps/billing/src/usage-job.ts (apps never import apps).
 */
export const USAGE_QUEUE_NAME = 'fastloop-usage';

/** BullMQ job name of a batch of usage records (billing reads the data by it). */
export const USAGE_JOB_NAME = 'usage-batch';

/**
 * Options of every usage job. Retries cover billing-side Redis errors (~17 min over 10 attempts);
 * failed jobs are kept as long as billing remembers applied response ids (7 days), so a replay
 * inside that window is both visible and harmless.
 */
export const USAGE_JOB_OPTIONS = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
} as const satisfies JobsOptions;

/** One record as it is written down (the outbox's files) and sent: its proto3 JSON, zero fields omitted. */
export function usageJobData(record: billingV1.UsageRecord): unknown {
  return billingV1.UsageRecord.toJSON(record);
}

/**
 * The job id of a batch: `batch-` and the hex SHA-256 of its response ids in order, one per line.
 * The same batch added again (a timed-out add that landed after all) is dropped by BullMQ; the
 * same record in another batch is skipped by billing's ledger marker.
 */
export function usageBatchJobId(records: readonly billingV1.UsageRecord[]): string {
  const hash = createHash('sha256');
  for (const r of records) hash.update(`${r.responseId}\n`);
  return `batch-${hash.digest('hex')}`;
}

/**
 * Why billing could not apply this record, or undefined when it can: the ledger marks a record
 * applied by its response id, so one without cannot be counted once. Such a record can never be
 * delivered, so the outbox drops it up front instead of retrying forever.
 */
export function usageRecordIdProblem(responseId: string): string | undefined {
  return responseId === '' ? 'responseId is empty' : undefined;
}

/**
 * Adds the records as one `usage-batch` job within `timeoutMs`: one command for the edge to send
 * and one job for billing to take, whatever the count (a job per record cost billing ~6 Redis
 * commands each, and the edge an add each). A timed-out add may still land later; a retry of the
 * same records is then a no-op (the job id), and of more records a job the ledger dedupes.
 */
export function addUsageJobs(
  queue: Queue,
  records: readonly billingV1.UsageRecord[],
  timeoutMs: number,
): Promise<unknown> {
  // A record enqueued twice in one round goes once, so the batch is the same whichever round it lands in.
  const seen = new Set<string>();
  const distinct = records.filter((r) => !seen.has(r.responseId) && seen.add(r.responseId));
  const data = billingV1.UsageBatch.toJSON({ records: distinct });
  return withTimeout(
    queue.add(USAGE_JOB_NAME, data, { ...USAGE_JOB_OPTIONS, jobId: usageBatchJobId(distinct) }),
    timeoutMs,
    'usage job add',
  );
}

/**
 * The outbox's Redis connection and queue. The connection fails fast (see UsageOutbox); a
 * redis+cluster:// URL gives a Cluster client (the queue then uses a hash-tag prefix).
 */
export function openUsageQueue(redisUrl: string, timeoutMs: number): { redis: RedisClient; queue: Queue } {
  const redis = createRedis(redisUrl, {
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    // ioredis otherwise keeps a never-connected socket's 2 s teardown timer alive after close.
    disconnectTimeout: 200,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
  });
  // The version check sends INFO right after connecting; with the offline queue off a blip there
  // would reject BullMQ's initialisation for good. Billing's worker checks the version instead.
  const queue = new Queue(USAGE_QUEUE_NAME, { connection: redis, prefix: bullmqPrefix(redis), skipVersionCheck: true });
  return { redis, queue };
}
