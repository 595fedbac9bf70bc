import { billingV1 } from '@fastloop/proto';
import { spawnSync } from 'node:child_process';
import {
  bullmqPrefix,
  createLogger,
  createRedis,
  startLocalRedis,
  startLocalRedisCluster,
  type LocalRedis,
  type LocalRedisCluster,
  type RedisClient,
} from '@fastloop/service-kit';
import { Queue, type Job, type JobsOptions, type Worker } from 'bullmq';
import { Registry } from 'prom-client';
import { createBillingMetrics, type BillingMetrics } from './billing-metrics';
import { LedgerStore, ledgerKeys } from './ledger-store';
import { USAGE_BATCH_JOB_NAME, USAGE_QUEUE_NAME } from './usage-job';
import { createUsageProcessor, startUsageWorker } from './usage-worker';

// The producer's job options as the edge sets them (apps/edge/src/usage/usage-job.ts), with a
// short backoff so the retry test stays fast.
const CONTRACT_OPTIONS: JobsOptions = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 20 },
  removeOnComplete: { age: 3600, count: 10000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

const record = (responseId: string, overrides: Partial<billingV1.UsageRecord> = {}) =>
  billingV1.UsageRecord.fromPartial({
    responseId,
    tenant: 'acme',
    model: 'gpt-oss-20b',
    inputTokens: 1000,
    cachedTokens: 900,
    outputTokens: 50,
    reasoningTokens: 10,
    completedAtMs: Date.UTC(2025, 6, 4, 10),
    transport: 'websocket',
    status: 'completed',
    ...overrides,
  });

describe('usage worker', () => {
  let server: LocalRedis;
  let redis: RedisClient;
  let queue: Queue;
  let worker: Worker;
  let metrics: BillingMetrics;
  let registry: Registry;
  const logger = createLogger({ service: 'billing-test', level: 'silent' });

  beforeAll(async () => {
    server = await startLocalRedis();
    redis = createRedis(server.url);
    queue = new Queue(USAGE_QUEUE_NAME, { connection: { url: server.url } });
    registry = new Registry();
    metrics = createBillingMetrics(registry);
    worker = startUsageWorker({ connection: redis, ledger: new LedgerStore(redis), metrics, logger, concurrency: 4 });
    await worker.waitUntilReady();
  });
  afterAll(async () => {
    await worker.close();
    await queue.close();
    await redis.quit();
    await server.stop();
  });

  /** Resolves with the job once the worker finished it (completed, or failed for good). */
  function finished(jobId: string): Promise<{ job: Job; state: 'completed' | 'failed'; result?: unknown }> {
    return new Promise((resolve) => {
      const onCompleted = (job: Job, result: unknown) => job.id === jobId && done({ job, state: 'completed', result });
      const onFailed = (job: Job | undefined, _err: Error) => {
        if (job?.id === jobId && (job.attemptsMade >= (job.opts.attempts ?? 1) || job.finishedOn))
          done({ job, state: 'failed' });
      };
      const done = (v: { job: Job; state: 'completed' | 'failed'; result?: unknown }) => {
        worker.off('completed', onCompleted);
        worker.off('failed', onFailed);
        resolve(v);
      };
      worker.on('completed', onCompleted);
      worker.on('failed', onFailed);
    });
  }

  const ledgerTotals = (tenant = 'acme', model = 'gpt-oss-20b') => redis.hgetall(ledgerKeys.total(tenant, model));

  it('applies a produced job to the ledger once with the right totals', async () => {
    const r = record('resp_once', { tenant: 'once' });
    const done = finished(r.responseId);
    await queue.add('usage-record', billingV1.UsageRecord.toJSON(r), { ...CONTRACT_OPTIONS, jobId: r.responseId });
    expect((await done).result).toBe('applied');
    expect(await ledgerTotals('once')).toEqual({
      requests: '1',
      input_tokens: '1000',
      cached_tokens: '900',
      output_tokens: '50',
      reasoning_tokens: '10',
    });
    expect(await redis.hgetall(ledgerKeys.daily('once', 'gpt-oss-20b', '2025-07-04'))).toMatchObject({ requests: '1' });
  });

  it('counts a record enqueued twice and redelivered under another job id once', async () => {
    const r = record('resp_twice', { tenant: 'twice' });
    const done = finished(r.responseId);
    await queue.add('usage-record', billingV1.UsageRecord.toJSON(r), { ...CONTRACT_OPTIONS, jobId: r.responseId });
    await queue.add('usage-record', billingV1.UsageRecord.toJSON(r), { ...CONTRACT_OPTIONS, jobId: r.responseId });
    await done;
    // A job removed after completion and produced again gets a new job: the ledger marker catches it.
    const again = finished('resp_twice-replayed');
    await queue.add('usage-record', billingV1.UsageRecord.toJSON(r), {
      ...CONTRACT_OPTIONS,
      jobId: 'resp_twice-replayed',
    });
    expect((await again).result).toBe('duplicate');
    expect(await ledgerTotals('twice')).toMatchObject({ requests: '1', input_tokens: '1000' });
    expect(await metrics.duplicates.get()).toMatchObject({ values: [{ value: 1 }] });
  });

  it('changes nothing when the same job is processed twice directly', async () => {
    const process = createUsageProcessor({ ledger: new LedgerStore(redis), metrics, logger });
    const job = {
      id: 'resp_direct',
      name: 'usage-record',
      data: billingV1.UsageRecord.toJSON(record('resp_direct', { tenant: 'direct' })),
      attemptsMade: 0,
    };
    await expect(process(job)).resolves.toBe('applied');
    await expect(process({ ...job, attemptsMade: 1 })).resolves.toBe('duplicate');
    expect(await ledgerTotals('direct')).toMatchObject({ requests: '1', output_tokens: '50' });
  });

  it('fails a job with invalid data at once, without retrying it', async () => {
    const done = finished('resp_bad');
    await queue.add(
      'usage-record',
      { responseId: 'resp_bad', inputTokens: -5 },
      { ...CONTRACT_OPTIONS, jobId: 'resp_bad' },
    );
    const { job, state } = await done;
    expect(state).toBe('failed');
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toMatch(/tenant is required/);
    expect(await queue.getJobState('resp_bad')).toBe('failed');
    expect(await metrics.failures.get()).toMatchObject({ values: [{ labels: { reason: 'invalid' }, value: 1 }] });
  });

  it('retries a job whose ledger step failed in Redis and counts it once when it succeeds', async () => {
    const r = record('resp_retry', { tenant: 'retry' });
    // A wrong-typed ledger key makes the Lua step fail; clear it after the first failed attempt.
    await redis.set(ledgerKeys.total('retry', 'gpt-oss-20b'), 'oops');
    const firstFailure = new Promise<void>((resolve) =>
      worker.once('failed', (job) => (job?.id === r.responseId ? resolve() : undefined)),
    );
    const done = finished(r.responseId);
    await queue.add('usage-record', billingV1.UsageRecord.toJSON(r), { ...CONTRACT_OPTIONS, jobId: r.responseId });
    await firstFailure;
    await redis.del(ledgerKeys.total('retry', 'gpt-oss-20b'));
    const { state, job } = await done;
    expect(state).toBe('completed');
    expect(job.attemptsMade).toBeGreaterThanOrEqual(1);
    expect(await ledgerTotals('retry')).toMatchObject({ requests: '1' });
    const failures = (await metrics.failures.get()).values.find((v) => v.labels.reason === 'redis');
    expect(failures?.value).toBeGreaterThanOrEqual(1);
  });

  const batchData = (...records: billingV1.UsageRecord[]) => billingV1.UsageBatch.toJSON({ records });
  const counter = async (c: { get(): Promise<{ values: { labels: object; value: number }[] }> }, reason?: string) =>
    (await c.get()).values.find((v) => reason === undefined || (v.labels as { reason?: string }).reason === reason)
      ?.value ?? 0;

  it("applies a batch job's records, of several tenants, each once, skipping those applied already", async () => {
    const early = record('resp_b_early', { tenant: 'batch-a' });
    const first = finished(early.responseId);
    await queue.add('usage-record', billingV1.UsageRecord.toJSON(early), {
      ...CONTRACT_OPTIONS,
      jobId: early.responseId,
    });
    await first;
    const [applied0, duplicates0] = [await counter(metrics.applied), await counter(metrics.duplicates)];
    const records = [
      record('resp_b_1', { tenant: 'batch-a', outputTokens: 1 }),
      early,
      record('resp_b_2', { tenant: 'batch-b', outputTokens: 2 }),
      record('resp_b_3', { tenant: 'batch-a', outputTokens: 3 }),
    ];
    const done = finished('batch-1');
    await queue.add(USAGE_BATCH_JOB_NAME, batchData(...records), { ...CONTRACT_OPTIONS, jobId: 'batch-1' });
    expect((await done).result).toEqual({ applied: 3, duplicate: 1 });
    expect(await ledgerTotals('batch-a')).toMatchObject({ requests: '3', output_tokens: String(50 + 1 + 3) });
    expect(await ledgerTotals('batch-b')).toMatchObject({ requests: '1', output_tokens: '2' });
    expect(await redis.smembers(ledgerKeys.tenants)).toEqual(expect.arrayContaining(['batch-a', 'batch-b']));
    expect(await counter(metrics.applied)).toBe(applied0 + 3);
    expect(await counter(metrics.duplicates)).toBe(duplicates0 + 1);
  });

  it("applies a batch's valid records and fails it for good, naming the invalid ones", async () => {
    const invalid0 = await counter(metrics.failures, 'invalid');
    const good = record('resp_bi_good', { tenant: 'batch-invalid' });
    const done = finished('batch-invalid');
    await queue.add(
      USAGE_BATCH_JOB_NAME,
      { records: [billingV1.UsageRecord.toJSON(good), { responseId: 'resp_bi_bad', model: 'm', completedAtMs: 1 }] },
      { ...CONTRACT_OPTIONS, jobId: 'batch-invalid' },
    );
    const { job, state } = await done;
    expect(state).toBe('failed');
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toMatch(/record 1 \(resp_bi_bad\): tenant is required/);
    expect(await ledgerTotals('batch-invalid')).toMatchObject({ requests: '1' });
    expect(await counter(metrics.failures, 'invalid')).toBe(invalid0 + 1);
  });

  it('retries a batch whose ledger step failed for one tenant and counts every record once', async () => {
    const records = [
      record('resp_br_ok', { tenant: 'batch-retry-ok' }),
      record('resp_br_bad', { tenant: 'batch-retry' }),
    ];
    await redis.set(ledgerKeys.total('batch-retry', 'gpt-oss-20b'), 'oops');
    const firstFailure = new Promise<void>((resolve) =>
      worker.once('failed', (job) => (job?.id === 'batch-retry' ? resolve() : undefined)),
    );
    const done = finished('batch-retry');
    await queue.add(USAGE_BATCH_JOB_NAME, batchData(...records), { ...CONTRACT_OPTIONS, jobId: 'batch-retry' });
    await firstFailure;
    // The other tenant's record was applied by the failed attempt: the retry skips it.
    expect(await ledgerTotals('batch-retry-ok')).toMatchObject({ requests: '1' });
    await redis.del(ledgerKeys.total('batch-retry', 'gpt-oss-20b'));
    const { state, result } = await done;
    expect(state).toBe('completed');
    expect(result).toEqual({ applied: 1, duplicate: 1 });
    expect(await ledgerTotals('batch-retry-ok')).toMatchObject({ requests: '1' });
    expect(await ledgerTotals('batch-retry')).toMatchObject({ requests: '1' });
  });
});

describe('usage worker on a real 3-master Redis Cluster', () => {
  let cluster: LocalRedisCluster;
  let redis: RedisClient;
  let producer: RedisClient;
  let queue: Queue;
  let worker: Worker;
  const logger = createLogger({ service: 'billing-test', level: 'silent' });

  beforeAll(async () => {
    cluster = await startLocalRedisCluster();
    redis = createRedis(cluster.url);
    producer = createRedis(cluster.url);
    // The edge's outbox produces with the same prefix (service-kit bullmqPrefix: a hash tag here).
    expect(bullmqPrefix(producer)).toBe('{bull}');
    queue = new Queue(USAGE_QUEUE_NAME, { connection: producer, prefix: bullmqPrefix(producer) });
    const metrics = createBillingMetrics(new Registry());
    worker = startUsageWorker({ connection: redis, ledger: new LedgerStore(redis), metrics, logger, concurrency: 4 });
    await worker.waitUntilReady();
  }, 60_000);
  afterAll(async () => {
    await worker.close();
    await queue.close();
    await producer.quit();
    await redis.quit();
    await cluster.stop();
  });

  it('applies a batch of many tenants, whose ledger keys span the nodes, exactly once', async () => {
    const tenants = Array.from({ length: 12 }, (_, i) => `tenant-${i}`);
    const applied = new Promise<unknown>((resolve) => worker.on('completed', (_job, result) => resolve(result)));
    const records = tenants.map((tenant) => record(`resp_${tenant}`, { tenant }));
    // Every tenant twice: the second of each is a duplicate within the same batch.
    await queue.add(USAGE_BATCH_JOB_NAME, billingV1.UsageBatch.toJSON({ records: [...records, ...records] }), {
      ...CONTRACT_OPTIONS,
      jobId: 'batch-cluster',
    });
    expect(await applied).toEqual({ applied: 12, duplicate: 12 });
    for (const tenant of tenants)
      expect(await redis.hgetall(ledgerKeys.total(tenant, 'gpt-oss-20b'))).toMatchObject({
        requests: '1',
        input_tokens: '1000',
      });
    // The ledger's keys landed on more than one node: the cluster was really exercised.
    const nodesUsed = new Set(tenants.map((t) => clusterKeySlotOwner(cluster, ledgerKeys.total(t, 'gpt-oss-20b'))));
    expect(nodesUsed.size).toBeGreaterThan(1);
  });
});

/** The port of the node serving `key`'s slot (CLUSTER KEYSLOT, then CLUSTER SLOTS), by asking redis-cli. */
function clusterKeySlotOwner(cluster: LocalRedisCluster, key: string): number {
  const port = String(cluster.nodes[0].port);
  const slot = Number(spawnSync('redis-cli', ['-p', port, 'CLUSTER', 'KEYSLOT', key], { encoding: 'utf8' }).stdout);
  const shards = JSON.parse(
    spawnSync('redis-cli', ['-p', port, '--json', 'CLUSTER', 'SLOTS'], { encoding: 'utf8' }).stdout,
  ) as [number, number, [string, number]][];
  return shards.find(([from, to]) => slot >= from && slot <= to)![2][1];
}
