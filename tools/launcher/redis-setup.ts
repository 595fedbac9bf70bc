import { isRedisReachable, startLocalRedis, type LocalRedis } from '@fastloop/service-kit';

/** The Redis a developer usually has running already. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** Where the stack's Redis came from, for the banner and for stop(). */
export interface ResolvedRedis {
  readonly url: string;
  /** `option`: startStack's redisUrl; `env`: REDIS_URL; `default`: a Redis answering on 6379; `local`: started for this stack. */
  readonly source: 'option' | 'env' | 'default' | 'local';
  /** Set when the launcher started redis-server itself and must stop it. */
  readonly local?: LocalRedis;
}

/** Inputs of {@link resolveRedis}; `probe` and `start` are replaceable for tests. */
export interface ResolveRedisOptions {
  readonly redisUrl?: string;
  readonly envUrl?: string;
  /** Skip the 6379 probe and always start a private server when no URL was given. */
  readonly privateRedis?: boolean;
  readonly probe?: (url: string) => Promise<boolean>;
  readonly start?: () => Promise<LocalRedis>;
}

/**
 * Chooses the Redis for the stack: an explicit URL, else REDIS_URL, else the developer's Redis on
 * 6379 if it answers, else a throw-away `redis-server` on a free port. Rejects with service-kit's
 * RedisNotInstalledError (which says how to install it) when that last step is impossible.
 */
export async function resolveRedis(options: ResolveRedisOptions): Promise<ResolvedRedis> {
  const explicit = nonBlank(options.redisUrl);
  if (explicit) return { url: explicit, source: 'option' };
  const fromEnv = nonBlank(options.envUrl);
  if (fromEnv) return { url: fromEnv, source: 'env' };
  const probe = options.probe ?? ((url: string) => isRedisReachable(url));
  if (!options.privateRedis && (await probe(DEFAULT_REDIS_URL))) return { url: DEFAULT_REDIS_URL, source: 'default' };
  const local = await (options.start ?? (() => startLocalRedis()))();
  return { url: local.url, source: 'local', local };
}

function nonBlank(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
