import { billingV1 } from '@fastloop/proto';
import { UnrecoverableError } from 'bullmq';

/**
 * The BullMQ queue the edge produces usage jobs on. The contract (a `usage-batch` job's data =
 * proto3 JSON of `fastloop.billing.v1.UsageBatch`; earlier edges' `usage-record` jobs, one
 * UsageRecord each) is documented in proto/fastloop/billing/v1/usage.proto; the producer declares
 * the same names in apps/edge/src/usage/usage-job.ts (apps never import apps).
 */
export const USAGE_QUEUE_NAME = 'fastloop-usage';

/** Job name of a batch of records; any other name is read as one record (the earlier shape). */
export const USAGE_BATCH_JOB_NAME = 'usage-batch';

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

/** What a usage job asks of the ledger. */
export interface UsageJobRecords {
  /** Whether the job is a batch (else one record, the earlier shape). */
  batch: boolean;
  /** The records to apply, in the job's order. */
  records: billingV1.UsageRecord[];
  /** One line per record of a batch that cannot be applied, naming its place and every problem. */
  invalid: string[];
}

/**
 * Reads a job by its name: a `usage-batch` job's records, each checked as {@link parseUsageRecord}
 * does (an invalid one is reported, the others still applied), else the job's data as one record.
 *
 * @throws InvalidUsageJobError when the data is not the job's shape, or its one record is invalid.
 */
export function readUsageJob(name: string, data: unknown): UsageJobRecords {
  if (name !== USAGE_BATCH_JOB_NAME) return { batch: false, records: [parseUsageRecord(data)], invalid: [] };
  const items = isObject(data) ? data['records'] : undefined;
  if (!Array.isArray(items) || items.length === 0) {
    throw new InvalidUsageJobError('invalid usage batch: data is not a JSON object with a non-empty records array');
  }
  const records: billingV1.UsageRecord[] = [];
  const invalid: string[] = [];
  items.forEach((item: unknown, i) => {
    const checked = checkRecord(item);
    if (typeof checked !== 'string') return void records.push(checked);
    const id = isObject(item) ? (item['responseId'] ?? item['response_id']) : undefined;
    invalid.push(`record ${i}${typeof id === 'string' && id !== '' ? ` (${id})` : ''}: ${checked}`);
  });
  return { batch: true, records, invalid };
}

/**
 * Decodes one record (read loosely: snake_case or camelCase, unknown fields ignored) and checks
 * what the ledger relies on: the ids that become Redis keys are present, counts are uint32 and the
 * completion time maps to a calendar day.
 *
 * @throws InvalidUsageJobError naming every offending field.
 */
export function parseUsageRecord(data: unknown): billingV1.UsageRecord {
  const checked = checkRecord(data);
  if (typeof checked === 'string') throw new InvalidUsageJobError(`invalid usage record: ${checked}`);
  return checked;
}

function isObject(data: unknown): data is Record<string, unknown> {
  return typeof data === 'object' && data !== null && !Array.isArray(data);
}

/** The record, or what is wrong with it (every offending field). */
function checkRecord(data: unknown): billingV1.UsageRecord | string {
  if (!isObject(data)) return 'not a JSON object';
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
  return problems.length > 0 ? problems.join('; ') : record;
}

/** The UTC calendar day (`YYYY-MM-DD`) of a Unix time in milliseconds: the daily ledger bucket. */
export function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}
