import { billingV1 } from '@fastloop/proto';
import { createLogger, startLocalRedis, type LocalRedis } from '@fastloop/service-kit';
import { Redis } from 'ioredis';
import { LedgerStore } from './ledger-store';
import { startUsageReportServer, type UsageReportServer } from './usage-report-server';

interface Body {
  data: Record<string, unknown>[];
  error: { code: string };
  [key: string]: unknown;
}
const json = async (res: Response) => (await res.json()) as Body;

describe('usage report server', () => {
  let server: LocalRedis;
  let redis: Redis;
  let http: UsageReportServer;
  let base: string;

  beforeAll(async () => {
    server = await startLocalRedis();
    redis = new Redis(server.url);
    const ledger = new LedgerStore(redis);
    const at = Date.UTC(2025, 2, 3, 4);
    for (const [responseId, tenant, model] of [
      ['r1', 'acme', 'm1'],
      ['r2', 'acme', 'm2'],
      ['r3', 'globex', 'm1'],
    ]) {
      await ledger.apply(
        billingV1.UsageRecord.fromPartial({
          responseId,
          tenant,
          model,
          inputTokens: 10,
          outputTokens: 2,
          completedAtMs: at,
        }),
      );
    }
    http = await startUsageReportServer({
      port: 0,
      ledger,
      logger: createLogger({ service: 'billing-test', level: 'silent' }),
    });
    base = `http://127.0.0.1:${http.port}`;
  });
  afterAll(async () => {
    await http.close();
    await redis.quit();
    await server.stop();
  });

  it('answers GET /v1/usage with every tenant and model when no filter is given', async () => {
    const res = await fetch(`${base}/v1/usage`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = await json(res);
    expect(body).toMatchObject({ object: 'usage.report', tenant: null, model: null, day: null, truncated: false });
    expect(body.data).toEqual([
      {
        tenant: 'acme',
        model: 'm1',
        day: null,
        requests: 1,
        input_tokens: 10,
        cached_tokens: 0,
        output_tokens: 2,
        reasoning_tokens: 0,
      },
      {
        tenant: 'acme',
        model: 'm2',
        day: null,
        requests: 1,
        input_tokens: 10,
        cached_tokens: 0,
        output_tokens: 2,
        reasoning_tokens: 0,
      },
      {
        tenant: 'globex',
        model: 'm1',
        day: null,
        requests: 1,
        input_tokens: 10,
        cached_tokens: 0,
        output_tokens: 2,
        reasoning_tokens: 0,
      },
    ]);
  });

  it('filters by tenant, model and UTC day', async () => {
    const body = await json(await fetch(`${base}/v1/usage?tenant=acme&model=m2&day=2025-03-03`));
    expect(body).toMatchObject({
      tenant: 'acme',
      model: 'm2',
      day: '2025-03-03',
      data: [{ tenant: 'acme', model: 'm2', day: '2025-03-03', requests: 1 }],
    });
    expect((await json(await fetch(`${base}/v1/usage?day=2025-03-04`))).data).toEqual([]);
  });

  it('reports one row per day between start and end, and rejects a half or reversed range', async () => {
    const body = await json(await fetch(`${base}/v1/usage?tenant=acme&start=2025-03-01&end=2025-03-05`));
    expect(body).toMatchObject({
      start: '2025-03-01',
      end: '2025-03-05',
      data: [
        { model: 'm1', day: '2025-03-03' },
        { model: 'm2', day: '2025-03-03' },
      ],
    });
    for (const q of [
      'start=2025-03-01',
      'start=2025-03-05&end=2025-03-01',
      'start=2020-01-01&end=2025-01-01',
      'day=2025-03-03&start=2025-03-01&end=2025-03-02',
    ]) {
      expect((await fetch(`${base}/v1/usage?${q}`)).status).toBe(400);
    }
  });

  it.each(['2025-3-3', '2025-02-30', 'yesterday'])('rejects day=%s with 400 invalid_request', async (day) => {
    const res = await fetch(`${base}/v1/usage?day=${day}`);
    expect(res.status).toBe(400);
    expect((await json(res)).error.code).toBe('invalid_request');
  });

  it('answers 404 for other paths and 405 for other methods', async () => {
    expect((await fetch(`${base}/v1/other`)).status).toBe(404);
    const res = await fetch(`${base}/v1/usage`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
  });

  it('answers 503 ledger_unavailable when the ledger does not answer in time', async () => {
    const stuck = { report: () => new Promise(() => undefined) } as unknown as LedgerStore;
    const slow = await startUsageReportServer({
      port: 0,
      ledger: stuck,
      timeoutMs: 50,
      logger: createLogger({ service: 'billing-test', level: 'silent' }),
    });
    try {
      const res = await fetch(`http://127.0.0.1:${slow.port}/v1/usage`);
      expect(res.status).toBe(503);
      expect((await json(res)).error.code).toBe('ledger_unavailable');
    } finally {
      await slow.close();
    }
  });
});

describe('usage report access', () => {
  let server: LocalRedis;
  let redis: Redis;
  let http: UsageReportServer;
  const TOKEN = 'internal-token-for-tests-0123';
  beforeAll(async () => {
    server = await startLocalRedis();
    redis = new Redis(server.url);
    const ledger = new LedgerStore(redis);
    await ledger.apply(
      billingV1.UsageRecord.fromPartial({
        responseId: 'resp_secret',
        tenant: 'other-team',
        model: 'm',
        inputTokens: 1,
        outputTokens: 1,
        completedAtMs: Date.UTC(2025, 0, 1),
      }),
    );
    http = await startUsageReportServer({
      port: 0,
      ledger,
      internalToken: TOKEN,
      logger: createLogger({ service: 'billing-test', level: 'silent' }),
    });
  });
  afterAll(async () => {
    await http.close();
    await redis.quit();
    await server.stop();
  });

  it('answers only requests that carry the internal token', async () => {
    const url = `http://127.0.0.1:${http.port}/v1/usage`;
    for (const headers of [{}, { 'x-fastloop-internal-token': 'wrong' }, { authorization: `Bearer ${TOKEN}` }]) {
      const res = await fetch(url, { headers });
      expect(res.status).toBe(401);
      const body = JSON.stringify(await res.json());
      expect(body).toContain('unauthenticated');
      expect(body).not.toContain('other-team');
    }
    const ok = await fetch(url, { headers: { 'x-fastloop-internal-token': TOKEN } });
    expect(ok.status).toBe(200);
    expect(JSON.stringify(await ok.json())).toContain('other-team');
  });
});
