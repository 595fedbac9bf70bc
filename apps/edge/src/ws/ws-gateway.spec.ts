import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { getProfile } from '@fastloop/model-profiles';
import { ApiKeyAuth } from '../auth';
import { StateCacheBudget } from '../session/state-cache';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { ConnectionLimits } from '../session/connection-limits';
import { QueuedBytes } from '../session/queued-bytes';
import { ResponsesSession } from '../session/responses-session';
import { WsGateway } from './ws-gateway';
import { registryMetricValue } from '@fastloop/test-kit';

async function start(
  options: {
    maxConnectionMs?: number;
    maxPayloadBytes?: number;
    maxBufferedBytes?: number;
    limits?: ConnectionLimits;
    backends?: FakeBackends;
    slowCloseGraceMs?: number;
    queuedBytes?: QueuedBytes;
  } = {},
) {
  const { deps, backends, registry } = fakeDeps(options.backends);
  const gateway = new WsGateway({
    deps,
    auth: new ApiKeyAuth('sk-test,sk-a:t1,sk-b:t2'),
    limits: options.limits,
    budget: new StateCacheBudget(1 << 30, deps.metrics),
    maxPayloadBytes: options.maxPayloadBytes ?? 1 << 20,
    maxConnectionMs: options.maxConnectionMs ?? 60_000,
    connectionCacheBytes: 1 << 26,
    maxQueued: 4,
    maxBufferedBytes: options.maxBufferedBytes ?? 1 << 24,
    slowCloseGraceMs: options.slowCloseGraceMs,
    queuedBytes: options.queuedBytes,
  });
  const server: Server = createServer((_req, res) => res.end());
  server.on('upgrade', (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/responses`;
  return {
    url,
    gateway,
    backends,
    registry,
    async close() {
      await gateway.close(100);
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

function connect(url: string, key = 'sk-test') {
  const ws = new WebSocket(url, {
    headers: { authorization: `Bearer ${key}`, 'OpenAI-Beta': 'responses_websockets=2026-02-06' },
  });
  const frames: any[] = [];
  const closed = new Promise<{ code: number }>((resolve) => ws.on('close', (code) => resolve({ code })));
  ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
  const opened = new Promise<void>((resolve, reject) => {
    ws.on('open', () => resolve());
    ws.on('unexpected-response', (_req, res) =>
      reject(Object.assign(new Error('refused'), { status: res.statusCode })),
    );
  });
  const waitFor = async (pred: (f: any) => boolean) => {
    for (let i = 0; i < 200; i++) {
      const f = frames.find(pred);
      if (f) return f;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('frame never came');
  };
  return { ws, frames, closed, opened, waitFor };
}

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const gauge = (registry: import('@fastloop/service-kit').Registry): Promise<number> =>
  registryMetricValue(registry, 'fastloop_edge_open_connections');

describe('WsGateway', () => {
  it('drains: finishes the running response, starts none after it, runs beforeClose, then closes with 1001', async () => {
    const g = await start();
    const c = connect(g.url);
    let release!: () => void;
    g.backends.holdGenerate = new Promise<void>((r) => (release = r));
    const order: string[] = [];
    try {
      await c.opened;
      c.ws.send(JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'first' }));
      await c.waitFor((f) => f.type === 'response.created');
      const drained = g.gateway.close(10_000, async () => void order.push('beforeClose'));
      // Queued behind the running one, and one arriving after the drain began: neither starts.
      c.ws.send(JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'second' }));
      await new Promise((r) => setTimeout(r, 50));
      // Refused while draining: a new connection gets 503 (a load balancer retries it elsewhere).
      await expect(connect(g.url).opened).rejects.toMatchObject({ status: 503 });
      release();
      const { code } = await c.closed;
      order.push('closed');
      await drained;
      expect(code).toBe(1001);
      expect(order).toEqual(['beforeClose', 'closed']);
      expect(c.frames.filter((f) => f.type === 'response.completed')).toHaveLength(1);
      expect(c.frames.filter((f) => f.type === 'response.created')).toHaveLength(1);
      expect(g.backends.generateCalls).toHaveLength(1);
    } finally {
      release();
      await g.close();
    }
  });

  it('refuses an upgrade without a valid key with HTTP 401', async () => {
    const g = await start();
    try {
      await expect(connect(g.url, 'sk-wrong').opened).rejects.toMatchObject({ status: 401 });
    } finally {
      await g.close();
    }
  });

  it('answers one JSON event per text frame and ignores extra upgrade headers', async () => {
    const g = await start();
    const c = connect(g.url);
    try {
      await c.opened;
      c.ws.send(JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'hi', store: false }));
      const done = await c.waitFor((f) => f.type === 'response.completed');
      expect(done.response.output[0].type).toBe('function_call');
      expect(c.frames[0].type).toBe('response.created');
    } finally {
      c.ws.close();
      await g.close();
    }
  });

  it('answers an oversized frame with payload_too_large and keeps the connection', async () => {
    const g = await start({ maxPayloadBytes: 1000 });
    const c = connect(g.url);
    try {
      await c.opened;
      c.ws.send(JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'x'.repeat(1500) }));
      const err = await c.waitFor((f) => f.type === 'error');
      expect(err).toMatchObject({ status: 413, error: { code: 'payload_too_large' } });
      c.ws.send(JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'small', store: false }));
      await c.waitFor((f) => f.type === 'response.completed');
    } finally {
      c.ws.close();
      await g.close();
    }
  });

  it('hands its session each text frame as the bytes received, so one over the queued-bytes bound is refused undecoded', async () => {
    const queuedBytes = new QueuedBytes({ perConnection: 1000, perTenant: 1 << 30, perProcess: 1 << 30 });
    const g = await start({ queuedBytes });
    const received = jest.spyOn(ResponsesSession.prototype, 'receive');
    const c = connect(g.url);
    try {
      await c.opened;
      // 620 characters but 1,220 bytes: over the bound only when counted in bytes.
      const frame = JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'é'.repeat(600) });
      c.ws.send(frame);
      const err = await c.waitFor((f) => f.type === 'error');
      expect(err).toMatchObject({ status: 429, error: { code: 'too_many_queued_bytes' } });
      // The session, which holds the bytes before it decodes them (queued-bytes.spec), got them undecoded.
      expect(received).toHaveBeenCalledTimes(1);
      const [message, bytes] = received.mock.calls[0];
      expect(Buffer.isBuffer(message)).toBe(true);
      expect(bytes).toBe(Buffer.byteLength(frame));
      expect(queuedBytes.held()).toBe(0);
      c.ws.send(JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'small', store: false }));
      await c.waitFor((f) => f.type === 'response.completed');
    } finally {
      received.mockRestore();
      c.ws.close();
      await g.close();
    }
  });

  it('ends a connection at its lifetime limit with websocket_connection_limit_reached', async () => {
    const g = await start({ maxConnectionMs: 150 });
    const c = connect(g.url);
    try {
      await c.opened;
      const err = await c.waitFor((f) => f.type === 'error');
      expect(err).toMatchObject({ status: 400, error: { code: 'websocket_connection_limit_reached' } });
      expect(err.error.message).toMatch(/new websocket connection/i);
      expect((await c.closed).code).toBe(1000);
    } finally {
      await g.close();
    }
  });

  it('caps connections per tenant and per process with a clear 429, and frees a slot on close', async () => {
    const limits = new ConnectionLimits({ maxConnections: 3, maxPerTenant: 2 });
    const g = await start({ limits });
    const open: ReturnType<typeof connect>[] = [];
    try {
      for (const key of ['sk-a', 'sk-a']) open.push(connect(g.url, key));
      await Promise.all(open.map((c) => c.opened));
      await expect(connect(g.url, 'sk-a').opened).rejects.toMatchObject({ status: 429 });
      open.push(connect(g.url, 'sk-b'));
      await open[2].opened;
      await expect(connect(g.url, 'sk-b').opened).rejects.toMatchObject({ status: 429 }); // the process is full
      open[0].ws.close();
      await open[0].closed;
      await waitUntil(() => limits.count('t1') === 1);
      const again = connect(g.url, 'sk-a');
      open.push(again);
      await again.opened;
    } finally {
      for (const c of open) c.ws.close();
      await g.close();
    }
  });

  it('cuts a client that reads too slowly at once: its queued turns are cancelled and it no longer counts as open', async () => {
    const limits = new ConnectionLimits({ maxConnections: 10, maxPerTenant: 10 });
    const g = await start({ maxBufferedBytes: 64 * 1024, limits });
    g.backends.script = () => ({ kind: 'message', role: 'assistant', text: 'stream '.repeat(200_000) });
    const c = connect(g.url);
    try {
      await c.opened;
      (c.ws as unknown as { _socket: { pause(): void } })._socket.pause(); // stops reading
      for (let i = 0; i < 3; i++)
        c.ws.send(JSON.stringify({ type: 'response.create', model: 'fake-model', input: `turn ${i}`, store: false }));
      await waitUntil(() => g.backends.generateCalls.length >= 1);
      // Well before ws's 30 s close-handshake timeout.
      await waitUntil(async () => limits.count() === 0 && (await gauge(g.registry)) === 0, 10_000);
      await new Promise((r) => setTimeout(r, 200));
      expect(g.backends.generateCalls).toHaveLength(1); // the two queued turns never ran
    } finally {
      c.ws.terminate();
      await g.close();
    }
  }, 30_000);

  it('ends a connection at its lifetime limit even while the client keeps pipelining response.create events', async () => {
    const g = await start({ maxConnectionMs: 300 });
    const c = connect(g.url);
    const create = () =>
      c.ws.send(JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'go', store: false }));
    try {
      await c.opened;
      // Always three events queued behind the running one: the session is never idle.
      c.ws.on('message', (d) => {
        if (JSON.parse(d.toString()).type === 'response.completed' && c.ws.readyState === c.ws.OPEN) create();
      });
      for (let i = 0; i < 4; i++) create();
      // A session that ran forever would never close: the test's timeout is the bound, not a clock.
      expect((await c.closed).code).toBe(1000);
      const errors = c.frames.filter((f) => f.type === 'error');
      expect(errors).toEqual([
        expect.objectContaining({
          status: 400,
          error: expect.objectContaining({ code: 'websocket_connection_limit_reached' }),
        }),
      ]);
      // The response that was running when the limit hit still finished before the error frame.
      const last = c.frames.findIndex((f) => f.type === 'error');
      expect(c.frames[last - 1].type).toBe('response.completed');
      expect(c.frames.filter((f) => f.type === 'response.completed').length).toBeGreaterThan(2);
    } finally {
      await g.close();
    }
  });

  it('closes a client that stops reading with 1008 once maxBufferedBytes are queued, and cancels its turn at once', async () => {
    const backends = new FakeBackends();
    // ~1 MB of answer: tens of thousands of delta events, far more than the kernel's socket buffers.
    backends.script = () => ({
      kind: 'message',
      role: 'assistant',
      text: 'lorem ipsum dolor sit amet '.repeat(40_000),
    });
    let chunks = 0;
    const generate = backends.generate.bind(backends);
    // As a real worker's stream: chunks arrive over I/O (a macrotask apart) and stop when cancelled.
    backends.generate = async function* (
      address: string,
      req: Parameters<FakeBackends['generate']>[1],
      signal?: AbortSignal,
    ) {
      for await (const c of generate(address, req)) {
        if (signal?.aborted) throw new Error('cancelled');
        chunks++;
        yield c;
        if (chunks % 50 === 0) await new Promise((r) => setImmediate(r));
      }
    };
    // Measured before the client stops reading: nothing slow runs between the cut and the resume.
    const allChunks = Math.ceil(getProfile('harmony-o200k').renderCompletion(backends.script(0)).length / 3);
    // The close handshake waits for the client however long this test takes to resume it (on a
    // loaded machine, longer than the default 1 s grace, after which the socket is destroyed: 1006).
    const g = await start({ backends, maxBufferedBytes: 64 * 1024, slowCloseGraceMs: 600_000 });
    const c = connect(g.url);
    try {
      await c.opened;
      const socket = (c.ws as unknown as { _socket: import('node:net').Socket })._socket;
      c.ws.send(JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'a long story', store: false }));
      socket.pause();
      // The turn stops long before the model's answer ends, while the client still reads nothing.
      let seen = -1;
      for (let i = 0; i < 100 && chunks !== seen; i++) {
        seen = chunks;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(chunks).toBeGreaterThan(0);
      expect(backends.prompts).toHaveLength(1);
      expect(chunks).toBeLessThan(allChunks / 2);
      socket.resume();
      expect((await c.closed).code).toBe(1008);
      expect(c.frames.some((f) => f.type === 'response.completed')).toBe(false);
    } finally {
      await g.close();
    }
  }, 30_000);

  it('answers an upgrade it cannot serve with 426, so clients fall back to HTTP', async () => {
    const g = await start();
    try {
      const port = new URL(g.url).port;
      const status = (headers: Record<string, string>) =>
        new Promise<{ status: number; upgrade?: string; body: string }>((resolve, reject) => {
          const req = request({
            host: '127.0.0.1',
            port,
            path: '/v1/responses',
            headers: { authorization: 'Bearer sk-test', connection: 'Upgrade', ...headers },
          });
          req.on('response', (res) => {
            let body = '';
            res.on('data', (b) => (body += b));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, upgrade: res.headers.upgrade, body }));
          });
          req.on('upgrade', () => reject(new Error('upgraded')));
          req.on('error', reject);
          req.end();
        });
      const h2c = await status({ upgrade: 'h2c' });
      expect(h2c).toMatchObject({ status: 426, upgrade: 'websocket' });
      expect(JSON.parse(h2c.body).error).toMatchObject({ code: 'upgrade_required', type: 'invalid_request_error' });
      const oldVersion = await status({
        upgrade: 'websocket',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'sec-websocket-version': '7',
      });
      expect(oldVersion.status).toBe(426);
    } finally {
      await g.close();
    }
  });

  it('closes open sockets with 1001 when the server drains', async () => {
    const g = await start();
    const c = connect(g.url);
    await c.opened;
    await g.close();
    expect((await c.closed).code).toBe(1001);
  });
});
