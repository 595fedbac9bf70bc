import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getProfile } from '@fastloop/model-profiles';
import { ApiKeyAuth } from '../auth';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { HttpApi } from './http-api';

const KEY = 'sk-http';

async function start(options: { maxBodyBytes?: number; maxBufferedBytes?: number; backends?: FakeBackends } = {}) {
  const { deps, backends, usage } = fakeDeps(options.backends);
  const api = new HttpApi({
    deps,
    auth: new ApiKeyAuth(`${KEY}:tenant-h`),
    maxBodyBytes: options.maxBodyBytes ?? 1 << 20,
    maxBufferedBytes: options.maxBufferedBytes ?? 1 << 24,
  });
  const server: Server = createServer((req, res) => api.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, type: res.headers.get('content-type') ?? '', text, json: () => JSON.parse(text) };
  };
  return { base, call, backends, usage, close: () => new Promise((r) => server.close(r)) };
}

describe('HttpApi', () => {
  let api: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    api = await start({ maxBodyBytes: 4096 });
  });
  afterAll(() => api.close());

  it('answers POST /v1/responses with one JSON Response, and bills it once for the key’s tenant', async () => {
    const r = await api.call('POST', '/v1/responses', { model: 'fake-model', input: 'hi', store: false });
    expect(r.status).toBe(200);
    expect(r.type).toMatch(/^application\/json/);
    expect(r.json()).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'fake-model',
      output: [{ type: 'function_call', name: 'read_file' }],
    });
    await new Promise((res) => setImmediate(res));
    expect(api.usage.filter((u: any) => u.responseId === r.json().id)).toEqual([
      expect.objectContaining({ tenant: 'tenant-h', transport: 'http', status: 'completed' }),
    ]);
  });

  it('streams with stream: true as SSE whose event names equal the JSON type, ending in one terminal event', async () => {
    const r = await api.call('POST', '/v1/responses', { model: 'fake-model', input: 'hi', store: false, stream: true });
    expect(r.type).toMatch(/^text\/event-stream/);
    const blocks = r.text.split('\n\n').filter((b) => b.trim());
    const events = blocks.map((b) => ({
      name: /^event: (.*)$/m.exec(b)![1],
      data: JSON.parse(/^data: (.*)$/m.exec(b)![1]),
    }));
    for (const e of events) expect(e.name).toBe(e.data.type);
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.filter((e) => /^response\.(completed|failed|incomplete)$/.test(e.name)).map((e) => e.name)).toEqual([
      'response.completed',
    ]);
  });

  it.each([
    [
      'a wrong key',
      'POST',
      '/v1/responses',
      { model: 'fake-model', input: 'x' },
      { authorization: 'Bearer nope' },
      401,
      'invalid_api_key',
    ],
    ['malformed JSON', 'POST', '/v1/responses', '{"model":', {}, 400, 'invalid_json'],
    [
      'a body over maxBodyBytes',
      'POST',
      '/v1/responses',
      { model: 'fake-model', input: 'x'.repeat(5000) },
      {},
      413,
      'payload_too_large',
    ],
    ['background mode', 'POST', '/v1/responses', { model: 'fake-model', input: 'x', background: true }, {}, 400, null],
    ['an unknown model', 'POST', '/v1/responses', { model: 'nope', input: 'x' }, {}, 400, 'model_not_found'],
    [
      'an unknown previous_response_id',
      'POST',
      '/v1/responses',
      { model: 'fake-model', input: 'x', previous_response_id: 'resp_x' },
      {},
      400,
      'previous_response_not_found',
    ],
    ['GET /v1/responses without a WebSocket upgrade', 'GET', '/v1/responses', undefined, {}, 426, 'upgrade_required'],
    ['an unknown route', 'GET', '/v2/things', undefined, {}, 404, null],
  ])('answers %s with an OpenAI-shaped error', async (_name, method, path, body, headers, status, code) => {
    const r = await api.call(method, path, body, headers as Record<string, string>);
    expect(r.status).toBe(status);
    const err = r.json().error;
    expect(err).toEqual(expect.objectContaining({ type: expect.any(String), message: expect.any(String) }));
    if (code) expect(err.code).toBe(code);
  });

  it('lists the router catalog on GET /v1/models', async () => {
    const r = await api.call('GET', '/v1/models');
    expect(r.json()).toEqual({
      object: 'list',
      data: [{ id: 'fake-model', object: 'model', created: 0, owned_by: 'test' }],
    });
  });

  it('answers a request that announces an upgrade without Connection: upgrade with 426', async () => {
    const { port } = new URL(api.base);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/v1/responses',
          headers: { authorization: `Bearer ${KEY}`, upgrade: 'websocket' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(426);
  });

  it('cuts an SSE stream whose client stops reading once maxBufferedBytes are queued, and cancels the turn', async () => {
    const backends = new FakeBackends();
    backends.script = () => ({
      kind: 'message',
      role: 'assistant',
      text: 'lorem ipsum dolor sit amet '.repeat(40_000),
    });
    let chunks = 0;
    let cancelled!: () => void;
    const cancel = new Promise<void>((resolve) => (cancelled = resolve));
    const generate = backends.generate.bind(backends);
    backends.generate = async function* (
      address: string,
      req: Parameters<FakeBackends['generate']>[1],
      signal?: AbortSignal,
    ) {
      for await (const c of generate(address, req)) {
        if (signal?.aborted) {
          cancelled();
          throw new Error('cancelled');
        }
        chunks++;
        yield c;
        if (chunks % 50 === 0) await new Promise((r) => setImmediate(r));
      }
    };
    const slow = await start({ backends, maxBufferedBytes: 64 * 1024 });
    try {
      const { port } = new URL(slow.base);
      const ended = await new Promise<string>((resolve) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/v1/responses',
            headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          },
          (res) => {
            // Not read until the edge has cancelled the turn (no fixed wait: on a loaded machine
            // the cut can come later than any); then the rest must not end as a whole stream.
            res.pause();
            res.socket.on('close', () => resolve('closed'));
            void cancel.then(() => {
              res.on('error', () => resolve('cut'));
              res.on('aborted', () => resolve('cut'));
              res.on('end', () => resolve('ended'));
              res.resume();
            });
          },
        );
        setTimeout(() => resolve('not cancelled'), 50_000).unref();
        req.end(JSON.stringify({ model: 'fake-model', input: 'a long story', store: false, stream: true }));
      });
      expect(['cut', 'closed']).toContain(ended);
      const allChunks = Math.ceil(getProfile('harmony-o200k').renderCompletion(backends.script(0)).length / 3);
      expect(chunks).toBeLessThan(allChunks / 2);
    } finally {
      await slow.close();
    }
  }, 60_000);
});
