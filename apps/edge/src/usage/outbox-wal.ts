import { closeSync, fdatasync, fdatasyncSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { billingV1 } from '@fastloop/proto';
import { usageJobData } from './usage-job';

/** Options of {@link OutboxWal}. */
export interface OutboxWalOptions {
  /** Records per segment file before a new one starts; default 4096. */
  segmentRecords?: number;
  /** Longest wait before appended records are fsynced; default 5 ms. */
  syncDelayMs?: number;
  /** Appended records that trigger an fsync at once; default 64. */
  syncBatch?: number;
}

interface Segment {
  readonly path: string;
  readonly fd: number;
  /** Records appended and not yet settled (delivered or spilled). */
  outstanding: number;
  written: number;
  sealed: boolean;
  /** Set once its fd is closed: an fd number is reused by the OS, so it must be closed once only. */
  fdClosed: boolean;
}

/**
 * The outbox's write-ahead log: every record is appended (a synchronous write(2), so it survives a
 * crash of the process) before it joins the in-memory queue, and fsynced in small batches (so it
 * survives a crash of the machine within `syncDelayMs`). Records are settled once Redis accepted
 * them (or the spill file holds them); a segment whose records are all settled is deleted.
 * Segments left by a crash are replayed by the next process (see outbox-directory.ts); replay is
 * idempotent because the job id is the response id.
 */
export class OutboxWal {
  private readonly segmentRecords: number;
  private readonly syncDelayMs: number;
  private readonly syncBatch: number;
  private current?: Segment;
  private seq = 0;
  private unsynced = 0;
  private syncTimer?: NodeJS.Timeout;
  private syncing = false;
  /** fds of sealed segments, closed after the next fsync covers them. */
  private retired: Segment[] = [];
  private readonly segmentOf = new WeakMap<billingV1.UsageRecord, Segment>();
  private closed = false;

  constructor(
    private readonly dir: string,
    options: OutboxWalOptions = {},
  ) {
    this.segmentRecords = options.segmentRecords ?? 4096;
    this.syncDelayMs = options.syncDelayMs ?? 5;
    this.syncBatch = options.syncBatch ?? 64;
  }

  /** Appends `record` (the object the caller will settle later). Throws if the write fails. */
  append(record: billingV1.UsageRecord): void {
    if (this.closed) throw new Error('usage WAL is closed');
    const segment = this.segment();
    writeSync(segment.fd, `${JSON.stringify(usageJobData(record))}\n`);
    segment.outstanding++;
    segment.written++;
    this.segmentOf.set(record, segment);
    if (segment.written >= this.segmentRecords) this.seal(segment);
    this.unsynced++;
    this.scheduleSync();
  }

  /** Marks records as safe elsewhere (in Redis or the spill file); may delete their segment. */
  settle(records: readonly billingV1.UsageRecord[]): void {
    for (const r of records) {
      const segment = this.segmentOf.get(r);
      if (!segment) continue;
      this.segmentOf.delete(r);
      segment.outstanding--;
      if (segment.sealed && segment.outstanding === 0) removeFile(segment.path);
    }
  }

  /** Fsyncs and closes; segments with unsettled records stay for the next process. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.syncTimer);
    if (this.current) this.seal(this.current);
    for (const s of this.retired) {
      if (s.outstanding > 0 && !s.fdClosed) syncQuietly(s.fd);
      closeSegment(s);
    }
    this.retired = [];
  }

  private segment(): Segment {
    if (this.current) return this.current;
    const path = join(this.dir, `usage-wal-${String(this.seq++).padStart(8, '0')}.jsonl`);
    this.current = { path, fd: openSync(path, 'a'), outstanding: 0, written: 0, sealed: false, fdClosed: false };
    return this.current;
  }

  private seal(segment: Segment): void {
    segment.sealed = true;
    if (this.current === segment) this.current = undefined;
    this.retired.push(segment);
    if (segment.outstanding === 0) removeFile(segment.path);
  }

  private scheduleSync(): void {
    if (this.syncing || this.closed) return;
    if (this.unsynced >= this.syncBatch) {
      clearTimeout(this.syncTimer);
      this.syncTimer = undefined;
      this.sync();
    } else {
      this.syncTimer ??= setTimeout(() => this.sync(), this.syncDelayMs);
    }
  }

  private sync(): void {
    this.syncTimer = undefined;
    const retired = this.retired;
    this.retired = [];
    const segments = this.current ? [...retired, this.current] : retired;
    this.unsynced = 0;
    this.syncing = true;
    let pending = segments.length;
    const finished = () => {
      if (--pending > 0) return;
      for (const s of retired) closeSegment(s);
      this.syncing = false;
      if (this.closed) for (const s of this.retired) closeSegment(s);
      else if (this.unsynced > 0) this.scheduleSync();
    };
    if (pending === 0) {
      pending = 1;
      return finished();
    }
    // Async fdatasync: the event loop never waits for the disk. A segment close() already closed
    // was synced there.
    for (const s of segments) {
      if (s.fdClosed) finished();
      else fdatasync(s.fd, finished);
    }
  }
}

function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

function syncQuietly(fd: number): void {
  try {
    fdatasyncSync(fd);
  } catch {
    // Closed by a finishing async sync: that one covered it.
  }
}

function closeSegment(s: Segment): void {
  if (s.fdClosed) return;
  s.fdClosed = true;
  closeSync(s.fd);
}
