import { appendFileSync, closeSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { billingV1 } from '@fastloop/proto';
import { usageJobData, usageRecordIdProblem } from './usage-job';

const ACTIVE_NAME = 'usage-outbox.jsonl';
const REPLAY_PREFIX = 'usage-outbox.replay-';
const REPLAY_SUFFIX = '.jsonl';
/** Default bytes read per replay chunk; a longer line doubles it, up to MAX_CHUNK_BYTES. */
export const DEFAULT_CHUNK_BYTES = 256 * 1024;
// No usage record comes near this; a "line" longer than it is garbage and is skipped.
const MAX_CHUNK_BYTES = 16 * 1024 * 1024;
const NEWLINE = 0x0a;

/** Records read back from one stretch of a spill file. */
export interface SpillChunk {
  records: billingV1.UsageRecord[];
  /** Where the next chunk starts. */
  nextOffset: number;
  /** True when the file has nothing after this chunk. */
  done: boolean;
  /** Lines that were not a usable record (a torn last line after a crash, garbage). */
  corrupt: number;
}

/**
 * The outbox's durable overflow: JSON lines (one record's proto3 JSON per line) in one folder.
 *
 * New records are appended, with fsync, to `usage-outbox.jsonl`. To replay, `claim()` renames that
 * file to `usage-outbox.replay-<ms>-<pid>-<seq>.jsonl`, so appends made during a replay land in a
 * fresh file and a replayed file is only ever deleted, never truncated under a writer. A replay file
 * is removed only after all its records were accepted; one left by a crash is replayed again on the
 * next start (job-id deduplication makes that harmless). One folder belongs to one process.
 */
export class OutboxSpillFile {
  /** The file new records are appended to. */
  readonly activePath: string;
  private tail: Promise<unknown> = Promise.resolve();
  private seq = 0;

  constructor(readonly dir: string) {
    this.activePath = join(dir, ACTIVE_NAME);
  }

  /** Appends records and fsyncs them; resolves once they are on disk. Serialized with `claim`. */
  append(records: readonly billingV1.UsageRecord[]): Promise<void> {
    return this.serial(async () => {
      await mkdir(this.dir, { recursive: true });
      const created = !(await exists(this.activePath));
      const fh = await open(this.activePath, 'a');
      try {
        await fh.appendFile(toLines(records));
        await fh.sync();
      } finally {
        await fh.close();
      }
      if (created) await fsyncDir(this.dir);
    });
  }

  /**
   * Blocking variant of `append`, for the one path that cannot wait: a record arriving after the
   * outbox was closed, when the process may exit right after the call returns.
   */
  appendSync(records: readonly billingV1.UsageRecord[]): void {
    mkdirSync(this.dir, { recursive: true });
    const fd = openSync(this.activePath, 'a');
    try {
      appendFileSync(fd, toLines(records));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Turns the active file (if it has content) into a replay file and lists every replay file in
   * the folder, oldest first, including ones a previous process left behind.
   */
  claim(): Promise<string[]> {
    return this.serial(async () => {
      const size = await stat(this.activePath).then((s) => s.size, ignoreMissing(-1));
      if (size === 0) await unlink(this.activePath).catch(ignoreMissing(undefined));
      if (size > 0) {
        const seq = String(this.seq++).padStart(6, '0');
        await rename(
          this.activePath,
          join(this.dir, `${REPLAY_PREFIX}${Date.now()}-${process.pid}-${seq}${REPLAY_SUFFIX}`),
        );
        await fsyncDir(this.dir);
      }
      const names = await readdir(this.dir).catch(ignoreMissing([] as string[]));
      return names
        .filter((n) => n.startsWith(REPLAY_PREFIX) && n.endsWith(REPLAY_SUFFIX))
        .sort()
        .map((n) => join(this.dir, n));
    });
  }

  /** Reads the whole lines starting at `offset` (about `maxBytes` of them) and decodes them. */
  async readChunk(file: string, offset: number, maxBytes = DEFAULT_CHUNK_BYTES): Promise<SpillChunk> {
    const fh = await open(file, 'r');
    try {
      for (let size = maxBytes; ; size *= 2) {
        const buf = Buffer.alloc(size);
        const { bytesRead } = await fh.read(buf, 0, size, offset);
        if (bytesRead === 0) return { records: [], nextOffset: offset, done: true, corrupt: 0 };
        const lastNewline = buf.lastIndexOf(NEWLINE, bytesRead - 1);
        const atEof = bytesRead < size;
        if (lastNewline === -1 && !atEof && size < MAX_CHUNK_BYTES) continue; // one long line: read more
        // No newline at all: either a torn last line (EOF) or an oversized garbage line; take it whole.
        const end = lastNewline === -1 ? bytesRead : lastNewline + 1;
        const { records, corrupt } = parseLines(buf.subarray(0, end).toString('utf8'));
        const nextOffset = offset + end;
        return { records, nextOffset, done: atEof && end === bytesRead, corrupt };
      }
    } finally {
      await fh.close();
    }
  }

  /** Deletes a fully replayed file. */
  async remove(file: string): Promise<void> {
    await unlink(file).catch(ignoreMissing(undefined));
  }

  /** Resolves when every queued append/claim has finished. */
  async settled(): Promise<void> {
    await this.tail;
  }

  private serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.tail.then(op);
    this.tail = run.catch(() => undefined);
    return run;
  }
}

function toLines(records: readonly billingV1.UsageRecord[]): string {
  return records.map((r) => `${JSON.stringify(usageJobData(r))}\n`).join('');
}

function parseLines(text: string): { records: billingV1.UsageRecord[]; corrupt: number } {
  const records: billingV1.UsageRecord[] = [];
  let corrupt = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const record = parseLine(line);
    if (record) records.push(record);
    else corrupt++;
  }
  return { records, corrupt };
}

function parseLine(line: string): billingV1.UsageRecord | undefined {
  try {
    const json: unknown = JSON.parse(line);
    if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
    const record = billingV1.UsageRecord.fromJSON(json);
    return usageRecordIdProblem(record.responseId) === undefined ? record : undefined;
  } catch {
    return undefined;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, ignoreMissing(false));
}

/** Makes a created or renamed entry durable; best effort where directories cannot be fsynced. */
async function fsyncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // Some platforms (Windows) cannot open a directory; the data itself was already fsynced.
  }
}

function ignoreMissing<T>(fallback: T): (err: NodeJS.ErrnoException) => T {
  return (err) => {
    if (err.code === 'ENOENT') return fallback;
    throw err;
  };
}
