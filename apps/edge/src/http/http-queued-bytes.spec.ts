import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiKeyAuth } from '../auth';
import { QueuedBytes } from '../session/queued-bytes';
import { fakeDeps } from '../testing/fake-deps';
import { HttpApi } from './http-api';

const MB = 1 << 20;
let server: Server;
let base: string;
const queued = new QueuedBytes({ perConnection: 64 * MB, perTenant: 1 * MB, perProcess: 64 * MB });

beforeAll(async () => {
  const { deps } = fakeDeps();
  const api = new HttpApi({
    deps,
    auth: new ApiKeyAuth('sk-a:a,sk-b:b'),
    maxBodyBytes: 64 * MB,
    maxBufferedBytes: 1 << 24,
    queuedBytes: queued,
  });
  server = createServer((req, res) => api.handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((r) => server.close(r)));

async function post(key: string, input: string): Promise<{ status: number; code?: string; message?: string }> {
  const res = await fetch(`${base}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fake-model', store: false, input }),
  });
  const json = (await res.json()) as { error?: { code?: string; message?: string } };
  return { status: res.status, code: json.error?.code, message: json.error?.message };
}

describe('HTTP bodies under a byte bound', () => {
  it("refuses a body over its tenant's bytes with a 429 naming the bound, and serves the next one", async () => {
    const refused = await post('sk-a', 'x'.repeat(2 * MB));
    expect(refused).toMatchObject({ status: 429, code: 'too_many_queued_bytes' });
    expect(refused.message).toMatch(/EDGE_MAX_QUEUED_BYTES_PER_TENANT/);
    expect((await post('sk-a', 'hi')).status).toBe(200);
    expect((await post('sk-b', 'hi')).status).toBe(200);
    // Every body's bytes are given back when its response ends, refused or served.
    for (let i = 0; i < 200 && queued.held() > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(queued.held()).toBe(0);
  });
});
