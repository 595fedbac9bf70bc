import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { EnginePrefill, EngineRequest } from '../../engine';
import type { DialectName } from './dialects';
import { OpenAiCompatibleEngine } from './openai-compatible-engine';
import { ERRORS, STREAMS } from './upstream-fixtures';

type Handler = (req: IncomingMessage, body: Record<string, unknown>, res: ServerResponse) => void;

/** A fake upstream: records each request (path, JSON body) and answers with `handler`. */
async function fakeUpstream(handler: Handler): Promise<{
  url: string;
  requests: Array<{ path: string; body: Record<string, unknown> }>;
  closed: Promise<void>;
  server: Server;
}> {
  const requests: Array<{ path: string; body: Record<string, unknown> }> = [];
  let onClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (onClosed = resolve));
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      requests.push({ path: req.url ?? '', body });
      res.on('close', onClosed);
      handler(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, closed, server };
}

const streamEvents = (events: readonly string[]) => (_req: IncomingMessage, _body: unknown, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) res.write(`data: ${e}\n\n`);
  res.end();
};

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function run(dialect: DialectName, url: string, extra: Partial<EngineRequest> = {}, slots = 0) {
  const engine = new OpenAiCompatibleEngine({
    baseUrl: url,
    dialect,
    model: 'm',
    slots,
    logger: pino({ level: 'silent' }),
  });
  let prefill: EnginePrefill | undefined;
  const tokens: number[] = [];
  const request: EngineRequest = {
    prompt: Uint32Array.from([1, 2, 3]),
    cachedTokens: 0,
    maxOutputTokens: 16,
    stopTokens: new Set([2]),
    temperature: 0.5,
    arrivedAt: 0,
    signal: new AbortController().signal,
    sessionKey: 'conv-1',
    onPrefill: (p) => (prefill = p),
    ...extra,
  };
  for await (const chunk of engine.generate(request)) tokens.push(...chunk);
  return { tokens, prefill };
}

