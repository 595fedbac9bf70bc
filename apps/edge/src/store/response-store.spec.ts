import {
  createLogger,
  createRedis,
  startLocalRedis,
  startLocalRedisCluster,
  type RedisClient,
} from '@fastloop/service-kit';
import { fakeDeps } from '../testing/fake-deps';
import { ResponsesSession } from '../session/responses-session';
import { ConnectionStateCache, StateCacheBudget } from '../session/state-cache';
import type { ConversationState } from '../turn/conversation-state';
import { EntryRenderCache } from '../turn/entry-render-cache';
import { ResponseStore } from './response-store';
import { StoredStateLoader } from './stored-state-loader';
import { StoreWriter } from './store-writer';

const logger = createLogger({ service: 'test', level: 'silent' });
const tools = [
  { type: 'function', name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
];

/** A Redis for one describe block: its URL, and how to stop it if the block started it. */
type RedisUnderTest = { url: string; stop?: () => Promise<void> };

describe.each([
  [
    'ResponseStore',
    async (): Promise<RedisUnderTest> => {
      if (process.env.REDIS_URL) return { url: process.env.REDIS_URL };
      const local = await startLocalRedis();
      return { url: local.url, stop: () => local.stop() };
    },
  ],
  [
    // Keys of one tenant share a hash slot; the tenants' slots are spread over three nodes.
    'ResponseStore on a real 3-master Redis Cluster',
    async (): Promise<RedisUnderTest> => {
      const cluster = await startLocalRedisCluster();
      return { url: cluster.url, stop: () => cluster.stop() };
    },
  ],
])('%s', (_title, startRedis) => {
  let server: RedisUnderTest;
  let redis: RedisClient;
  let store: ResponseStore;
  let writer: StoreWriter;

  beforeAll(async () => {
    server = await startRedis();
    redis = createRedis(server.url, { maxRetriesPerRequest: 1, keyPrefix: `test:${process.pid}:${Date.now()}:` });
    store = new ResponseStore(redis, 60);
    writer = new StoreWriter(store, logger);
  }, 60_000);
  afterAll(async () => {
    await redis.quit();
    await server.stop?.();
  });

  /** Runs a chain of turns through the session core with the store as its sink. */
  async function chain(turns: number, tenant = 't1'): Promise<ConversationState[]> {
    const { deps } = fakeDeps();
    deps.store = writer;
    const cache = new ConnectionStateCache(new StateCacheBudget(1 << 30), 1 << 28);
    const events: any[] = [];
    const session = new ResponsesSession({
      deps,
      principal: { tenant, keyId: 'k' },
      transport: 'websocket',
      cache,
      send: (e) => events.push(e),
      logger,
      maxQueued: 4,
    });
    const states: ConversationState[] = [];
    let prev: any;
    for (let i = 0; i < turns; i++) {
      const input = prev
        ? [{ type: 'function_call_output', call_id: prev.output[0].call_id, output: `result ${i}` }]
        : 'start';
      session.receive(
        JSON.stringify({
          type: 'response.create',
          model: 'fake-model',
          tools,
          instructions: 'Be exact.',
          input,
          previous_response_id: prev?.id,
        }),
      );
      await session.whenIdle();
      prev = events.filter((e) => e.type === 'response.completed').pop().response;
      states.push(cache.get(prev.id)!);
    }
    await new Promise((r) => setImmediate(r));
    await writer.flush();
    return states;
  }

  it('rebuilds a stored conversation exactly: items, rendered tokens, safety state, worker prefix', async () => {
    const states = await chain(4);
    const loader = new StoredStateLoader(store, writer, new EntryRenderCache(100));
    for (const s of states) {
      const loaded = (await loader.load(s.response.id, 't1'))!;
      expect(loaded.response).toEqual(s.response);
      expect([...loaded.items].map((i: any) => i.type)).toEqual([...s.items].map((i: any) => i.type));
      expect(Array.from(loaded.rendered.tokens.slice())).toEqual(Array.from(s.rendered.tokens.slice()));
      expect(loaded.safetyState.equals(s.safetyState)).toBe(true);
      expect(loaded.safetyItems).toBe(s.safetyItems);
      expect(loaded.workerPrefixLength).toBe(s.workerPrefixLength);
      expect(loaded.sampled).toEqual(s.sampled);
    }
  });

  it('appends only the new items of each turn to one list per chain', async () => {
    const states = await chain(3);
    const records = await Promise.all(states.map((s) => store.get(s.response.id, 't1')));
    expect(new Set(records.map((r) => r!.itemsKey)).size).toBe(1);
    expect(await redis.llen(records[0]!.itemsKey)).toBe(states[2].items.length);
  });

  it('hides another tenant’s responses and deletes on request', async () => {
    const [s] = await chain(1);
    expect(await store.get(s.response.id, 'someone-else')).toBeUndefined();
    expect(await store.delete(s.response.id, 't1')).toBe(true);
    expect(await store.get(s.response.id, 't1')).toBeUndefined();
  });
  it('keeps every tenant’s chains apart, whatever slot or node their keys land on', async () => {
    const tenants = ['acme', 'globex', 'a{b}c:d', 'initech', 'umbrella'];
    const chains = await Promise.all(tenants.map((t) => chain(2, t)));
    const loader = new StoredStateLoader(store, writer, new EntryRenderCache(100));
    for (const [i, tenant] of tenants.entries()) {
      for (const s of chains[i]) {
        expect((await loader.load(s.response.id, tenant))!.response).toEqual(s.response);
        expect(await store.get(s.response.id, tenants[(i + 1) % tenants.length])).toBeUndefined();
      }
      const last = chains[i][1];
      const itemId = last.response.output[0]!.id!;
      expect((await store.findItem(itemId, tenant))?.id).toBe(itemId);
      expect(await store.findItem(itemId, tenants[(i + 1) % tenants.length])).toBeUndefined();
      expect(await store.delete(last.response.id, tenant)).toBe(true);
      expect(await store.get(last.response.id, tenant)).toBeUndefined();
      expect(await store.get(chains[i][0].response.id, tenant)).toBeDefined();
    }
  });
});
