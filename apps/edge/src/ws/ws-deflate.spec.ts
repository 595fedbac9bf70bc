import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import WebSocket from 'ws';
import { ApiKeyAuth } from '../auth';
import { StateCacheBudget } from '../session/state-cache';
import { fakeDeps } from '../testing/fake-deps';
import { DEFAULT_WS_DEFLATE, type WsDeflateSettings } from './ws-deflate';
import { WsGateway } from './ws-gateway';

async function start(deflate?: WsDeflateSettings) {
  const { deps, backends } = fakeDeps();
  backends.script = () => ({ kind: 'message', role: 'assistant', text: 'done' });
  const gateway = new WsGateway({
    deps,
    auth: new ApiKeyAuth('sk-test'),
    budget: new StateCacheBudget(1 << 30, deps.metrics),
    maxPayloadBytes: 1 << 20,
    maxConnectionMs: 60_000,
    connectionCacheBytes: 1 << 26,
    maxQueued: 4,
    maxBufferedBytes: 1 << 24,
    deflate,
  });
  const server: Server = createServer((_req, res) => res.end());
  server.on('upgrade', (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/responses`,
    async close() {
      await gateway.close(100);
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** One turn with long instructions (echoed in response.created, .in_progress and .completed). */
async function turn(url: string, offer: WebSocket.ClientOptions['perMessageDeflate']) {
  const ws = new WebSocket(url, { headers: { authorization: 'Bearer sk-test' }, perMessageDeflate: offer });
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const frames: any[] = [];
    let textBytes = 0;
    const done = new Promise<void>((resolve) =>
      ws.on('message', (data) => {
        textBytes += (data as Buffer).length;
        const event = JSON.parse(data.toString());
        frames.push(event);
        if (event.type === 'response.completed' || event.type === 'error') resolve();
      }),
    );
    const instructions = 'You are a careful coding agent. Follow the repository conventions. '.repeat(200);
    // The request goes out compressed too when negotiated: the edge inflates it.
    ws.send(JSON.stringify({ type: 'response.create', model: 'fake-model', store: false, instructions, input: 'hi' }));
    await done;
    const wireBytes = (ws as unknown as { _socket: Socket })._socket.bytesRead;
    return { extensions: ws.extensions, frames, textBytes, wireBytes, instructions };
  } finally {
    ws.close();
  }
}

describe('permessage-deflate on WebSocket mode', () => {
  it('is negotiated with a client that offers it, and every frame round-trips in a fraction of the bytes', async () => {
    const g = await start();
    try {
      const t = await turn(g.url, true);
      expect(t.extensions).toContain('permessage-deflate');
      expect(t.frames.map((f) => f.type)).toContain('response.output_text.delta');
      const completed = t.frames[t.frames.length - 1];
      expect(completed.type).toBe('response.completed');
      expect(completed.response.instructions).toBe(t.instructions);
      // Three frames echo ~14 kB of instructions; deflated, the whole turn is a small share of it.
      expect(t.wireBytes).toBeLessThan(t.textBytes / 5);
    } finally {
      await g.close();
    }
  });

  it('sends plain frames to a client that does not offer it', async () => {
    const g = await start();
    try {
      const t = await turn(g.url, false);
      expect(t.extensions).toBe('');
      expect(t.frames[t.frames.length - 1].type).toBe('response.completed');
      expect(t.wireBytes).toBeGreaterThan(t.textBytes);
    } finally {
      await g.close();
    }
  });

  it('accepts the parameters clients offer (no context takeover, their own window), never refusing the upgrade', async () => {
    const g = await start();
    try {
      const t = await turn(g.url, {
        serverNoContextTakeover: true,
        clientNoContextTakeover: true,
        clientMaxWindowBits: 12,
      });
      expect(t.extensions).toContain('permessage-deflate');
      expect(t.frames[t.frames.length - 1].type).toBe('response.completed');
      expect(t.wireBytes).toBeLessThan(t.textBytes / 2);
    } finally {
      await g.close();
    }
  });

  it('is not negotiated when EDGE_WS_DEFLATE is off, whatever the client offers', async () => {
    const g = await start({ ...DEFAULT_WS_DEFLATE, enabled: false });
    try {
      const t = await turn(g.url, true);
      expect(t.extensions).toBe('');
      expect(t.wireBytes).toBeGreaterThan(t.textBytes);
    } finally {
      await g.close();
    }
  });
});
