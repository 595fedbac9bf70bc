import { billingV1 } from '@fastloop/proto';
import { UnrecoverableError } from 'bullmq';
import { InvalidUsageJobError, parseUsageJob, utcDay } from './usage-job';

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

describe('parseUsageJob', () => {
  it('decodes the proto3 JSON the producer writes, zero fields omitted', () => {
    expect(parseUsageJob(billingV1.UsageRecord.toJSON(record))).toEqual(record);
  });

  it('reads snake_case field names and ignores unknown fields', () => {
    const parsed = parseUsageJob({
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
    expect(() => parseUsageJob(data)).toThrow(InvalidUsageJobError);
    expect(() => parseUsageJob(data)).toThrow(UnrecoverableError);
  });

  it('names every offending field in one message', () => {
    expect(() => parseUsageJob({ inputTokens: -1 })).toThrow(
      /responseId is required; tenant is required; model is required; inputTokens/,
    );
  });
});

describe('utcDay', () => {
  it('buckets by the UTC calendar day, not the local one', () => {
    expect(utcDay(Date.UTC(2025, 0, 31, 23, 59, 59, 999))).toBe('2025-01-31');
    expect(utcDay(Date.UTC(2025, 1, 1))).toBe('2025-02-01');
  });
});
