import { inferenceV1 } from '@fastloop/proto';
import { callUnary, createGrpcClient } from '@fastloop/service-kit';
import { stackEnv } from './clients';
import { stackForThisFile } from './file-stack';

const MODEL = 'fastloop-sim';
/** The second tenant and the admin key the fixture configures (stack-fixture.ts). */
export const OTHER_KEY = 'sk-e2e-other';
export const ADMIN_KEY = 'sk-e2e-admin';

async function post(key: string, body: Record<string, unknown>): Promise<any> {
  const res = await fetch(`${stackEnv().url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, store: false, ...body }),
  });
  expect(res.status).toBe(200);
  return res.json();
}

async function usage(key: string, query = ''): Promise<{ status: number; body: any }> {
  const res = await fetch(`${stackEnv().url}/v1/usage${query}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

stackForThisFile();

describe('tenancy', () => {
  it('never lets another tenant see a prompt as cached, while its own tenant reuses it', async () => {
    const { key } = stackEnv();
    const instructions = Array.from({ length: 80 }, (_, i) => `Confidential step ${i}: code ${i * 37}.`).join(' ');
    const first = await post(key, { instructions, input: 'secret plan' });
    const again = await post(key, { instructions, input: 'secret plan' });
    expect(again.usage.input_tokens_details.cached_tokens).toBeGreaterThan(first.usage.input_tokens / 2);
    const probe = await post(OTHER_KEY, { instructions, input: 'secret plan' });
    expect(probe.usage.input_tokens).toBe(first.usage.input_tokens);
    expect(probe.usage.input_tokens_details.cached_tokens).toBe(0);
  });

  it('refuses internal gRPC calls that do not carry the service token', async () => {
    const { stack } = stackEnv();
    const worker = createGrpcClient(
      inferenceV1.InferenceServiceClient,
      `127.0.0.1:${stack.services.inference.ports.grpc}`,
    );
    try {
      const request = inferenceV1.ForgetSessionRequest.fromPartial({ sessionKey: 'x' });
      await expect(callUnary(worker.forgetSession, worker, request, { deadlineMs: 5_000 })).rejects.toMatchObject({
        code: 'unauthenticated',
      });
    } finally {
      worker.close();
    }
  });
});

describe('GET /v1/usage', () => {
  it('reports the key’s own tenant, priced, and refuses another tenant unless the key is an admin key', async () => {
    const { key } = stackEnv();
    const r = await post(OTHER_KEY, { input: 'bill me' });
    let other: any;
    for (let i = 0; i < 100; i++) {
      other = (await usage(OTHER_KEY)).body;
      if (other.totals?.output_tokens >= r.usage.output_tokens) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(other.object).toBe('list');
    expect(other.data.length).toBeGreaterThan(0);
    expect(new Set(other.data.map((row: any) => row.tenant))).toEqual(new Set(['e2e-other']));
    expect(other.data[0]).toMatchObject({ model: MODEL, date: new Date().toISOString().slice(0, 10) });
    expect(other.totals.cost_usd).toBeGreaterThan(0);
    expect((await usage(OTHER_KEY, '?tenant=e2e-tenant')).status).toBe(403);
    const admin = await usage(ADMIN_KEY, '?tenant=e2e-tenant');
    expect(admin.status).toBe(200);
    expect(new Set(admin.body.data.map((row: any) => row.tenant))).toEqual(new Set(['e2e-tenant']));
    expect((await usage(key, '?start=2026-99-01')).status).toBe(400);
    expect((await fetch(`${stackEnv().url}/v1/usage`)).status).toBe(401);
  });
});
