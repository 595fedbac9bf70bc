import type { billingV1 } from '@fastloop/proto';
import type { Logger } from 'pino';
import type { OutboxMetrics } from './outbox-metrics';
import type { OutboxSpillFile } from './outbox-spill-file';
import type { OutboxWal } from './outbox-wal';
import { RecordFifo } from './record-fifo';

type UsageRecord = billingV1.UsageRecord;

/** What one step of the outbox's delivery loop did. */
export type Step = 'sent' | 'failed' | 'idle';

/**
 * The usage outbox's disk side: records it cannot hold go to the spill file (one writer appends
 * them in batches, one fsync each), and spilled records are replayed into the queue, one chunk at
 * a time, each file deleted once done, when the buffer is empty and on the next start.
 */
export class OutboxSpill {
  private queue: UsageRecord[] = [];
  private writer?: Promise<void>;
  /** True at start: a previous process may have left records behind. */
  private mayHaveRecords = true;
  private replay?: { files: string[]; offset: number; pending: RecordFifo<UsageRecord> };

  constructor(
    private readonly file: OutboxSpillFile,
    private readonly wal: OutboxWal,
    private readonly metrics: OutboxMetrics,
    private readonly log: Logger,
  ) {}

  /** Queues records for the spill file. */
  spill(records: UsageRecord[]): void {
    for (const r of records) this.queue.push(r);
    this.mayHaveRecords = true;
    this.writer ??= this.writeSpills();
  }

  /** Spills one record at once (the outbox is closed: nothing would write it later). */
  spillNow(record: UsageRecord): void {
    try {
      this.file.appendSync([record]);
      this.metrics.spilled.inc();
    } catch (err) {
      this.failed(err, [record]);
    }
  }

  /** Resolves once every queued record is written and the file is settled. */
  async settled(): Promise<void> {
    while (this.writer) await this.writer;
    await this.file.settled();
  }

  /**
   * Moves spilled records back into the queue, one chunk at a time, deleting each file once done;
   * `send` delivers a batch of them (what it cannot deliver stays at the front of `pending`).
   */
  async step(send: (pending: RecordFifo<UsageRecord>) => Promise<Step>): Promise<Step> {
    const replay = this.replay;
    if (!replay) return this.claim();
    if (replay.pending.length > 0) return send(replay.pending);
    const file = replay.files[0];
    if (file === undefined) {
      this.replay = undefined;
      return 'sent';
    }
    try {
      const chunk = await this.file.readChunk(file, replay.offset);
      if (chunk.corrupt > 0) {
        this.metrics.dropped.inc({ reason: 'corrupt_spill_line' }, chunk.corrupt);
        this.log.error({ file, count: chunk.corrupt }, 'unreadable lines in usage spill file skipped');
      }
      for (const r of chunk.records) replay.pending.push(r);
      replay.offset = chunk.nextOffset;
      if (chunk.done && chunk.records.length === 0) {
        await this.file.remove(file);
        this.nextFile(replay);
      }
    } catch (err) {
      // Left on disk for the next start rather than retried in a tight loop.
      this.log.error({ err, file }, 'cannot read usage spill file; leaving it for the next start');
      this.nextFile(replay);
    }
    return 'sent';
  }

  private async claim(): Promise<Step> {
    if (!this.mayHaveRecords) return 'idle';
    this.mayHaveRecords = false; // before claiming: a spill racing the claim sets it again
    const files = await this.file.claim();
    if (files.length === 0) return 'idle';
    this.replay = { files, offset: 0, pending: new RecordFifo() };
    this.log.info({ files: files.length }, 'replaying spilled usage records');
    return 'sent';
  }

  private nextFile(replay: NonNullable<OutboxSpill['replay']>): void {
    replay.files.shift();
    replay.offset = 0;
  }

  private async writeSpills(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        await this.file.append(batch);
        this.metrics.spilled.inc(batch.length);
        this.wal.settle(batch);
      } catch (err) {
        this.failed(err, batch);
      }
    }
    // Cleared in the same synchronous stretch as the emptiness check, so no spill is stranded.
    this.writer = undefined;
  }

  private failed(err: unknown, records: UsageRecord[]): void {
    this.metrics.dropped.inc({ reason: 'spill_write_failed' }, records.length);
    const responseIds = records.slice(0, 50).map((r) => r.responseId);
    this.log.error({ err, count: records.length, responseIds }, 'usage records lost: spill file write failed');
  }
}
