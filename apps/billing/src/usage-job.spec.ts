import { billingV1 } from '@fastloop/proto';
import { UnrecoverableError } from 'bullmq';
import { InvalidUsageJobError, parseUsageRecord, readUsageJob, USAGE_BATCH_JOB_NAME, utcDay } from './usage-job';

const record: billingV1.UsageRecord = {
  responseId: 'resp_1',
  tenant: 'acme',
  model: 'gpt-oss-20b',
  inputTokens: 120,
  cachedTokens: 100,
  outputTokens: 30,
  reasoningTokens: 0,
  completedAtMs: Date.UTC(2025, 0, 31, 23, 59, 59),
  transport: 'websocket',
  status: 'completed',
};

describe('parseUsageRecord', () => {
  it('decodes the proto3 JSON the producer writes, zero fields omitted', () => {
    expect(parseUsageRecord(billingV1.UsageRecord.toJSON(record))).toEqual(record);
  });

  it('reads snake_case field names and ignores unknown fields', () => {
    const parsed = parseUsageRecord({
      response_id: 'r',
      tenant: 't',
      model: 'm',
      input_tokens: 5,
      completed_at_ms: '1700000000000',
      extra: 1,
    });
    expect(parsed).toMatchObject({ responseId: 'r', inputTokens: 5, completedAtMs: 1_700_000_000_000 });
  });

  it.each([
    ['null', null],
    ['an array', [1]],
    ['a string', 'resp_1'],
    ['a record without ids', { inputTokens: 1, completedAtMs: 1 }],
    ['negative tokens', { ...(billingV1.UsageRecord.toJSON(record) as object), outputTokens: -1 }],
    ['fractional tokens', { ...(billingV1.UsageRecord.toJSON(record) as object), inputTokens: 1.5 }],
    ['non-numeric tokens', { ...(billingV1.UsageRecord.toJSON(record) as object), inputTokens: 'many' }],
    ['no completion time', { responseId: 'r', tenant: 't', model: 'm' }],
    ['a completion time past year 9999', { ...(billingV1.UsageRecord.toJSON(record) as object), completedAtMs: 1e16 }],
  ])('rejects %s with an unrecoverable error', (_name, data) => {
    expect(() => parseUsageRecord(data)).toThrow(InvalidUsageJobError);
    expect(() => parseUsageRecord(data)).toThrow(UnrecoverableError);
  });

  it('names every offending field in one message', () => {
    expect(() => parseUsageRecord({ inputTokens: -1 })).toThrow(
      /responseId is required; tenant is required; model is required; inputTokens/,
    );
  });
});

describe('readUsageJob', () => {
  const other = { ...record, responseId: 'resp_2', tenant: 'globex', outputTokens: 7 };

  it('reads a usage-batch job as its records, in order', () => {
    const data = billingV1.UsageBatch.toJSON({ records: [record, other] });
    expect(readUsageJob(USAGE_BATCH_JOB_NAME, data)).toEqual({ batch: true, records: [record, other], invalid: [] });
  });

  it('reads a job of the earlier shape (usage-record, one record as the data) as that record', () => {
    expect(readUsageJob('usage-record', billingV1.UsageRecord.toJSON(record))).toEqual({
      batch: false,
      records: [record],
      invalid: [],
    });
    expect(() => readUsageJob('usage-record', { inputTokens: 1 })).toThrow(InvalidUsageJobError);
  });

  it("keeps a batch's valid records and names each invalid one by its place and id", () => {
    const data = {
      records: [
        billingV1.UsageRecord.toJSON(record),
        { responseId: 'resp_bad', tenant: 't', model: 'm', inputTokens: -1, completedAtMs: 1 },
        'not a record',
        billingV1.UsageRecord.toJSON(other),
      ],
    };
    const read = readUsageJob(USAGE_BATCH_JOB_NAME, data);
    expect(read.records).toEqual([record, other]);
    expect(read.invalid).toEqual([
      'record 1 (resp_bad): inputTokens must be an integer in [0, 2^32)',
      'record 2: not a JSON object',
    ]);
  });

  it.each([
    ['null', null],
    ['a record instead of a batch', billingV1.UsageRecord.toJSON(record)],
    ['records that are no array', { records: { 0: 1 } }],
    ['no records', { records: [] }],
  ])('rejects a batch of %s with an unrecoverable error', (_name, data) => {
    expect(() => readUsageJob(USAGE_BATCH_JOB_NAME, data)).toThrow(InvalidUsageJobError);
  });
});

describe('utcDay', () => {
  it('buckets by the UTC calendar day, not the local one', () => {
    expect(utcDay(Date.UTC(2025, 0, 31, 23, 59, 59, 999))).toBe('2025-01-31');
    expect(utcDay(Date.UTC(2025, 1, 1))).toBe('2025-02-01');
  });
});
