import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { ApiKeyAuth } from '../auth';
import { StateCacheBudget } from '../session/state-cache';
import { fakeDeps } from '../testing/fake-deps';
import { WsGateway } from './ws-gateway';

async function start(options: { maxConnectionMs?: number; maxPayloadBytes?: number } = {}) {
  const { deps } = fakeDeps();
  const gateway = new WsGateway({
    deps,
    auth: new ApiKeyAuth('sk-test'),
    budget: new StateCacheBudget(1 << 30, deps.metrics),
    maxPayloadBytes: options.maxPayloadBytes ?? 1 << 20,
    maxConnectionMs: options.maxConnectionMs ?? 60_000,
    connectionCacheBytes: 1 << 26,
    maxQueued: 4,
    maxBufferedBytes: 1 << 24,
  });
  const server: Server = createServer((_req, res) => res.end());
  server.on('upgrade', (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/responses`;
  return {
    url,
    gateway,
    async close() {
      await gateway.close(100);
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

function connect(url: string, key = 'sk-test') {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}`, 'OpenAI-Beta': 'responses_websockets=2026-02-06' } });
  const frames: any[] = [];
  const closed = new Promise<{ code: number }>((resolve) => ws.on('close', (code) => resolve({ code })));
  ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
  const opened = new Promise<void>((resolve, reject) => {
    ws.on('open', () => resolve());
    ws.on('unexpected-response', (_req, res) => reject(Object.assign(new Error('refused'), { status: res.statusCode })));
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

describe('WsGateway', () => {
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

  it('closes open sockets with 1001 when the server drains', async () => {
    const g = await start();
    const c = connect(g.url);
    await c.opened;
    await g.close();
    expect((await c.closed).code).toBe(1001);
  });
});
