import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

/** A connection to a standalone Redis or to a Redis Cluster (same command API). */
export type RedisClient = Redis | Cluster;

/**
 * URL schemes that name a Redis Cluster: `redis+cluster://[user:password@]host:port[,host:port…]`
 * (`rediss+cluster://` for TLS). Any node (or several, for a start that survives one being down)
 * is enough: the client discovers the others and follows the slot map.
 */
const CLUSTER_SCHEME = /^(rediss?)\+cluster:\/\//;

/** True for a `redis+cluster://` (or `rediss+cluster://`) URL. */
export function isClusterUrl(url: string): boolean {
  return CLUSTER_SCHEME.test(url);
}

/**
 * A connection as BullMQ requires it (`maxRetriesPerRequest: null`): commands wait for a reconnect
 * instead of failing, which is what a background queue wants; `options` override that. A
 * `redis+cluster://` URL gives an ioredis Cluster whose nodes get `options`. Callers close it
 * themselves.
 */
export function createRedis(url: string, options: RedisOptions = {}): RedisClient {
  const merged: RedisOptions = { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false, ...options };
  if (!isClusterUrl(url)) return new Redis(url, merged);
  const { nodes, redisOptions } = parseClusterUrl(url);
  const { retryStrategy, enableOfflineQueue, enableReadyCheck, lazyConnect, ...perNode } = merged;
  const clusterOptions: ClusterOptions = {
    redisOptions: { ...redisOptions, ...perNode },
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(enableReadyCheck === undefined ? {} : { enableReadyCheck }),
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    // The nodes' own reconnects follow the slot map; this paces re-discovery when all are down.
    clusterRetryStrategy: retryStrategy ?? ((times) => Math.min(100 * times, 2_000)),
  };
  return new Redis.Cluster(nodes, clusterOptions);
}

/** True when `client` talks to a Redis Cluster. */
export function isRedisCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

/**
 * BullMQ's key prefix on this connection. A queue's scripts touch several of its keys at once, which
 * Redis Cluster allows only within one hash slot: on a cluster the prefix is a hash tag (`{bull}`,
 * as BullMQ documents); on a standalone Redis it stays BullMQ's default (`bull`), so jobs queued
 * before an upgrade are still found. Producer (edge) and consumer (billing) must agree.
 */
export function bullmqPrefix(client: RedisClient): string {
  return isRedisCluster(client) ? '{bull}' : 'bull';
}

/**
 * An id (tenant, model) as one part of a `:`-separated key. Escaping `%`, `:`, `{` and `}` keeps
 * ordinary ids readable (`openai/gpt-oss-20b` stays as is), keeps `a:b` + `c` and `a` + `b:c` apart,
 * and keeps an id from opening or closing a hash tag.
 */
export function redisKeyPart(id: string): string {
  return id.replace(/%/g, '%25').replace(/:/g, '%3A').replace(/\{/g, '%7B').replace(/\}/g, '%7D');
}

/**
 * The Redis Cluster hash tag of a tenant: every key a script or transaction of one tenant touches
 * carries it, so they live in one hash slot (Cluster refuses multi-key commands across slots).
 * A tenant's data sits on one shard; tenants spread across shards.
 */
export function redisTenantTag(tenant: string): string {
  return `{${redisKeyPart(tenant)}}`;
}

/** Where a Redis URL points, without credentials: `host:port`, or the cluster's listed nodes. */
export function redisAddress(url: string): string {
  if (isClusterUrl(url))
    return parseClusterUrl(url)
      .nodes.map((n) => `${n.host}:${n.port}`)
      .join(',');
  try {
    const u = new URL(url);
    if (u.protocol === 'redis+unix:' || u.protocol === 'unix:') return u.pathname;
    return `${u.hostname || '127.0.0.1'}:${u.port || 6379}`;
  } catch {
    return '(unparsable REDIS_URL)';
  }
}

/** The nodes of a `redis+cluster://` URL, and the per-node options it carries (credentials, TLS, db). */
function parseClusterUrl(url: string): { nodes: { host: string; port: number }[]; redisOptions: RedisOptions } {
  const [, scheme] = CLUSTER_SCHEME.exec(url)!;
  const rest = url.slice(url.indexOf('://') + 3);
  const at = rest.lastIndexOf('@');
  const auth = at >= 0 ? rest.slice(0, at) : '';
  const hostsPart = (at >= 0 ? rest.slice(at + 1) : rest).split(/[/?]/)[0];
  const nodes = hostsPart
    .split(',')
    .filter(Boolean)
    .map((hp) => {
      const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(hp);
      if (!m) throw new RangeError(`REDIS_URL: bad cluster node '${hp}'`);
      return { host: m[1], port: m[2] ? Number(m[2]) : 6379 };
    });
  if (nodes.length === 0) throw new RangeError('REDIS_URL: a redis+cluster:// URL needs at least one host:port');
  const [user, password] = auth.includes(':') ? auth.split(/:(.*)/s, 2) : ['', auth];
  return {
    nodes,
    redisOptions: {
      ...(user ? { username: decodeURIComponent(user) } : {}),
      ...(password ? { password: decodeURIComponent(password) } : {}),
      ...(scheme === 'rediss' ? { tls: {} } : {}),
    },
  };
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
