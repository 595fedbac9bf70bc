import { billingV1 } from '@fastloop/proto';
import type { JobsOptions, Queue } from 'bullmq';
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

/** Adds a record's job within `timeoutMs`. A timed-out add may still land later; the job id makes a retry a no-op then. */
export function addUsageJob(queue: Queue, record: billingV1.UsageRecord, timeoutMs: number): Promise<unknown> {
  const adding = queue.add(USAGE_JOB_NAME, usageJobData(record), { ...USAGE_JOB_OPTIONS, jobId: record.responseId });
  return withTimeout(adding, timeoutMs, 'usage job add');
}
