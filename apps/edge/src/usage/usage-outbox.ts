import { resolve } from 'node:path';
import type { billingV1 } from '@fastloop/proto';
import { Queue } from 'bullmq';
import { bullmqPrefix, createRedis, type RedisClient } from '@fastloop/service-kit';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { createOutboxMetrics, type OutboxMetrics } from './outbox-metrics';
import { acquireOutboxDirectory, type OutboxDirectory } from './outbox-directory';
import { OutboxSpillFile } from './outbox-spill-file';
import { OutboxWal } from './outbox-wal';
import { RecordFifo } from './record-fifo';
import { USAGE_JOB_NAME, USAGE_JOB_OPTIONS, USAGE_QUEUE_NAME, usageJobData, usageJobIdProblem } from './usage-job';
import { Wakeup, withTimeout } from './wakeup';

type UsageRecord = billingV1.UsageRecord;

/** Options of a {@link UsageOutbox}; every bound has a documented default. */
export interface UsageOutboxOptions {
  /** Redis holding the `fastloop-usage` queue, e.g. `redis://127.0.0.1:6379`. */
  redisUrl: string;
  /** Registry for the `fastloop_usage_outbox_*` series. */
  registry: Registry;
  logger: Logger;
  /**
   * Most records held in memory (waiting + being sent); further records go to the spill file
   * until Redis catches up. Default 100,000 (a few hundred bytes each: tens of MB at worst).
   * A replay adds one chunk read back from disk (256 KiB of records) on top.
   */
  maxRecords?: number;
  /**
   * Root folder, resolved against the cwd; default `.fastloop/outbox`. Each process writes its own
   * locked subfolder (WAL and spill files) and adopts the subfolders of processes that are gone.
   */
  dir?: string;
  /** How long `close()` keeps delivering before it spills what is left; default 5000 ms. */
  closeTimeoutMs?: number;
  /** Limit of one delivery attempt (connect wait included); default 2000 ms. */
  addTimeoutMs?: number;
  /** Records sent per round (pipelined on one connection); default 256. */
  batchSize?: number;
  /** First retry delay after a failed round, doubled per failure up to `retryMaxMs`; default 250 ms. */
  retryBaseMs?: number;
  /** Longest retry delay; default 5000 ms. A reconnect cuts the wait short. */
  retryMaxMs?: number;
}

const optionsSchema = z.object({
  maxRecords: z.number().int().min(1).default(100_000),
  dir: z.string().min(1).default('.fastloop/outbox'),
  closeTimeoutMs: z.number().int().min(0).default(5000),
  addTimeoutMs: z.number().int().min(1).default(2000),
  batchSize: z.number().int().min(1).default(256),
  retryBaseMs: z.number().int().min(1).default(250),
  retryMaxMs: z.number().int().min(1).default(5000),
});

type Step = 'sent' | 'failed' | 'idle';

/**
 * Hands usage records to the billing queue off the critical path, losing none while Redis is away.
 *
 * `enqueue` is synchronous and never throws: the record joins a bounded in-memory buffer that one
 * background loop delivers (`Queue.add`, job id = response id, so redelivery is harmless), with
 * exponential backoff while Redis fails. Past the bound, and for whatever is left when `close()`
 * times out, records go to an fsynced spill file (see {@link OutboxSpillFile}); spilled records are
 * replayed once the buffer is empty, and on the next start.
 *
 * Its Redis connection fails fast on purpose (no offline queue, no per-request retries, command
 * timeout): BullMQ's usual `maxRetriesPerRequest: null` would park every add until Redis returns,
 * and the retry loop here could not tell a slow add from a lost one.
 */
