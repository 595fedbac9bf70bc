import type { LocalRedis } from '@fastloop/service-kit';
import { DEFAULT_REDIS_URL, resolveRedis } from './redis-setup';

const fakeLocal: LocalRedis = { url: 'redis://127.0.0.1:7777', port: 7777, stop: async () => undefined };

describe('resolveRedis', () => {
  const start = jest.fn(async () => fakeLocal);
  beforeEach(() => start.mockClear());

  it('uses an explicit URL before REDIS_URL and starts nothing', async () => {
    await expect(resolveRedis({ redisUrl: 'redis://a', envUrl: 'redis://b', start })).resolves.toEqual({
      url: 'redis://a',
      source: 'option',
    });
    await expect(resolveRedis({ envUrl: ' redis://b ', start })).resolves.toEqual({ url: 'redis://b', source: 'env' });
    expect(start).not.toHaveBeenCalled();
  });

  it('uses the Redis on the default port when it answers', async () => {
    await expect(resolveRedis({ probe: async () => true, start })).resolves.toEqual({
      url: DEFAULT_REDIS_URL,
      source: 'default',
    });
    expect(start).not.toHaveBeenCalled();
  });

  it('starts a private Redis when none answers, or when asked to', async () => {
    await expect(resolveRedis({ probe: async () => false, start })).resolves.toEqual({
      url: fakeLocal.url,
      source: 'local',
      local: fakeLocal,
    });
    const probe = jest.fn(async () => true);
    await expect(resolveRedis({ privateRedis: true, probe, start })).resolves.toMatchObject({ source: 'local' });
    expect(probe).not.toHaveBeenCalled();
  });
});
