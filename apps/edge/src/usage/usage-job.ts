import { billingV1 } from '@fastloop/proto';
import { bullmqPrefix, createRedis, type RedisClient } from '@fastloop/service-kit';
import { Queue, type JobsOptions } from 'bullmq';
import { withTimeout } from './wakeup';

/**
 * The BullMQ queue usage records go to. The contract (job data = proto3 JSON of
 * `fastloop.billing.v1.UsageRecord`, job id = response id) is documented in
 * proto/fastloop/billing/v1/usage.proto; the consumer declares the same name in
 * apps/billing/src/usage-job.ts (apps never import apps).
 */
export const USAGE_QUEUE_NAME = 'fastloop-usage';

/** BullMQ job name of a usage record; the consumer does not dispatch on it. */
export const USAGE_JOB_NAME = 'usage-record';

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

/** The job data of one record: its proto3 JSON (zero fields omitted), as the contract says. */
export function usageJobData(record: billingV1.UsageRecord): unknown {
  return billingV1.UsageRecord.toJSON(record);
}

/**
 * Why BullMQ would refuse this record's response id as a job id, or undefined when it is usable.
 * Such a record can never be enqueued, so the outbox drops it up front instead of retrying forever
 * (an empty id would even make BullMQ invent one and defeat deduplication).
 */
export function usageJobIdProblem(responseId: string): string | undefined {
  if (responseId === '') return 'responseId is empty';
  if (responseId.includes(':')) return 'responseId contains ":"';
  if (`${Number.parseInt(responseId, 10)}` === responseId) return 'responseId is an integer';
  return undefined;
}

/**
 * Adds the records' jobs in one round trip (BullMQ `addBulk`: one MULTI of the adds) within
 * `timeoutMs`; all or none are accepted. A timed-out add may still land later; the job ids make a
 * retry a no-op then. One add per record cost the edge a command's bookkeeping and a socket write each.
 */
export function addUsageJobs(
  queue: Queue,
  records: readonly billingV1.UsageRecord[],
  timeoutMs: number,
): Promise<unknown> {
  const jobs = records.map((r) => ({
    name: USAGE_JOB_NAME,
    data: usageJobData(r),
    opts: { ...USAGE_JOB_OPTIONS, jobId: r.responseId },
  }));
  return withTimeout(queue.addBulk(jobs), timeoutMs, 'usage job add');
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
