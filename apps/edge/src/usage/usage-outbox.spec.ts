import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { billingV1 } from '@fastloop/proto';
import {
  bullmqPrefix,
  createLogger,
  createRedis,
  getFreePort,
  isRedisReachable,
  startLocalRedisCluster,
  type LocalRedisCluster,
} from '@fastloop/service-kit';
import { Queue } from 'bullmq';
import { Registry } from 'prom-client';
import { USAGE_JOB_NAME, USAGE_QUEUE_NAME, usageBatchJobId } from './usage-job';
import { UsageOutbox, type UsageOutboxOptions } from './usage-outbox';
import { RestartableRedis } from '../testing/restartable-redis';
import { queuedRecordCount, queuedResponseIds } from '../testing/queued-usage';
import { registryMetricValue } from '@fastloop/test-kit';

async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const metric = (registry: Registry, name: string): Promise<number> => registryMetricValue(registry, name);

const usage = (responseId: string) =>
  billingV1.UsageRecord.fromPartial({
    responseId,
    tenant: 'acme',
    model: 'gpt-oss-20b',
    inputTokens: 10,
    outputTokens: 3,
    completedAtMs: Date.UTC(2025, 0, 2),
    transport: 'websocket',
    status: 'completed',
  });

describe('UsageOutbox', () => {
  let redis: RestartableRedis;
  let dir: string;
  let reader: Queue | undefined;
  const outboxes: UsageOutbox[] = [];
  const logger = createLogger({ service: 'edge-test', level: 'silent' });

  function outbox(registry: Registry, overrides: Partial<UsageOutboxOptions> = {}): UsageOutbox {
    const o = new UsageOutbox({
      redisUrl: redis.url,
      registry,
      logger,
      dir,
      addTimeoutMs: 500,
      retryBaseMs: 20,
      retryMaxMs: 200,
      closeTimeoutMs: 300,
      ...overrides,
    });
    outboxes.push(o);
    return o;
  }

  /** The queue as billing sees it; created lazily so it first connects to a running Redis. */
  function queue(): Queue {
    return (reader ??= new Queue(USAGE_QUEUE_NAME, { connection: { url: redis.url } }));
  }
  const jobCount = async () => await queue().getJobCountByTypes('waiting', 'active', 'completed', 'failed', 'delayed');
  const recordCount = () => queuedRecordCount(queue());
  // Record files under the root (each outbox writes its own subfolder); WAL segments apart.
  const recordFiles = () => (readdirSync(dir, { recursive: true }) as string[]).filter((n) => n.endsWith('.jsonl'));
  const spillFiles = () => recordFiles().filter((n) => !n.includes('usage-wal-'));

  beforeEach(async () => {
    redis = new RestartableRedis(await getFreePort());
    dir = mkdtempSync(join(tmpdir(), 'fastloop-outbox-'));
  });
  afterEach(async () => {
    await Promise.all(outboxes.splice(0).map((o) => o.close()));
    await reader?.close();
    reader = undefined;
    await redis.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds an enqueued record as a batch job, its id the hash of its response ids, the records as proto3 JSON, with the retry options', async () => {
    await redis.start();
    const registry = new Registry();
    const record = usage('resp_contract');
    outbox(registry).enqueue(record);
    const id = usageBatchJobId([record]);
    expect(id).toMatch(/^batch-[0-9a-f]{64}$/);
    await waitFor(async () => (await queue().getJob(id)) !== undefined, 'the job');
    const job = (await queue().getJob(id))!;
    expect(job.name).toBe(USAGE_JOB_NAME);
    expect(job.data).toEqual(billingV1.UsageBatch.toJSON({ records: [record] }));
    expect(job.opts).toMatchObject({
      attempts: 10,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: { age: 3600, count: 10000 },
      removeOnFail: { age: 604800 },
    });
    await waitFor(
      async () => (await metric(registry, 'fastloop_usage_outbox_enqueued_total')) === 1,
      'the enqueued counter',
    );
  });

  it('adds a record enqueued twice, by one outbox or two, as one job', async () => {
    await redis.start();
    const registry = new Registry();
    const a = outbox(registry);
    a.enqueue(usage('resp_dup'));
    a.enqueue(usage('resp_dup'));
    outbox(new Registry()).enqueue(usage('resp_dup'));
    await waitFor(async () => (await metric(registry, 'fastloop_usage_outbox_enqueued_total')) === 2, 'both adds');
    expect(await jobCount()).toBe(1);
    expect(await queuedResponseIds(queue())).toEqual(['resp_dup']);
  });

  it('keeps records in memory while Redis is down and delivers them once it is back', async () => {
    await redis.start();
    const registry = new Registry();
    const o = outbox(registry);
    o.enqueue(usage('resp_before'));
    await waitFor(async () => (await recordCount()) === 1, 'the first job');
    await reader!.close();
    reader = undefined;

    await redis.stop();
    for (const id of ['resp_down_1', 'resp_down_2', 'resp_down_3']) o.enqueue(usage(id));
    await waitFor(async () => (await metric(registry, 'fastloop_usage_outbox_retried_total')) >= 3, 'a failed attempt');
    expect(await metric(registry, 'fastloop_usage_outbox_buffered')).toBe(3);

    await redis.start(); // same port, empty data set
    await waitFor(async () => (await recordCount()) === 3, 'the buffered records');
    // The jobs are visible in Redis a moment before the outbox has counted its adds as done.
    await waitFor(async () => (await metric(registry, 'fastloop_usage_outbox_buffered')) === 0, 'the buffer to empty');
    expect(await metric(registry, 'fastloop_usage_outbox_spilled_total')).toBe(0);
  });

  it('starts while Redis is unreachable and delivers once Redis comes up', async () => {
    const registry = new Registry();
    outbox(registry).enqueue(usage('resp_early'));
    await waitFor(async () => (await metric(registry, 'fastloop_usage_outbox_retried_total')) >= 1, 'a failed attempt');
    await redis.start();
    await waitFor(async () => (await queuedResponseIds(queue())).includes('resp_early'), 'the job');
  });

  it('adds the records that arrive together as one job, not one job each', async () => {
    await redis.start();
    const registry = new Registry();
    const o = outbox(registry, { batchDelayMs: 50 });
    await waitFor(async () => (await metric(registry, 'fastloop_usage_outbox_buffered')) === 0, 'an idle outbox');
    const addBulk = jest.spyOn(Queue.prototype, 'addBulk');
    const add = jest.spyOn(Queue.prototype, 'add');
    try {
      for (let i = 0; i < 20; i++) {
        o.enqueue(usage(`resp_bulk_${i}`));
        await new Promise((r) => setImmediate(r)); // turns finish one by one, not in one tick
      }
      await waitFor(async () => (await metric(registry, 'fastloop_usage_outbox_enqueued_total')) === 20, 'delivery');
      expect(addBulk).not.toHaveBeenCalled();
      expect(add.mock.calls.length).toBeLessThanOrEqual(2);
      const ids = Array.from({ length: 20 }, (_, i) => `resp_bulk_${i}`);
      expect(
        add.mock.calls.flatMap((c) => (c[1] as { records: { responseId: string }[] }).records.map((r) => r.responseId)),
      ).toEqual(ids);
      expect(await jobCount()).toBe(add.mock.calls.length);
      expect(await queuedResponseIds(queue())).toEqual(expect.arrayContaining(ids));
    } finally {
      addBulk.mockRestore();
      add.mockRestore();
    }
  });

  it('delivers everything still buffered on close() when Redis is up, spilling nothing', async () => {
    await redis.start();
    const registry = new Registry();
    const o = outbox(registry, { batchSize: 7 });
    for (let i = 0; i < 50; i++) o.enqueue(usage(`resp_close_${i}`));
    await o.close();
    expect(await metric(registry, 'fastloop_usage_outbox_enqueued_total')).toBe(50);
    expect(await metric(registry, 'fastloop_usage_outbox_spilled_total')).toBe(0);
    expect(await recordCount()).toBe(50);
    expect(await jobCount()).toBe(Math.ceil(50 / 7));
    expect(spillFiles()).toEqual([]);
  });

  it('spills to a file when closed with Redis down, and a new outbox replays it', async () => {
    const first = new Registry();
    const o = outbox(first);
    for (let i = 0; i < 5; i++) o.enqueue(usage(`resp_spill_${i}`));
    const closing = o.close();
    expect(o.close()).toBe(closing);
    await closing;
    o.enqueue(usage('resp_after_close')); // spilled synchronously
    expect(await metric(first, 'fastloop_usage_outbox_spilled_total')).toBe(6);
    const lines = readFileSync(join(dir, spillFiles()[0]), 'utf8').trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).responseId)).toEqual(
      [0, 1, 2, 3, 4].map((i) => `resp_spill_${i}`).concat('resp_after_close'),
    );

    await redis.start();
    const second = new Registry();
    outbox(second);
    await waitFor(async () => (await recordCount()) === 6, 'the replayed records');
    await waitFor(() => spillFiles().length === 0, 'the spill file to be removed');
    expect(await metric(second, 'fastloop_usage_outbox_replayed_total')).toBe(6);
  });

  it('spills records beyond maxRecords while running and replays them once Redis is back', async () => {
    const registry = new Registry();
    const o = outbox(registry, { maxRecords: 2 });
    for (let i = 0; i < 5; i++) o.enqueue(usage(`resp_over_${i}`));
    await waitFor(async () => (await metric(registry, 'fastloop_usage_outbox_spilled_total')) === 3, 'the spill');
    expect(await metric(registry, 'fastloop_usage_outbox_buffered')).toBe(2);
    await redis.start();
    await waitFor(async () => (await recordCount()) === 5, 'all records');
    await waitFor(() => spillFiles().length === 0, 'the spill file to be removed');
  });

  it('never replays the records of another live outbox sharing the root folder', async () => {
    const liveRegistry = new Registry();
    const live = outbox(liveRegistry, { maxRecords: 1 });
    for (let i = 0; i < 3; i++) live.enqueue(usage(`resp_live_${i}`));
    await waitFor(async () => (await metric(liveRegistry, 'fastloop_usage_outbox_spilled_total')) === 2, 'the spill');
    expect(recordFiles().some((n) => n.includes('usage-wal-'))).toBe(true); // the buffered one
    await redis.start();
    const other = new Registry();
    outbox(other);
    await waitFor(async () => (await recordCount()) === 3, 'the live outbox to deliver its own records');
    expect(await metric(other, 'fastloop_usage_outbox_replayed_total')).toBe(0);
    expect(await metric(liveRegistry, 'fastloop_usage_outbox_replayed_total')).toBe(2);
  });

  it('adopts and replays the WAL of an outbox whose process is gone, once', async () => {
    // A crashed process: its folder still holds an unsettled WAL segment and a lock naming a dead pid.
    const deadDir = join(dir, '999999-dead');
    mkdirSync(deadDir);
    writeFileSync(join(deadDir, 'owner.lock'), '999999');
    const lines = ['resp_wal_1', 'resp_wal_2']
      .map((id) => JSON.stringify(billingV1.UsageRecord.toJSON(usage(id))))
      .join('\n');
    writeFileSync(join(deadDir, 'usage-wal-00000000.jsonl'), `${lines}\n{"torn`);
    await redis.start();
    const registry = new Registry();
    outbox(registry);
    await waitFor(async () => (await recordCount()) === 2, 'the adopted records');
    await waitFor(() => recordFiles().length === 0, 'the adopted file to be removed');
    expect(await metric(registry, 'fastloop_usage_outbox_replayed_total')).toBe(2);
    expect(readdirSync(dir).includes('999999-dead')).toBe(false);
  });

  it('drops, without throwing, a record without a response id (billing could not count it once)', async () => {
    const registry = new Registry();
    const o = outbox(registry);
    expect(() => o.enqueue(usage(''))).not.toThrow();
    expect(await metric(registry, 'fastloop_usage_outbox_dropped_total')).toBe(1);
    expect(await metric(registry, 'fastloop_usage_outbox_buffered')).toBe(0);
  });

  it('rejects invalid options naming the field', () => {
    expect(() => outbox(new Registry(), { maxRecords: 0 })).toThrow(/maxRecords/);
  });
});

