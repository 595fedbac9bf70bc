import { resolve } from 'node:path';
import type { billingV1 } from '@fastloop/proto';
import type { Queue } from 'bullmq';
import type { RedisClient } from '@fastloop/service-kit';
import type { Logger } from 'pino';
import { createOutboxMetrics, type OutboxMetrics } from './outbox-metrics';
import { acquireOutboxDirectory, type OutboxDirectory } from './outbox-directory';
import { OutboxSpill, type Step } from './outbox-spill';
import { OutboxSpillFile } from './outbox-spill-file';
import { OutboxWal } from './outbox-wal';
import { RecordFifo } from './record-fifo';
import { addUsageJobs, openUsageQueue, usageRecordIdProblem } from './usage-job';
import { optionsSchema, type OutboxOptions, type UsageOutboxOptions } from './usage-outbox-options';

export type { UsageOutboxOptions } from './usage-outbox-options';
import { Wakeup, withTimeout } from './wakeup';

type UsageRecord = billingV1.UsageRecord;

/**
 * Hands usage records to the billing queue off the critical path, losing none while Redis is away.
 *
 * `enqueue` is synchronous and never throws: the record joins a bounded in-memory buffer that one
 * background loop delivers (one `usage-batch` job per round; redelivery is harmless: the same batch
 * again is dropped by its job id, a record again in another batch by billing's ledger marker), with
 * exponential backoff while Redis fails. Past the bound, and for whatever is left when `close()`
 * times out, records go to an fsynced spill file (see {@link OutboxSpillFile}); spilled records are
 * replayed once the buffer is empty, and on the next start.
 *
 * Its Redis connection fails fast on purpose (no offline queue, no per-request retries, command
 * timeout): BullMQ's usual `maxRetriesPerRequest: null` would park every add until Redis returns,
 * and the retry loop here could not tell a slow add from a lost one.
 */
export class UsageOutbox {
  private readonly opts: OutboxOptions;
  private readonly log: Logger;
  private readonly metrics: OutboxMetrics;
  private readonly redis: RedisClient;
  private readonly queue: Queue;
  private readonly spills: OutboxSpill;
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
  /** Close: cuts a round's gathering delay short. */
  private readonly gather = new Wakeup();
  private readonly loop: Promise<void>;
  private closing?: Promise<void>;
  private stopAt = Number.POSITIVE_INFINITY;
  private degraded = false;

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
    this.wal = new OutboxWal(this.directory.dir);
    this.spills = new OutboxSpill(new OutboxSpillFile(this.directory.dir), this.wal, this.metrics, this.log);
    ({ redis: this.redis, queue: this.queue } = openUsageQueue(options.redisUrl, this.opts.addTimeoutMs));
    this.redis.on('error', (err) => this.noteDown(err));
    this.redis.on('ready', () => {
      this.noteUp();
      this.retry.notify();
    });
    this.queue.on('error', (err) => this.log.debug({ err }, 'usage queue error'));
    this.loop = this.run();
  }

  /**
   * Accepts one record for delivery. Synchronous, O(1), never throws, never waits for Redis.
   * A record without a response id (billing could not count it once) is dropped and logged.
   */
  enqueue(record: UsageRecord): void {
    try {
      const problem = usageRecordIdProblem(record.responseId);
      if (problem !== undefined) {
        this.metrics.dropped.inc({ reason: 'invalid_record' });
        this.log.error({ responseId: record.responseId, problem }, 'usage record dropped: unusable response id');
        return;
      }
      const copy = { ...record }; // the caller may reuse its object
      if (this.state === 'closed') return this.spills.spillNow(copy);
      this.logAhead(copy);
      if (this.buffer.length + this.inflight >= this.opts.maxRecords) return this.spills.spill([copy]);
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
    this.gather.notify();
    await this.loop;
    this.state = 'closed';
    const left = this.buffer.drain();
    this.updateGauge();
    if (left.length > 0) {
      this.log.warn({ count: left.length }, 'usage outbox closing with undelivered records: spilling them');
      this.spills.spill(left);
    }
    await this.spills.settled();
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
        await this.gathering();
      } else if (step === 'failed') {
        failures++;
        await this.retry.wait(Math.min(this.backoffMs(failures), this.stopAt - Date.now()));
      } else {
        failures = 0;
        await this.gathering();
      }
    }
  }

  /**
   * Lets the next round gather what arrives meanwhile, unless it is full already: one job then
   * carries many turns' records (at 100 agent loops, one add per record was ~0.4 ms of edge CPU
   * per turn in bench/load's profile). Close cuts it short.
   */
  private async gathering(): Promise<void> {
    if (this.state !== 'running' || this.opts.batchDelayMs === 0 || this.buffer.length >= this.opts.batchSize) return;
    await this.gather.wait(this.opts.batchDelayMs);
  }

  private step(): Promise<Step> {
    if (this.buffer.length > 0) return this.send(this.buffer, false);
    // While closing, spilled records stay where they are: they are durable already.
    if (this.state !== 'running') return Promise.resolve('idle');
    return this.spills.step((pending) => this.send(pending, true));
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
    const error = await addUsageJobs(this.queue, batch, timeoutMs).then(
      () => undefined,
      (err: unknown) => err ?? new Error('usage job add failed'),
    );
    if (error) fifo.putBack(batch);
    else if (!fromSpill) this.wal.settle(batch);
    if (!fromSpill) this.inflight = 0;
    this.updateGauge();
    if (!error) {
      this.metrics.enqueued.inc(batch.length);
      if (fromSpill) this.metrics.replayed.inc(batch.length);
      this.noteUp();
      return 'sent';
    }
    this.metrics.retried.inc(batch.length);
    this.noteDown(error);
    return 'failed';
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
