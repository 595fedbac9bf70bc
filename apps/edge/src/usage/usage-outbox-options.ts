import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { z } from 'zod';

/** Options of a UsageOutbox (usage-outbox.ts); every bound has a documented default. */
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
  /** Records sent per round (one `usage-batch` job, all or none accepted); default 256. */
  batchSize?: number;
  /**
   * How long a round waits, once records arrive after an idle spell, for more to join it, so one
   * job carries many turns' records; default 50 ms (usage is never on a turn's path, and the
   * write-ahead log has it on disk within 5 ms whatever this is). 0: at once. Billing's work is per
   * job: at 100 agent loops 10 ms cost it 0.30 ms of CPU per turn, 50 ms 0.18.
   */
  batchDelayMs?: number;
  /** First retry delay after a failed round, doubled per failure up to `retryMaxMs`; default 250 ms. */
  retryBaseMs?: number;
  /** Longest retry delay; default 5000 ms. A reconnect cuts the wait short. */
  retryMaxMs?: number;
}

export const optionsSchema = z.object({
  maxRecords: z.number().int().min(1).default(100_000),
  dir: z.string().min(1).default('.fastloop/outbox'),
  closeTimeoutMs: z.number().int().min(0).default(5000),
  addTimeoutMs: z.number().int().min(1).default(2000),
  batchSize: z.number().int().min(1).default(256),
  batchDelayMs: z.number().int().min(0).default(50),
  retryBaseMs: z.number().int().min(1).default(250),
  retryMaxMs: z.number().int().min(1).default(5000),
});

/** The options with every default filled in. */
export type OutboxOptions = z.infer<typeof optionsSchema>;
