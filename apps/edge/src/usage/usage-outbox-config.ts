import { env } from '@fastloop/service-kit';
import { z } from 'zod';
import type { UsageOutboxOptions } from './usage-outbox';

/**
 * The outbox's env vars, to spread into the edge's config schema
 * (`z.object({ ...usageOutboxConfigShape, ... })`). REDIS_URL is the edge's own.
 */
export const usageOutboxConfigShape = {
  /** Records held in memory before spilling to disk. */
  USAGE_OUTBOX_MAX_RECORDS: env.int(100_000, 1),
  /** Spill folder (one per edge process), relative to the cwd unless absolute. */
  USAGE_OUTBOX_DIR: z.string().min(1).default('.fastloop/outbox'),
  /** How long shutdown keeps delivering before spilling the rest. */
  USAGE_OUTBOX_CLOSE_TIMEOUT_MS: env.int(5000, 0),
  /** How long a delivery round gathers records for one `usage-batch` job (0: send at once). */
  USAGE_OUTBOX_BATCH_DELAY_MS: env.int(50, 0),
};

type OutboxConfig = { [K in keyof typeof usageOutboxConfigShape]: z.infer<(typeof usageOutboxConfigShape)[K]> };

/** Maps parsed config onto outbox options. */
export function usageOutboxOptionsFromConfig(
  config: Readonly<OutboxConfig>,
  deps: Pick<UsageOutboxOptions, 'redisUrl' | 'registry' | 'logger'>,
): UsageOutboxOptions {
  return {
    ...deps,
    maxRecords: config.USAGE_OUTBOX_MAX_RECORDS,
    dir: config.USAGE_OUTBOX_DIR,
    closeTimeoutMs: config.USAGE_OUTBOX_CLOSE_TIMEOUT_MS,
    batchDelayMs: config.USAGE_OUTBOX_BATCH_DELAY_MS,
  };
}
