import { startLocalRedis, type LocalRedis, type LocalRedisOptions } from '@fastloop/service-kit';

/** Where the stack's Redis came from, for the banner and for stop(). */
export interface ResolvedRedis {
  readonly url: string;
  /** `option`: startStack's redisUrl; `env`: REDIS_URL; `local`: the stack's own, started for it. */
  readonly source: 'option' | 'env' | 'local';
  /** Set when the launcher started redis-server itself and must stop it. */
  readonly local?: LocalRedis;
  /** The folder the stack's own Redis persists to, when it does. */
  readonly dataDir?: string;
}

/** Inputs of {@link resolveRedis}; `start` is replaceable for tests. */
export interface ResolveRedisOptions {
  readonly redisUrl?: string;
  readonly envUrl?: string;
  /** Where the stack's own Redis keeps its data (append-only persistence); default: throw-away. */
  readonly dataDir?: string;
  readonly start?: (options: LocalRedisOptions) => Promise<LocalRedis>;
}

/**
 * Chooses the Redis for the stack: an explicit URL, else REDIS_URL, else the stack's own
 * `redis-server` on a free port (persistent in `dataDir` when given). Whatever else answers on
 * 127.0.0.1:6379 is never used unless REDIS_URL names it: an unauthenticated system Redis would
 * mix this stack's queues, ledgers and stored responses with every other stack's. Rejects with
 * service-kit's RedisNotInstalledError (which says how to install it) or RedisDataDirInUseError.
 */
export async function resolveRedis(options: ResolveRedisOptions): Promise<ResolvedRedis> {
  const explicit = nonBlank(options.redisUrl);
  if (explicit) return { url: explicit, source: 'option' };
  const fromEnv = nonBlank(options.envUrl);
  if (fromEnv) return { url: fromEnv, source: 'env' };
  const dataDir = options.dataDir;
  const local = await (options.start ?? startLocalRedis)(dataDir ? { dataDir } : {});
  return { url: local.url, source: 'local', local, ...(dataDir ? { dataDir } : {}) };
}

function nonBlank(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
