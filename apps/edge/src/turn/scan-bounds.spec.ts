import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiKeyAuth } from '../auth';
import { HttpApi } from '../http/http-api';
import { ResponsesSession } from '../session/responses-session';
import { ConnectionStateCache, StateCacheBudget } from '../session/state-cache';
import { fakeDeps } from '../testing/fake-deps';
import { DEFAULT_EDGE_LIMITS, edgeLimitsFromConfig } from './edge-limits';
import { loadEdgeConfig } from '../config';

// Safety's bounds checked at the edge (issue 17): an item safety would refuse is refused before
// its Classify request is encoded, with safety's own 400, and the neighbour is served.
const limits = {
  ...DEFAULT_EDGE_LIMITS,
  scan: { maxItemBytes: 1_000, maxRequestBytes: 1_500, names: { item: 'ITEM_BOUND', request: 'REQUEST_BOUND' } },
};

describe('safety bounds at the edge', () => {
  let server: Server;
  let base: string;
  const { deps, backends } = fakeDeps();
  deps.limits = limits;

  beforeAll(async () => {
    const api = new HttpApi({
      deps,
      auth: new ApiKeyAuth('sk-hostile:hostile,sk-neighbour:neighbour'),
      maxBodyBytes: 1 << 20,
      maxBufferedBytes: 1 << 20,
    });
    server = createServer((req, res) => api.handle(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise((r) => server.close(r)));

  async function post(key: string, body: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(`${base}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-model', max_output_tokens: 16, ...(body as object) }),
    });
    return { status: res.status, json: await res.json() };
  }

  it('refuses an item over the item bound with safety_item_too_large before any Classify call, and serves the neighbour', async () => {
    backends.classifyCalls.length = 0;
    const hostile = await post('sk-hostile', { input: 'é'.repeat(600) }); // 600 chars, 1,200 UTF-8 bytes
    expect(hostile.status).toBe(400);
    expect(hostile.json.error).toMatchObject({ code: 'safety_item_too_large', param: 'input' });
    expect(hostile.json.error.message).toContain('ITEM_BOUND');
    expect(backends.classifyCalls).toHaveLength(0);
    const neighbour = await post('sk-neighbour', { input: 'hello' });
    expect(neighbour.status).toBe(200);
    expect(backends.classifyCalls.length).toBeGreaterThan(0);
  });

  it('refuses items over the request bound together with safety_request_too_large', async () => {
    backends.classifyCalls.length = 0;
    const item = (text: string) => ({ type: 'message', role: 'user', content: text });
    const r = await post('sk-hostile', { input: [item('a'.repeat(900)), item('b'.repeat(900))] });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'safety_request_too_large' });
    expect(r.json.error.message).toContain('REQUEST_BOUND');
    expect(backends.classifyCalls).toHaveLength(0);
  });

  it('refuses instructions over the item bound (the header is classified too)', async () => {
    backends.classifyCalls.length = 0;
    const r = await post('sk-hostile', { input: 'hi', instructions: 'x'.repeat(1_001) });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'safety_item_too_large' });
  });

  it('answers a WebSocket response.create over the bound with response.failed safety_item_too_large', async () => {
    const events: any[] = [];
    const session = new ResponsesSession({
      deps,
      principal: { tenant: 'hostile', keyId: 'k' },
      transport: 'websocket',
      cache: new ConnectionStateCache(new StateCacheBudget(1 << 24), 1 << 22),
      send: (e) => events.push(e),
      logger: deps.logger,
      maxQueued: 4,
    });
    backends.classifyCalls.length = 0;
    session.receive(
      JSON.stringify({ type: 'response.create', model: 'fake-model', store: false, input: 'z'.repeat(1_200) }),
    );
    await session.whenIdle();
    session.close();
    expect(JSON.stringify(events.at(-1))).toContain('safety_item_too_large');
    expect(backends.classifyCalls).toHaveLength(0);
  });
});

describe('edgeLimitsFromConfig', () => {
  const base = { FASTLOOP_API_KEYS: 'sk' };

  it('checks safety’s default bounds unless told otherwise', () => {
    const { scan } = edgeLimitsFromConfig(loadEdgeConfig(base));
    expect(scan).toMatchObject({ maxItemBytes: 4 * 1024 * 1024, maxRequestBytes: 8 * 1024 * 1024 });
  });

  it('turns the check off when both bounds are 0, and one bound off when it is 0', () => {
    const off = { ...base, EDGE_SAFETY_MAX_ITEM_BYTES: '0', EDGE_SAFETY_MAX_REQUEST_BYTES: '0' };
    expect(edgeLimitsFromConfig(loadEdgeConfig(off)).scan).toBeUndefined();
    const itemOnly = { ...base, EDGE_SAFETY_MAX_REQUEST_BYTES: '0' };
    expect(edgeLimitsFromConfig(loadEdgeConfig(itemOnly)).scan?.maxRequestBytes).toBe(Number.POSITIVE_INFINITY);
  });
});
