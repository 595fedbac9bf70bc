import { Redis, type RedisOptions } from 'ioredis';

/**
 * An ioredis connection as BullMQ requires it (`maxRetriesPerRequest: null`): commands wait for a
 * reconnect instead of failing, which is what a background queue wants. Callers close it themselves.
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false, ...options });
}

/** Resolves true when a Redis server answers PING at `url` within `timeoutMs`. */
export async function isRedisReachable(url: string, timeoutMs = 500): Promise<boolean> {
  // disconnectTimeout 0: no lingering timer after a failed probe (it kept test processes alive).
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
    disconnectTimeout: 0,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}
