import type { LocalRedis, LocalRedisOptions } from '@fastloop/service-kit';
import { resolveRedis } from './redis-setup';

const fakeLocal: LocalRedis = { url: 'redis://127.0.0.1:7777', port: 7777, stop: async () => undefined };

describe('resolveRedis', () => {
  const start = jest.fn(async (_options: LocalRedisOptions) => fakeLocal);
  beforeEach(() => start.mockClear());

  it('uses an explicit URL before REDIS_URL and starts nothing', async () => {
    await expect(resolveRedis({ redisUrl: 'redis://a', envUrl: 'redis://b', start })).resolves.toEqual({
      url: 'redis://a',
      source: 'option',
    });
    await expect(resolveRedis({ envUrl: ' redis://b ', start })).resolves.toEqual({ url: 'redis://b', source: 'env' });
    expect(start).not.toHaveBeenCalled();
  });

  it('starts its own Redis without a URL, never whatever answers on 6379', async () => {
    await expect(resolveRedis({ start })).resolves.toEqual({ url: fakeLocal.url, source: 'local', local: fakeLocal });
    expect(start).toHaveBeenCalledWith({});
  });

  it('gives its own Redis the data folder to persist to', async () => {
    await expect(resolveRedis({ start, dataDir: '/data/redis' })).resolves.toMatchObject({
      source: 'local',
      dataDir: '/data/redis',
    });
    expect(start).toHaveBeenCalledWith({ dataDir: '/data/redis' });
  });
});
