import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DomainError } from '@fastloop/service-kit';
import { inferenceV1 } from '@fastloop/proto';
import { ApiKeyAuth } from '../auth';
import { FakeBackends, fakeDeps } from '../testing/fake-deps';
import { HttpApi } from './http-api';

/** What a grpc-js client error looks like once mapped: the peer's address and the socket error. */
const refused = () =>
  new DomainError(
    'unavailable',
    '14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 10.0.0.9:50053',
    14,
    true,
  );
const INTERNALS = /ECONNREFUSED|10\.0\.0\.9|DomainError|TypeError|UNAVAILABLE/;

async function start(backends = new FakeBackends()) {
  const { deps } = fakeDeps(backends);
  const api = new HttpApi({
    deps,
    auth: new ApiKeyAuth('sk-test'),
    maxBodyBytes: 64 * 1024 * 1024,
    maxBufferedBytes: 1 << 24,
  });
  const server: Server = createServer((req, res) => api.handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const post = async (body: unknown) => {
    const res = await fetch(`${base}/v1/responses`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, json: JSON.parse(text) };
  };
  return { base, post, backends, close: () => new Promise((r) => server.close(r)) };
}

/** A worker that streams a few tokens, then its connection drops. */
class DyingWorker extends FakeBackends {
  override async *generate(): AsyncGenerator<inferenceV1.GenerateResponse> {
    yield {
      event: {
        $case: 'chunk',
        value: { tokens: [200005, 17196], engineElapsedMs: 1, promptTokens: 0, cachedTokens: 0 },
      },
    };
    throw refused();
  }
}

describe('HttpApi errors a client can act on', () => {
  it('answers a non-streaming request whose worker died with a 503 naming inference, not 200 failed', async () => {
    const s = await start(new DyingWorker());
    try {
      const r = await s.post({ model: 'fake-model', input: 'hi' });
      expect(r.status).toBe(503);
      expect(r.json.error).toMatchObject({ type: 'service_unavailable_error', code: 'inference_unavailable' });
      expect(r.text).not.toMatch(INTERNALS);
    } finally {
      await s.close();
    }
  });

  it('names the safety service in a 503 without its address or the socket error', async () => {
    const backends = new FakeBackends();
    backends.classify = async () => {
      throw refused();
    };
    const s = await start(backends);
    try {
      const r = await s.post({ model: 'fake-model', input: 'hi' });
      expect(r.status).toBe(503);
      expect(r.json.error.code).toBe('safety_unavailable');
      expect(r.text).not.toMatch(INTERNALS);
    } finally {
      await s.close();
    }
  });

  it('names the router for /v1/models and hides an unexpected exception behind a plain 500', async () => {
    const backends = new FakeBackends();
    backends.listModels = async () => {
      throw refused();
    };
    backends.route = async () => {
      throw new TypeError("Cannot read properties of undefined (reading 'workerAddress')");
    };
    const s = await start(backends);
    try {
      const models = await fetch(`${s.base}/v1/models`, { headers: { authorization: 'Bearer sk-test' } });
      const body = await models.text();
      expect(models.status).toBe(503);
      expect(JSON.parse(body).error.code).toBe('router_unavailable');
      expect(body).not.toMatch(INTERNALS);
      const r = await s.post({ model: 'fake-model', input: 'hi' });
      expect(r.status).toBe(500);
      expect(r.json.error.code).toBe('server_error');
      expect(r.text).not.toMatch(INTERNALS);
    } finally {
      await s.close();
    }
  });

  it('does not echo an oversized previous_response_id back', async () => {
    const s = await start();
    try {
      const id = `resp_${'x'.repeat(200_000)}`;
      const r = await s.post({ model: 'fake-model', input: 'hi', previous_response_id: id });
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('previous_response_not_found');
      expect(r.text.length).toBeLessThan(1_000);
    } finally {
      await s.close();
    }
  });
});
