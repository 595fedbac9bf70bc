import { request } from 'node:http';
import { join } from 'node:path';
import WebSocket from 'ws';
import { expectWellFormedStream } from './clients';
import { stackForThisFile } from './file-stack';
import { postJson, postSse } from './http';

// The edge's documented bounds, each set small for this file's stack: connection lifetime, queued
// response.create events, and a model with a tiny context window
// (e2e/fixtures/catalog-small-context.json). The slow-client cut-off is tested in ws-gateway.spec.ts:
// over loopback the kernel absorbs megabytes before the edge's own buffer grows at all.
const MODEL = 'fastloop-sim';
const LIFETIME_MS = 4_000;
const stack = stackForThisFile({
  EDGE_WS_MAX_CONNECTION_MS: String(LIFETIME_MS),
  EDGE_WS_MAX_QUEUED: '1',
  ROUTER_CATALOG_FILE: join(__dirname, '..', 'fixtures', 'catalog-small-context.json'),
});

/** A raw WebSocket-mode connection: every server frame, parsed, and how it closed. */
function connect() {
  const s = stack();
  const ws = new WebSocket(s.wsUrl, { headers: { authorization: `Bearer ${s.apiKey}` } });
  const frames: any[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  const opened = new Promise<void>((resolve, reject) => {
    ws.on('open', () => resolve());
    ws.on('error', reject);
  });
  const send = (body: Record<string, unknown>) =>
    ws.send(JSON.stringify({ type: 'response.create', model: MODEL, store: false, ...body }));
  const until = async (pred: () => boolean, what: string) => {
    for (let i = 0; i < 300 && !pred(); i++) await new Promise((r) => setTimeout(r, 20));
    if (!pred()) throw new Error(`timed out waiting for ${what}; frames: ${frames.map((f) => f.type).join(',')}`);
  };
  return { ws, frames, closed, opened, send, until };
}

const terminals = (frames: any[]) =>
  frames.filter((f) => /^response\.(completed|failed|incomplete)$/.test(f.type) || f.type === 'error');

describe('WebSocket mode limits', () => {
  it('answers an upgrade that cannot be served with 426 and JSON, so clients fall back to HTTP', async () => {
    const { port, apiKey } = stack();
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port,
        path: '/v1/responses',
        headers: { authorization: `Bearer ${apiKey}`, connection: 'Upgrade', upgrade: 'h2c' },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (b) => (body += b));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(426);
    expect(JSON.parse(answer.body).error.code).toBe('upgrade_required');
  });

  it('rejects a response.create beyond EDGE_WS_MAX_QUEUED with an error frame and runs the others in order', async () => {
    const c = connect();
    try {
      await c.opened;
      for (const input of ['one', 'two', 'three']) c.send({ input, max_output_tokens: 16 });
      await c.until(() => terminals(c.frames).length === 3, 'three answers');
      const ends = terminals(c.frames);
      expect(ends.map((f) => f.type).sort()).toEqual(['error', 'response.incomplete', 'response.incomplete']);
      expect(ends.find((f) => f.type === 'error')).toMatchObject({
        status: 400,
        error: { code: 'too_many_queued_requests' },
      });
    } finally {
      c.ws.close();
    }
  });

  it('ends a connection at EDGE_WS_MAX_CONNECTION_MS although the client keeps pipelining response.create events', async () => {
    const c = connect();
    await c.opened;
    const started = Date.now();
    // One event always waits behind the running one (the queue bound here is 1).
    c.ws.on('message', (d) => {
      const type = JSON.parse(d.toString()).type;
      if (/^response\.(completed|incomplete)$/.test(type) && c.ws.readyState === WebSocket.OPEN)
        c.send({ input: 'more', max_output_tokens: 16 });
    });
    c.send({ input: 'go', max_output_tokens: 16 });
    c.send({ input: 'go', max_output_tokens: 16 });
    const code = await c.closed;
    const elapsed = Date.now() - started;
    expect(code).toBe(1000);
    expect(elapsed).toBeGreaterThanOrEqual(LIFETIME_MS - 100);
    // That it ends at all is bounded by the test's timeout, not by a clock.
    const errors = c.frames.filter((f) => f.type === 'error');
    expect(errors).toEqual([
      expect.objectContaining({
        status: 400,
        error: expect.objectContaining({ code: 'websocket_connection_limit_reached' }),
      }),
    ]);
    expect(c.frames.filter((f) => f.type === 'response.incomplete').length).toBeGreaterThan(3);
    // The running response ended before the limit error: no response was cut off mid-stream.
    expect(c.frames[c.frames.length - 1].type).toBe('error');
    expect(c.frames[c.frames.length - 2].type).toBe('response.incomplete');
  });
});

describe('context window', () => {
  it('ends a WebSocket continuation that outgrows the context window in response.failed with context_length_exceeded', async () => {
    const c = connect();
    try {
      await c.opened;
      c.send({ model: 'fastloop-sim-small', input: 'hi', max_output_tokens: 16 });
      await c.until(() => terminals(c.frames).length === 1, 'the first answer');
      const first = terminals(c.frames)[0].response;
      expect(first.status).toBe('incomplete');
      const from = c.frames.length;
      c.send({
        model: 'fastloop-sim-small',
        previous_response_id: first.id,
        input: 'tell me more about '.repeat(300),
        max_output_tokens: 16,
      });
      await c.until(() => terminals(c.frames.slice(from)).length === 1, 'the second answer');
      const events = c.frames.slice(from);
      expect(events.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'response.failed']);
      expectWellFormedStream(events);
      expect(events[2].response).toMatchObject({
        status: 'failed',
        previous_response_id: first.id,
        error: { code: 'context_length_exceeded' },
      });
    } finally {
      c.ws.close();
    }
  });

  it('answers the same overflow over SSE as response.failed and as a plain JSON request with a 400', async () => {
    const input = 'tell me more about '.repeat(300);
    const sse = await postSse(stack(), { model: 'fastloop-sim-small', input, store: false });
    expect(sse.status).toBe(200);
    expect(expectWellFormedStream(sse.events).response.error.code).toBe('context_length_exceeded');
    const json = await postJson(stack(), { model: 'fastloop-sim-small', input, store: false });
    expect(json.status).toBe(400);
    expect(json.body.error.code).toBe('context_length_exceeded');
  });
});