describe('OpenAiCompatibleEngine against fakes of each upstream', () => {
  it.each([
    ['vllm', 'vllm', '/v1/completions'],
    ['sglang', 'sglang', '/generate'],
    ['sglang', 'sglang-incremental', '/generate'],
    ['llama-server', 'llama-server', '/completion'],
  ] as const)('%s (%s): streams the sampled ids and reports the upstream cache hit', async (dialect, fixture, path) => {
    const up = await fakeUpstream(streamEvents(STREAMS[fixture]));
    servers.push(up.server);
    const { tokens, prefill } = await run(dialect, up.url);
    expect(tokens).toEqual([9906, 385, 2]);
    expect(prefill).toEqual({ cachedTokens: 2, evaluatedTokens: 1 });
    expect(up.requests[0].path).toBe(path);
  });

  it('sends the prompt as token ids in each dialect, never as text', async () => {
    const bodies: Record<string, Record<string, unknown>> = {};
    for (const dialect of ['vllm', 'sglang', 'llama-server'] as const) {
      const up = await fakeUpstream(streamEvents(STREAMS[dialect]));
      servers.push(up.server);
      await run(dialect, up.url, {}, 4);
      bodies[dialect] = up.requests[0].body;
    }
    expect(bodies.vllm).toMatchObject({
      model: 'm',
      prompt: [1, 2, 3],
      max_tokens: 16,
      stream: true,
      return_token_ids: true,
      stream_options: { include_usage: true },
    });
    expect(bodies.sglang).toMatchObject({
      input_ids: [1, 2, 3],
      stream: true,
      sampling_params: { max_new_tokens: 16, temperature: 0.5 },
    });
    expect(bodies['llama-server']).toMatchObject({
      prompt: [1, 2, 3],
      n_predict: 16,
      stream: true,
      cache_prompt: true,
      return_tokens: true,
    });
    expect(bodies['llama-server'].id_slot).toEqual(expect.any(Number));
  });

  it('keeps a conversation on one llama-server slot across turns', async () => {
    const up = await fakeUpstream(streamEvents(STREAMS['llama-server']));
    servers.push(up.server);
    await run('llama-server', up.url, { sessionKey: 'conv-9' }, 8);
    await run('llama-server', up.url, { sessionKey: 'conv-9' }, 8);
    expect(up.requests[0].body.id_slot).toBe(up.requests[1].body.id_slot);
    expect(up.requests[0].body.id_slot).toBeLessThan(8);
  });

  it.each(['vllm', 'sglang', 'llama-server'] as const)(
    '%s: an HTTP error becomes an engine failure naming the upstream message',
    async (dialect) => {
      const up = await fakeUpstream((_req, _body, res) =>
        res.writeHead(400, { 'content-type': 'application/json' }).end(ERRORS[dialect]),
      );
      servers.push(up.server);
      await expect(run(dialect, up.url)).rejects.toThrow(/HTTP 400: .*context/);
    },
  );

  it('fails when the upstream disconnects mid-stream (no final event)', async () => {
    const up = await fakeUpstream((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${STREAMS.vllm[0]}\n\n`, () => res.socket?.destroy());
    });
    servers.push(up.server);
    await expect(run('vllm', up.url)).rejects.toThrow();
  });

  it('fails on an error event inside the stream', async () => {
    const up = await fakeUpstream(
      streamEvents([
        STREAMS['llama-server'][0],
        JSON.stringify({ error: { code: 500, message: 'slot unavailable', type: 'server_error' } }),
      ]),
    );
    servers.push(up.server);
    await expect(run('llama-server', up.url)).rejects.toThrow(/slot unavailable/);
  });

  it('aborts the upstream request when the caller cancels', async () => {
    const up = await fakeUpstream((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${STREAMS.vllm[0]}\n\n`); // then never ends, like a long generation
    });
    servers.push(up.server);
    const controller = new AbortController();
    const engine = new OpenAiCompatibleEngine({
      baseUrl: up.url,
      dialect: 'vllm',
      model: 'm',
      slots: 0,
      logger: pino({ level: 'silent' }),
    });
    const tokens: number[] = [];
    const request: EngineRequest = {
      prompt: Uint32Array.from([1, 2, 3]),
      cachedTokens: 0,
      maxOutputTokens: 16,
      stopTokens: new Set(),
      arrivedAt: 0,
      signal: controller.signal,
    };
    for await (const chunk of engine.generate(request)) {
      tokens.push(...chunk);
      controller.abort();
    }
    expect(tokens).toEqual([9906]);
    await up.closed; // the fake sees its response closed: the upstream generation was cancelled
  });
});

describe('OpenAiCompatibleEngine health', () => {
  it('is healthy while the upstream answers GET /health with 200, not when it fails or is gone', async () => {
    let status = 200;
    const server = createServer((req, res) => res.writeHead(req.url === '/health' ? status : 404).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const engine = new OpenAiCompatibleEngine({
      baseUrl: url,
      dialect: 'sglang',
      model: 'm',
      slots: 0,
      logger: pino({ level: 'silent' }),
    });
    const signal = new AbortController().signal;
    expect(await engine.checkHealth(signal)).toEqual({ healthy: true });
    status = 503; // e.g. SGLang while its model loads
    expect(await engine.checkHealth(signal)).toEqual({ healthy: false, reason: 'GET /health answered 503' });
    const gone = new OpenAiCompatibleEngine({
      baseUrl: 'http://127.0.0.1:1',
      dialect: 'vllm',
      model: 'm',
      slots: 0,
      logger: pino({ level: 'silent' }),
    });
    // fetch refuses port 1 itself (a blocked port): the reason says so.
    expect(await gone.checkHealth(signal)).toEqual({ healthy: false, reason: 'bad port' });
    expect(gone.upstream).toBe('http://127.0.0.1:1');
  });
});
