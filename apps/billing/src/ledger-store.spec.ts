import { billingV1 } from '@fastloop/proto';
import {
  createRedis,
  startLocalRedis,
  startLocalRedisCluster,
  type LocalRedis,
  type LocalRedisCluster,
  type RedisClient,
} from '@fastloop/service-kit';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { LEDGER_FIELDS, LedgerStore, ledgerKeys, type LedgerTotals } from './ledger-store';
import { utcDay } from './usage-job';

const DAY_MS = 24 * 3600 * 1000;
const T0 = Date.UTC(2025, 5, 1, 12);

function usage(overrides: Partial<billingV1.UsageRecord> = {}): billingV1.UsageRecord {
  return billingV1.UsageRecord.fromPartial({
    responseId: 'resp_1',
    tenant: 'acme',
    model: 'gpt-oss-20b',
    inputTokens: 100,
    cachedTokens: 80,
    outputTokens: 20,
    reasoningTokens: 5,
    completedAtMs: T0,
    transport: 'http',
    status: 'completed',
    ...overrides,
  });
}

function totalsOf(records: billingV1.UsageRecord[]): LedgerTotals {
  return {
    requests: records.length,
    input_tokens: records.reduce((s, r) => s + r.inputTokens, 0),
    cached_tokens: records.reduce((s, r) => s + r.cachedTokens, 0),
    output_tokens: records.reduce((s, r) => s + r.outputTokens, 0),
    reasoning_tokens: records.reduce((s, r) => s + r.reasoningTokens, 0),
  };
}