describe('UsageOutbox on a real 3-master Redis Cluster', () => {
  let cluster: LocalRedisCluster;
  let dir: string;

  beforeAll(async () => {
    cluster = await startLocalRedisCluster();
    dir = mkdtempSync(join(tmpdir(), 'fastloop-outbox-cluster-'));
  }, 60_000);
  afterAll(async () => {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('queues records under the hash-tagged prefix billing consumes on a cluster, and closes without spilling', async () => {
    const registry = new Registry();
    const o = new UsageOutbox({
      redisUrl: cluster.url,
      registry,
      logger: createLogger({ service: 'edge-test', level: 'silent' }),
      dir,
      addTimeoutMs: 2_000,
    });
    const reader = createRedis(cluster.url);
    const queue = new Queue(USAGE_QUEUE_NAME, { connection: reader, prefix: bullmqPrefix(reader) });
    try {
      const ids = Array.from({ length: 8 }, (_, i) => `resp_cluster_${i}`);
      for (const id of ids) o.enqueue(usage(id));
      await waitFor(
        async () => (await metric(registry, 'fastloop_usage_outbox_enqueued_total')) === ids.length,
        'every add',
      );
      expect((await queuedResponseIds(queue)).sort()).toEqual([...ids].sort());
      await o.close();
      expect(await metric(registry, 'fastloop_usage_outbox_spilled_total')).toBe(0);
    } finally {
      await o.close();
      await queue.close();
      await reader.quit();
    }
  });
});