export class UsageOutbox {
  private readonly opts: z.infer<typeof optionsSchema>;
  private readonly log: Logger;
  private readonly metrics: OutboxMetrics;
  private readonly redis: RedisClient;
  private readonly queue: Queue;
  private readonly spillFile: OutboxSpillFile;
  private readonly directory: OutboxDirectory;
  private readonly wal: OutboxWal;
  private readonly buffer = new RecordFifo<UsageRecord>();
  /** Records taken from `buffer` by the round in progress. */
  private inflight = 0;
  private state: 'running' | 'closing' | 'closed' = 'running';
  /** New records or close: wakes the idle loop. */
  private readonly work = new Wakeup();
  /** Redis ready again or close: cuts a retry delay short. */
  private readonly retry = new Wakeup();
  private readonly loop: Promise<void>;
  private closing?: Promise<void>;
  private stopAt = Number.POSITIVE_INFINITY;
  private degraded = false;
  private spillQueue: UsageRecord[] = [];
  private spillWriter?: Promise<void>;
  /** True at start: a previous process may have left records behind. */
  private spillMayHaveRecords = true;
  private replay?: { files: string[]; offset: number; pending: RecordFifo<UsageRecord> };

  constructor(options: UsageOutboxOptions) {
    const parsed = optionsSchema.safeParse(options);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw new RangeError(`UsageOutbox: invalid options: ${problems}`);
    }
    this.opts = parsed.data;
    this.log = options.logger.child({ component: 'usage-outbox' });
    this.metrics = createOutboxMetrics(options.registry);
    this.directory = acquireOutboxDirectory(resolve(this.opts.dir));
    if (this.directory.adopted > 0)
      this.log.info({ files: this.directory.adopted }, 'adopted usage records of an outbox whose process is gone');
    this.spillFile = new OutboxSpillFile(this.directory.dir);
    this.wal = new OutboxWal(this.directory.dir);
    // createRedis: a redis+cluster:// URL gives a Cluster client (the queue then uses a hash-tag prefix).
    this.redis = createRedis(options.redisUrl, {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      connectTimeout: this.opts.addTimeoutMs,
      commandTimeout: this.opts.addTimeoutMs,
      // ioredis otherwise keeps a never-connected socket's 2 s teardown timer alive after close.
      disconnectTimeout: 200,
      retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
    });
    this.redis.on('error', (err) => this.noteDown(err));
    this.redis.on('ready', () => {
      this.noteUp();
      this.retry.notify();
    });
    // The version check sends INFO right after connecting; with the offline queue off a blip there
    // would reject BullMQ's initialisation for good. Billing's worker checks the version instead.
    this.queue = new Queue(USAGE_QUEUE_NAME, {
      connection: this.redis,
      prefix: bullmqPrefix(this.redis),
      skipVersionCheck: true,
    });
    this.queue.on('error', (err) => this.log.debug({ err }, 'usage queue error'));
    this.loop = this.run();
  }

  /**
   * Accepts one record for delivery. Synchronous, O(1), never throws, never waits for Redis.
   * A record whose response id BullMQ cannot use as a job id is dropped and logged.
   */
  enqueue(record: UsageRecord): void {
    try {
      const problem = usageJobIdProblem(record.responseId);
      if (problem !== undefined) {
        this.metrics.dropped.inc({ reason: 'invalid_record' });
        this.log.error({ responseId: record.responseId, problem }, 'usage record dropped: unusable response id');
        return;
      }
      const copy = { ...record }; // the caller may reuse its object
      if (this.state === 'closed') return this.spillAfterClose(copy);
      this.logAhead(copy);
      if (this.buffer.length + this.inflight >= this.opts.maxRecords) return this.spill([copy]);
      this.buffer.push(copy);
      this.updateGauge();
      this.work.notify();
    } catch (err) {
      this.log.error({ err, responseId: record?.responseId }, 'usage outbox enqueue failed');
    }
  }

  /** Writes the record to the WAL before anything else holds it; a failed write is logged, not fatal. */
  private logAhead(record: UsageRecord): void {
    try {
      this.wal.append(record);
    } catch (err) {
      this.log.error({ err, responseId: record.responseId }, 'usage WAL write failed; the record is only in memory');
    }
  }

  /**
   * Delivers what it can within `closeTimeoutMs`, spills the rest, then closes its connection.
   * Idempotent; records enqueued afterwards are spilled synchronously.
   */
  close(): Promise<void> {
    return (this.closing ??= this.shutdown());
  }

  private async shutdown(): Promise<void> {
    this.state = 'closing';
    this.stopAt = Date.now() + this.opts.closeTimeoutMs;
    this.work.notify();
    this.retry.notify();
    await this.loop;
    this.state = 'closed';
    const left = this.buffer.drain();
    this.updateGauge();
    if (left.length > 0) {
      this.log.warn({ count: left.length }, 'usage outbox closing with undelivered records: spilling them');
      this.spill(left);
    }
    while (this.spillWriter) await this.spillWriter;
    await this.spillFile.settled();
    // Whatever is not settled now stays in the WAL, and the released folder is adopted next start.
    this.wal.close();
    this.directory.release();
    await withTimeout(this.queue.close(), 1000, 'queue close').catch((err: unknown) =>
      this.log.debug({ err }, 'usage queue close failed'),
    );
    if (this.redis.status === 'ready')
      await withTimeout(this.redis.quit(), 1000, 'redis quit').catch(() => this.redis.disconnect());
    else this.redis.disconnect();
    this.log.info({ spilled: left.length }, 'usage outbox closed');
  }

  /** The one delivery loop: buffer first, then spilled records, until closed or past the deadline. */
  private async run(): Promise<void> {
    let failures = 0;
    while (Date.now() < this.stopAt) {
      let step: Step;
      try {
        step = await this.step();
      } catch (err) {
        this.log.error({ err }, 'usage outbox step failed');
        step = 'failed';
      }
      if (step === 'idle') {
        // Records may have arrived while the step was away on disk I/O.
        if (this.buffer.length > 0) continue;
        if (this.state !== 'running') return;
        await this.work.wait();
      } else if (step === 'failed') {
        failures++;
        await this.retry.wait(Math.min(this.backoffMs(failures), this.stopAt - Date.now()));
      } else {
        failures = 0;
      }
    }
  }

  private step(): Promise<Step> {
    if (this.buffer.length > 0) return this.send(this.buffer, false);
    // While closing, spilled records stay where they are: they are durable already.
    if (this.state !== 'running') return Promise.resolve('idle');
    return this.stepReplay();
  }

  /** Sends one batch from `fifo`; what Redis did not accept goes back to its front. */
  private async send(fifo: RecordFifo<UsageRecord>, fromSpill: boolean): Promise<Step> {
    if (this.redis.status !== 'ready') {
      // Not an outage by itself (it is also the first moments after start): the connection's
      // 'error' event reports real ones, and its 'ready' event cuts the retry delay short.
      this.metrics.retried.inc(Math.min(fifo.length, this.opts.batchSize));
      return 'failed';
    }
    const batch = fifo.take(this.opts.batchSize);
    if (!fromSpill) this.inflight = batch.length;
    const timeoutMs = Math.max(1, Math.min(this.opts.addTimeoutMs, this.stopAt - Date.now()));
    const results = await Promise.allSettled(batch.map((r) => this.add(r, timeoutMs)));
    const failed = batch.filter((_, i) => results[i].status === 'rejected');
    fifo.putBack(failed);
    if (!fromSpill) this.wal.settle(batch.filter((_, i) => results[i].status === 'fulfilled'));
    if (!fromSpill) this.inflight = 0;
    this.updateGauge();
    const accepted = batch.length - failed.length;
    if (accepted > 0) this.metrics.enqueued.inc(accepted);
    if (accepted > 0 && fromSpill) this.metrics.replayed.inc(accepted);
    if (failed.length === 0) {
      this.noteUp();
      return 'sent';
    }
    this.metrics.retried.inc(failed.length);
    this.noteDown((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason);
    return 'failed';
  }

  private add(record: UsageRecord, timeoutMs: number): Promise<unknown> {
    // A timed-out add may still land later; the job id makes the retry a no-op then.
    const adding = this.queue.add(USAGE_JOB_NAME, usageJobData(record), {
      ...USAGE_JOB_OPTIONS,
      jobId: record.responseId,
    });
    return withTimeout(adding, timeoutMs, 'usage job add');
  }

  /** Moves spilled records back into the queue, one chunk at a time, deleting each file once done. */
  private async stepReplay(): Promise<Step> {
    const replay = this.replay;
    if (!replay) {
      if (!this.spillMayHaveRecords) return 'idle';
      this.spillMayHaveRecords = false; // before claiming: a spill racing the claim sets it again
      const files = await this.spillFile.claim();
      if (files.length === 0) return 'idle';
      this.replay = { files, offset: 0, pending: new RecordFifo() };
      this.log.info({ files: files.length }, 'replaying spilled usage records');
      return 'sent';
    }
    if (replay.pending.length > 0) return this.send(replay.pending, true);
    const file = replay.files[0];
    if (file === undefined) {
      this.replay = undefined;
      return 'sent';
    }
    try {
      const chunk = await this.spillFile.readChunk(file, replay.offset);
      if (chunk.corrupt > 0) {
        this.metrics.dropped.inc({ reason: 'corrupt_spill_line' }, chunk.corrupt);
        this.log.error({ file, count: chunk.corrupt }, 'unreadable lines in usage spill file skipped');
      }
      for (const r of chunk.records) replay.pending.push(r);
      replay.offset = chunk.nextOffset;
      if (chunk.done && chunk.records.length === 0) {
        await this.spillFile.remove(file);
        this.nextReplayFile(replay);
      }
    } catch (err) {
      // Left on disk for the next start rather than retried in a tight loop.
      this.log.error({ err, file }, 'cannot read usage spill file; leaving it for the next start');
      this.nextReplayFile(replay);
    }
    return 'sent';
  }

  private nextReplayFile(replay: NonNullable<UsageOutbox['replay']>): void {
    replay.files.shift();
    replay.offset = 0;
  }

  /** Queues records for the spill file; one writer appends them in batches (one fsync each). */
  private spill(records: UsageRecord[]): void {
    for (const r of records) this.spillQueue.push(r);
    this.spillMayHaveRecords = true;
    this.spillWriter ??= this.writeSpills();
  }

  private async writeSpills(): Promise<void> {
    while (this.spillQueue.length > 0) {
      const batch = this.spillQueue;
      this.spillQueue = [];
      try {
        await this.spillFile.append(batch);
        this.metrics.spilled.inc(batch.length);
        this.wal.settle(batch);
      } catch (err) {
        this.spillFailed(err, batch);
      }
    }
    // Cleared in the same synchronous stretch as the emptiness check, so no spill is stranded.
    this.spillWriter = undefined;
  }

  private spillAfterClose(record: UsageRecord): void {
    try {
      this.spillFile.appendSync([record]);
      this.metrics.spilled.inc();
    } catch (err) {
      this.spillFailed(err, [record]);
    }
  }

  private spillFailed(err: unknown, records: UsageRecord[]): void {
    this.metrics.dropped.inc({ reason: 'spill_write_failed' }, records.length);
    const responseIds = records.slice(0, 50).map((r) => r.responseId);
    this.log.error({ err, count: records.length, responseIds }, 'usage records lost: spill file write failed');
  }

  private backoffMs(failures: number): number {
    const cap = Math.min(this.opts.retryMaxMs, this.opts.retryBaseMs * 2 ** Math.min(failures - 1, 20));
    return cap / 2 + (Math.random() * cap) / 2;
  }

  private updateGauge(): void {
    this.metrics.buffered.set(this.buffer.length + this.inflight);
  }

  /** Logs an outage once, not once per retry. */
  private noteDown(err: unknown): void {
    if (this.degraded) return;
    this.degraded = true;
    this.log.warn(
      { err, buffered: this.buffer.length + this.inflight },
      'usage queue unreachable: buffering usage records',
    );
  }

  private noteUp(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.log.info('usage queue reachable again');
  }
}