describe('LedgerStore', () => {
  let server: LocalRedis;
  let redis: Redis;
  let ledger: LedgerStore;

  beforeAll(async () => {
    server = await startLocalRedis();
    redis = new Redis(server.url);
    ledger = new LedgerStore(redis, { dedupeTtlSeconds: 60 });
  });
  afterAll(async () => {
    await redis.quit();
    await server.stop();
  });
  beforeEach(() => redis.flushdb());

  it('adds a record to the all-time and daily buckets and indexes its tenant and model', async () => {
    await expect(ledger.apply(usage())).resolves.toBe('applied');
    const expected = {
      requests: '1',
      input_tokens: '100',
      cached_tokens: '80',
      output_tokens: '20',
      reasoning_tokens: '5',
    };
    expect(await redis.hgetall('fastloop:ledger:{acme}:gpt-oss-20b')).toEqual(expected);
    expect(await redis.hgetall(`fastloop:ledger:{acme}:gpt-oss-20b:2025-06-01`)).toEqual(expected);
    expect(await redis.smembers(ledgerKeys.tenants)).toEqual(['acme']);
    expect(await redis.smembers(ledgerKeys.models('acme'))).toEqual(['gpt-oss-20b']);
  });

  it('counts the same response once, however often it is applied', async () => {
    await ledger.apply(usage());
    await expect(ledger.apply(usage())).resolves.toBe('duplicate');
    await expect(ledger.apply(usage({ inputTokens: 999 }))).resolves.toBe('duplicate');
    expect(await redis.hget(ledgerKeys.total('acme', 'gpt-oss-20b'), 'requests')).toBe('1');
    expect(await redis.hget(ledgerKeys.total('acme', 'gpt-oss-20b'), 'input_tokens')).toBe('100');
  });

  it('remembers an applied response for the dedupe TTL', async () => {
    await ledger.apply(usage());
    const ttl = await redis.ttl(ledgerKeys.applied('acme', 'resp_1'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
  });

  it('keeps ids containing ":" apart instead of sharing a key', async () => {
    await ledger.apply(usage({ responseId: 'r1', tenant: 'a:b', model: 'c' }));
    await ledger.apply(usage({ responseId: 'r2', tenant: 'a', model: 'b:c' }));
    const { rows } = await ledger.report();
    expect(rows.map((r) => [r.tenant, r.model, r.requests])).toEqual([
      ['a', 'b:c', 1],
      ['a:b', 'c', 1],
    ]);
  });

  it('writes nothing, not even the marker, when a ledger key has the wrong type', async () => {
    await redis.set(ledgerKeys.daily('acme', 'gpt-oss-20b', utcDay(T0)), 'not a hash');
    await expect(ledger.apply(usage())).rejects.toThrow(/WRONGTYPE/);
    expect(
      await redis.exists(
        ledgerKeys.applied('acme', 'resp_1'),
        ledgerKeys.total('acme', 'gpt-oss-20b'),
        ledgerKeys.models('acme'),
      ),
    ).toBe(0);
    await redis.del(ledgerKeys.daily('acme', 'gpt-oss-20b', utcDay(T0)));
    await expect(ledger.apply(usage())).resolves.toBe('applied');
  });

  it('reports totals equal to the sum over distinct responses for any delivery order with duplicates', async () => {
    const recordArb = fc.record({
      responseId: fc.constantFrom('r1', 'r2', 'r3', 'r4', 'r5', 'r6'),
      tenant: fc.constantFrom('acme', 'globex'),
      model: fc.constantFrom('m1', 'm:2'),
      inputTokens: fc.nat(10_000),
      cachedTokens: fc.nat(10_000),
      outputTokens: fc.nat(10_000),
      reasoningTokens: fc.nat(10_000),
      dayOffset: fc.nat(2),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(recordArb, { maxLength: 25 }), async (drafts) => {
        await redis.flushdb();
        // A response id always carries the same record (it is one response); redeliveries repeat it.
        const byId = new Map<string, billingV1.UsageRecord>();
        for (const d of drafts) {
          if (!byId.has(d.responseId))
            byId.set(d.responseId, usage({ ...d, completedAtMs: T0 + d.dayOffset * DAY_MS }));
        }
        for (const d of drafts) await ledger.apply(byId.get(d.responseId)!);

        const distinct = [...byId.values()];
        const { rows } = await ledger.report();
        const pairs = new Set(distinct.map((r) => `${r.tenant}\u0000${r.model}`));
        expect(rows).toHaveLength(pairs.size);
        for (const row of rows) {
          const mine = distinct.filter((r) => r.tenant === row.tenant && r.model === row.model);
          expect(pickTotals(row)).toEqual(totalsOf(mine));
          for (const day of new Set(mine.map((r) => utcDay(r.completedAtMs)))) {
            const daily = await ledger.report({ tenant: row.tenant, model: row.model, day });
            expect(pickTotals(daily.rows[0])).toEqual(totalsOf(mine.filter((r) => utcDay(r.completedAtMs) === day)));
          }
        }
      }),
      { numRuns: 40 },
    );
  });

  it('filters a report by tenant, model and day and leaves out pairs without usage', async () => {
    await ledger.apply(usage({ responseId: 'r1', tenant: 'acme', model: 'm1' }));
    await ledger.apply(usage({ responseId: 'r2', tenant: 'acme', model: 'm2', completedAtMs: T0 + DAY_MS }));
    await ledger.apply(usage({ responseId: 'r3', tenant: 'globex', model: 'm1' }));
    expect((await ledger.report({ tenant: 'acme' })).rows.map((r) => r.model)).toEqual(['m1', 'm2']);
    expect((await ledger.report({ model: 'm1' })).rows.map((r) => r.tenant)).toEqual(['acme', 'globex']);
    const day = await ledger.report({ tenant: 'acme', day: '2025-06-02' });
    expect(day.rows).toEqual([{ tenant: 'acme', model: 'm2', day: '2025-06-02', ...totalsOf([usage()]) }]);
    expect((await ledger.report({ tenant: 'nobody' })).rows).toEqual([]);
  });

  it('reports one row per day with usage between start and end', async () => {
    await ledger.apply(usage({ responseId: 'r1', model: 'm1' }));
    await ledger.apply(usage({ responseId: 'r2', model: 'm1', completedAtMs: T0 + 2 * DAY_MS }));
    await ledger.apply(usage({ responseId: 'r3', model: 'm2', completedAtMs: T0 + 5 * DAY_MS }));
    const { rows } = await ledger.report({ tenant: 'acme', start: '2025-06-01', end: '2025-06-03' });
    expect(rows.map((r) => [r.model, r.day, r.requests])).toEqual([
      ['m1', '2025-06-01', 1],
      ['m1', '2025-06-03', 1],
    ]);
    await expect(ledger.report({ start: '2025-06-03', end: '2025-06-01' })).rejects.toThrow(RangeError);
    await expect(ledger.report({ start: '2020-01-01', end: '2025-06-01' })).rejects.toThrow(/at most 366 days/);
  });

  it('caps a report at maxRows and says it was truncated', async () => {
    for (let i = 0; i < 5; i++) await ledger.apply(usage({ responseId: `r${i}`, tenant: `t${i}` }));
    expect(await ledger.report({ maxRows: 3 })).toMatchObject({
      truncated: true,
      rows: [{ tenant: 't0' }, { tenant: 't1' }, { tenant: 't2' }],
    });
    expect((await ledger.report({ maxRows: 5 })).truncated).toBe(false);
  });
});

describe('LedgerStore on a real 3-master Redis Cluster', () => {
  let cluster: LocalRedisCluster;
  let redis: RedisClient;

  beforeAll(async () => {
    cluster = await startLocalRedisCluster();
    redis = createRedis(cluster.url);
  }, 60_000);
  afterAll(async () => {
    await redis.quit();
    await cluster.stop();
  });

  it('applies and reports with every key of a script in one hash slot (no CROSSSLOT)', async () => {
    const ledger = new LedgerStore(redis, { dedupeTtlSeconds: 60 });
    await expect(ledger.apply(usage({ tenant: 'a{b}c', model: 'm:1' }))).resolves.toBe('applied');
    await expect(ledger.apply(usage({ tenant: 'a{b}c', model: 'm:1' }))).resolves.toBe('duplicate');
    await ledger.apply(usage({ responseId: 'r2', tenant: 'globex' }));
    const { rows } = await ledger.report();
    expect(rows.map((r) => [r.tenant, r.model, r.requests])).toEqual([
      ['a{b}c', 'm:1', 1],
      ['globex', 'gpt-oss-20b', 1],
    ]);
    expect((await ledger.report({ start: '2025-05-31', end: '2025-06-02' })).rows).toHaveLength(2);
  });
});

function pickTotals(row: LedgerTotals): LedgerTotals {
  return Object.fromEntries(LEDGER_FIELDS.map((f) => [f, row[f]])) as LedgerTotals;
}
