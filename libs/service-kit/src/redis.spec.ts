import { bullmqPrefix, createRedis, isClusterUrl, redisAddress, redisKeyPart, redisTenantTag } from './redis';
import { startLocalRedisCluster } from './local-redis';

describe('Redis URLs', () => {
  it('names where a URL points, never its credentials', () => {
    expect(redisAddress('redis://:s3cret@10.0.0.5:6380/2')).toBe('10.0.0.5:6380');
    expect(redisAddress('rediss://default:s3cret@cache.example.com')).toBe('cache.example.com:6379');
    expect(redisAddress('redis+cluster://user:s3cret@a:7000,b:7001,[::1]:7002')).toBe('a:7000,b:7001,::1:7002');
    expect(isClusterUrl('rediss+cluster://a:7000')).toBe(true);
    expect(isClusterUrl('redis://a:7000')).toBe(false);
  });

  it('escapes ids so they can neither split a key nor open a hash tag', () => {
    expect(redisKeyPart('openai/gpt-oss-20b')).toBe('openai/gpt-oss-20b');
    expect(redisKeyPart('a:b')).not.toBe(redisKeyPart('a') + ':' + redisKeyPart('b'));
    expect(redisTenantTag('a{b}c')).toBe('{a%7Bb%7Dc}');
  });
});

describe('createRedis with a redis+cluster:// URL', () => {
  it('talks to every node of a real 3-master cluster, following the slot map', async () => {
    const cluster = await startLocalRedisCluster();
    // Only one node named: the client discovers the others.
    const client = createRedis(`redis+cluster://127.0.0.1:${cluster.nodes[0].port}`);
    try {
      expect(bullmqPrefix(client)).toBe('{bull}');
      const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
      for (const k of keys) await client.set(k, k);
      expect(await Promise.all(keys.map((k) => client.get(k)))).toEqual(keys);
      // Each node holds some of the keys: the writes really were spread over the shards.
      const perNode = await Promise.all(
        cluster.nodes.map(async (n) => {
          const node = createRedis(`redis://127.0.0.1:${n.port}`);
          try {
            return await node.dbsize();
          } finally {
            node.disconnect();
          }
        }),
      );
      expect(perNode.every((n) => n > 0)).toBe(true);
      expect(perNode.reduce((a, b) => a + b, 0)).toBe(keys.length);
    } finally {
      await client.quit();
      await cluster.stop();
    }
  }, 60_000);
});
