import { billingV1 } from '@fastloop/proto';
import { UnrecoverableError } from 'bullmq';

/**
 * The BullMQ queue the edge produces usage jobs on. The contract (job data = proto3 JSON of
 * `fastloop.billing.v1.UsageRecord`, job id = response id) is documented in
 * proto/fastloop/billing/v1/usage.proto; the producer declares the same name in
 * apps/edge/src/usage/usage-job.ts (apps never import apps).
 */
export const USAGE_QUEUE_NAME = 'fastloop-usage';

const MAX_UINT32 = 0xffff_ffff;
// 9999-12-31T23:59:59.999Z: the last instant whose UTC day still prints as YYYY-MM-DD.
const MAX_COMPLETED_AT_MS = 253_402_300_799_999;
const TOKEN_FIELDS = ['inputTokens', 'cachedTokens', 'outputTokens', 'reasoningTokens'] as const;

/**
 * A usage job whose data cannot be a usage record. Retrying cannot fix it, so it extends BullMQ's
 * UnrecoverableError: the job goes straight to `failed` whatever its `attempts`.
 */
export class InvalidUsageJobError extends UnrecoverableError {
  readonly code = 'invalid_usage_job';
  readonly retryable = false;
}

/**
 * Decodes a job's data (read loosely: snake_case or camelCase, unknown fields ignored) and checks
 * what the ledger relies on: the ids that become Redis keys are present, counts are uint32 and the
 * completion time maps to a calendar day.
 *
 * @throws InvalidUsageJobError naming every offending field.
 */
export function parseUsageJob(data: unknown): billingV1.UsageRecord {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new InvalidUsageJobError('invalid usage job: data is not a JSON object');
  }
  const record = billingV1.UsageRecord.fromJSON(data);
  const problems: string[] = [];
  if (record.responseId === '') problems.push('responseId is required');
  if (record.tenant === '') problems.push('tenant is required');
  if (record.model === '') problems.push('model is required');
  for (const field of TOKEN_FIELDS) {
    const v = record[field];
    if (!Number.isInteger(v) || v < 0 || v > MAX_UINT32) problems.push(`${field} must be an integer in [0, 2^32)`);
  }
  const at = record.completedAtMs;
  if (!Number.isSafeInteger(at) || at <= 0 || at > MAX_COMPLETED_AT_MS) {
    problems.push('completedAtMs must be a positive Unix time in milliseconds');
  }
  if (problems.length > 0) throw new InvalidUsageJobError(`invalid usage job: ${problems.join('; ')}`);
  return record;
}

/** The UTC calendar day (`YYYY-MM-DD`) of a Unix time in milliseconds: the daily ledger bucket. */
export function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}
