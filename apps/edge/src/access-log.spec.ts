import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '@fastloop/service-kit';
import { ApiKeyAuth } from './auth';
import { HttpApi } from './http/http-api';
import { ResponsesSession } from './session/responses-session';
import { ConnectionStateCache, StateCacheBudget } from './session/state-cache';
import { fakeDeps } from './testing/fake-deps';

const SECRET_TEXT = 'the user typed this and it must never be logged';

/** Deps whose logger writes parsed lines into `lines`. */
function capturing() {
  const lines: Record<string, any>[] = [];
  const destination = new Writable({
    write(chunk, _e, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const made = fakeDeps();
  made.deps.logger = createLogger({ service: 'edge-test', level: 'info', destination });
  return { ...made, lines, access: () => lines.filter((l) => l.msg === 'access') };
}

describe('access lines', () => {
  it('logs one line per HTTP request at info: method, path, status, tenant, model, response id, stages and tokens, never content', async () => {
    const { deps, lines, access } = capturing();
    const api = new HttpApi({
      deps,
      auth: new ApiKeyAuth('sk-a:tenant-a'),
      maxBodyBytes: 1 << 20,
      maxBufferedBytes: 1 << 24,
    });
    const server: Server = createServer((req, res) => api.handle(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const post = (body: unknown, key = 'sk-a') =>
      fetch(`${base}/v1/responses?trace=1`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    try {
      const ok = (await (await post({ model: 'fake-model', input: SECRET_TEXT, store: false })).json()) as any;
      const sse = await post({ model: 'fake-model', input: SECRET_TEXT, store: false, stream: true });
      await sse.text();
      await post({ model: 'no-such-model', input: SECRET_TEXT });
      await post({ model: 'fake-model', input: 'x' }, 'sk-wrong');
      for (let i = 0; i < 50 && access().length < 4; i++) await new Promise((r) => setTimeout(r, 10));

      const [json, stream, unknownModel, unauthorized] = access();
      expect(json).toMatchObject({
        level: 30,
        access: 'http',
        method: 'POST',
        path: '/v1/responses',
        status: 200,
        aborted: false,
        tenant: 'tenant-a',
        model: 'fake-model',
        responseId: ok.id,
        responseStatus: 'completed',
        inputTokens: ok.usage.input_tokens,
        cachedTokens: ok.usage.input_tokens_details.cached_tokens,
        outputTokens: ok.usage.output_tokens,
      });
      expect(json.ms).toBeGreaterThan(0);
      expect(json.turnMs).toBeGreaterThan(0);
      expect(Object.keys(json.stagesMs)).toEqual(
        expect.arrayContaining(['validate', 'safety', 'route', 'render', 'ttft']),
      );
      expect(stream).toMatchObject({ status: 200, responseStatus: 'completed', tenant: 'tenant-a' });
      expect(unknownModel).toMatchObject({ status: 400, code: 'model_not_found', tenant: 'tenant-a' });
      expect(unknownModel.responseId).toBeUndefined();
      expect(unauthorized).toMatchObject({ status: 401 });
      expect(unauthorized.tenant).toBeUndefined();
      expect(JSON.stringify(lines)).not.toContain(SECRET_TEXT);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('logs one line per WebSocket turn: event, status, tenant, model, response id, stages and tokens; errors with their code', async () => {
    const { deps, lines, access } = capturing();
    const sent: any[] = [];
    const session = new ResponsesSession({
      deps,
      principal: { tenant: 'tenant-w', keyId: 'k' },
      transport: 'websocket',
      cache: new ConnectionStateCache(new StateCacheBudget(1 << 30), 1 << 26),
      send: (e) => sent.push(e),
      logger: deps.logger.child({ connectionId: 'c-1' }),
      maxQueued: 4,
    });
    session.receive(JSON.stringify({ type: 'response.create', model: 'fake-model', input: SECRET_TEXT }));
    await session.whenIdle();
    session.receive(
      JSON.stringify({ type: 'response.create', model: 'fake-model', previous_response_id: 'resp_gone', input: 'x' }),
    );
    await session.whenIdle();
    const completed = sent.find((e) => e.type === 'response.completed').response;
    const [turn, refused] = access();
    expect(turn).toMatchObject({
      access: 'websocket',
      event: 'response.create',
      connectionId: 'c-1',
      status: 200,
      tenant: 'tenant-w',
      model: 'fake-model',
      responseId: completed.id,
      responseStatus: 'completed',
      outputTokens: completed.usage.output_tokens,
    });
    expect(refused).toMatchObject({
      access: 'websocket',
      status: 400,
      code: 'previous_response_not_found',
      previousResponseId: 'resp_gone',
    });
    expect(access()).toHaveLength(2);
    expect(JSON.stringify(lines)).not.toContain(SECRET_TEXT);
    session.close();
  });
});
