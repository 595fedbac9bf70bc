import { validateRequest } from '@fastloop/protocol';
import { createLogger, createRedis, getFreePort, type RedisClient } from '@fastloop/service-kit';
import { fakeDeps } from '../testing/fake-deps';
import { RestartableRedis } from '../testing/restartable-redis';
import { runTurn } from '../turn/run-turn';
import type { TurnDeps } from '../turn/turn-deps';
import { ResponseStore } from './response-store';
import { StoreWriter } from './store-writer';

const logger = createLogger({ service: 'test', level: 'silent' });

async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function turn(deps: TurnDeps, body: Record<string, unknown>, previous?: Parameters<typeof runTurn>[1]['previous']) {
  return runTurn(
    deps,
    {
      body: validateRequest({ model: 'fake-model', ...body }),
      principal: { tenant: 't1', keyId: 'k' },
      transport: 'http',
      previous,
      generate: true,
      signal: new AbortController().signal,
      validateMs: 0,
      loadMs: 0,
      logger,
    },
    () => undefined,
  );
}

/** The store write starts after the terminal event, on the next turn of the event loop. */
const afterTerminal = () => new Promise((r) => setImmediate(r));

describe('stored means stored', () => {
  let server: RestartableRedis;
  let redis: RedisClient;
  let store: ResponseStore;
  let writer: StoreWriter;
  let deps: TurnDeps;

  beforeEach(async () => {
    server = new RestartableRedis(await getFreePort());
    await server.start();
    // As the edge configures it: commands fail fast while Redis is away.
    redis = createRedis(server.url, { maxRetriesPerRequest: 1, commandTimeout: 1_000 });
    redis.on('error', () => undefined);
    await waitFor(() => redis.status === 'ready', 'the connection');
    store = new ResponseStore(redis, 60);
    writer = new StoreWriter(store, logger, { retryBaseMs: 50, isAvailable: () => redis.status === 'ready' });
    ({ deps } = fakeDeps());
    deps.store = writer;
  });
  afterEach(async () => {
    redis.disconnect();
    await server.dispose();
  });

  it('answers store: false, and stores nothing, while Redis is known to be down', async () => {
    await server.stop();
    await waitFor(() => redis.status !== 'ready', 'the client to notice');
    const outcome = await turn(deps, { input: 'hi' });
    expect(outcome.response.status).toBe('completed');
    expect(outcome.response.store).toBe(false);
    await server.start();
    await waitFor(() => redis.status === 'ready', 'the reconnect');
    await new Promise((r) => setTimeout(r, 200));
    expect(await store.get(outcome.response.id, 't1')).toBeUndefined();
  });

  it('retries a write that failed during an outage, so the returned id is readable once Redis is back', async () => {
    const outcome = await turn(deps, { input: 'hi', store: false });
    await server.stop();
    writer.save(outcome.state!, 0); // a write landing in the outage
    await new Promise((r) => setTimeout(r, 300));
    await expect(store.get(outcome.response.id, 't1')).rejects.toMatchObject({ status: 503 });
    await server.start(); // empty data set: only the retried write can make the id readable
    await waitFor(
      async () => (await store.get(outcome.response.id, 't1').catch(() => undefined)) !== undefined,
      'the retried write',
    );
    expect(writer.failures).toBe(0);
  });

  it('deletes every key holding a response’s content, keeping what other stored responses still use', async () => {
    const first = await turn(deps, { input: 'first' });
    await afterTerminal();
    await writer.settled(first.response.id);
    const second = await turn(deps, { input: [{ type: 'message', role: 'user', content: 'second' }] }, first.state);
    await afterTerminal();
    await writer.settled(second.response.id);
    const keysBefore = await redis.keys('fastloop:*');
    // two responses, one item list, its references, and an item_reference pointer per item
    expect(keysBefore.length).toBe(4 + second.state!.items.length);
    const list = (await store.get(first.response.id, 't1'))!.itemsKey;
    const firstLength = first.state!.items.length;
    expect(await redis.llen(list)).toBe(second.state!.items.length);

    // The newest response's own items go with it; what the first one covers stays.
    await store.delete(second.response.id, 't1');
    expect(await redis.llen(list)).toBe(firstLength);
    expect(await store.get(second.response.id, 't1')).toBeUndefined();
    expect((await store.items((await store.get(first.response.id, 't1'))!, 0, firstLength)).length).toBe(firstLength);

    await store.delete(first.response.id, 't1');
    expect(await redis.keys('fastloop:*')).toEqual([]);
  });
});
