import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getProfile } from '@fastloop/model-profiles';
import { createLogger, createRedis, startLocalRedis, type LocalRedis, type RedisClient } from '@fastloop/service-kit';
import { ApiKeyAuth } from '../auth';
import { ResponseStore } from '../store/response-store';
import { StoredItemLookup } from '../store/stored-item-lookup';
import { StoreWriter } from '../store/store-writer';
import { fakeDeps } from '../testing/fake-deps';
import { HttpApi } from './http-api';

const logger = createLogger({ service: 'test', level: 'silent' });
const profile = getProfile('harmony-o200k');
const tools = [
  { type: 'function', name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
];

describe('item_reference over HTTP', () => {
  let local: LocalRedis | undefined;
  let redis: RedisClient;
  let server: Server;
  let base: string;
  const { deps, backends } = fakeDeps();

  beforeAll(async () => {
    const url = process.env.REDIS_URL ?? (local = await startLocalRedis()).url;
    redis = createRedis(url, { maxRetriesPerRequest: 1, keyPrefix: `test:${process.pid}:${Date.now()}:` });
    const store = new ResponseStore(redis, 60);
    const writer = new StoreWriter(store, logger);
    deps.store = writer;
    deps.items = new StoredItemLookup(store, writer);
    const api = new HttpApi({
      deps,
      auth: new ApiKeyAuth('sk-a:tenant-a,sk-b:tenant-b'),
      maxBodyBytes: 1 << 20,
      maxBufferedBytes: 1 << 20,
    });
    server = createServer((req, res) => api.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await redis.quit();
    await local?.stop();
  });

  const post = async (key: string, body: Record<string, unknown>) => {
    const res = await fetch(`${base}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-model', tools, ...body }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it("resolves a reference to a stored item of the caller's tenant, sent right after the response that made it", async () => {
    const first = await post('sk-a', { input: 'read it' });
    expect(first.status).toBe(200);
    const call = first.body.output[0];
    // No previous_response_id: the referenced call comes from the store (written after the response).
    const second = await post('sk-a', {
      input: [
        { role: 'user', content: 'read it' },
        { type: 'item_reference', id: call.id },
        { type: 'function_call_output', call_id: call.call_id, output: 'text' },
      ],
    });
    expect(second.status).toBe(200);
    const prompt = profile.decode(backends.prompts[backends.prompts.length - 1]);
    expect(prompt).toContain(
      `<|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>${call.arguments}<|call|>`,
    );
    expect(prompt).toContain('<|start|>functions.read_file to=assistant<|channel|>commentary<|message|>text<|end|>');
  });

  it("does not resolve another tenant's item", async () => {
    const first = await post('sk-a', { input: 'mine' });
    const other = await post('sk-b', { input: [{ type: 'item_reference', id: first.body.output[0].id }] });
    expect(other.status).toBe(400);
    expect(other.body.error).toMatchObject({
      param: 'input[0].id',
      message: `Item with id '${first.body.output[0].id}' not found.`,
    });
  });
});
