import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { routerV1 } from '@fastloop/proto';
import { ApiKeyAuth } from '../auth';
import { UsageReporter, type UsageQuery } from '../usage/usage-report';
import { usageRoute } from './usage-route';

const NOW = Date.UTC(2026, 10, 30, 12);
const auth = new ApiKeyAuth('sk-a:acme,sk-b:globex', 'sk-admin:ops');
const acme = auth.authenticate('Bearer sk-a')!;
const admin = auth.authenticate('Bearer sk-admin')!;

/** A stand-in for billing's internal report server that records each query. */
function fakeBilling(
  rows: Record<string, unknown>[],
): Promise<{ url: string; queries: URLSearchParams[]; server: Server }> {
  const queries: URLSearchParams[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    queries.push(url.searchParams);
    const tenant = url.searchParams.get('tenant');
    const data = rows.filter((r) => tenant === null || r.tenant === tenant);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ object: 'usage.report', truncated: false, data }));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, queries, server }),
    ),
  );
}

const catalog: routerV1.ListModelsResponse = {
  models: [
    {
      id: 'm1',
      ownedBy: 'x',
      created: 0,
      aliases: [],
      contextWindow: 1,
      profile: '',
      pricing: { inputUsdPerMillion: 2, cachedInputUsdPerMillion: 0.5, outputUsdPerMillion: 8 },
    },
  ],
};
const ledgerRow = (tenant: string, model: string, day: string, n: number) => ({
  tenant,
  model,
  day,
  requests: n,
  input_tokens: 1_000_000 * n,
  cached_tokens: 500_000 * n,
  output_tokens: 100_000 * n,
  reasoning_tokens: 10 * n,
});

describe('GET /v1/usage', () => {
  it('scopes a key to its own tenant, defaults to the last 30 days, and prices rows from the catalog', async () => {
    const billing = await fakeBilling([
      ledgerRow('acme', 'm1', '2026-11-29', 1),
      ledgerRow('acme', 'other', '2026-11-30', 2),
      ledgerRow('globex', 'm1', '2026-11-29', 5),
    ]);
    try {
      const reporter = new UsageReporter({ billingUrl: billing.url, listModels: async () => catalog });
      const body = await usageRoute(reporter, new URLSearchParams(), acme, NOW);
      expect(Object.fromEntries(billing.queries[0])).toEqual({
        tenant: 'acme',
        start: '2026-11-01',
        end: '2026-11-30',
      });
      // 0.5M uncached at $2 + 0.5M cached at $0.5 + 0.1M output at $8 = 1 + 0.25 + 0.8
      expect(body.data).toEqual([
        {
          tenant: 'acme',
          model: 'm1',
          date: '2026-11-29',
          responses: 1,
          input_tokens: 1_000_000,
          cached_tokens: 500_000,
          output_tokens: 100_000,
          reasoning_tokens: 10,
          cost_usd: 2.05,
        },
        {
          tenant: 'acme',
          model: 'other',
          date: '2026-11-30',
          responses: 2,
          input_tokens: 2_000_000,
          cached_tokens: 1_000_000,
          output_tokens: 200_000,
          reasoning_tokens: 20,
          cost_usd: 0,
        },
      ]);
      expect(body).toMatchObject({ object: 'list', start: '2026-11-01', end: '2026-11-30', has_more: false });
      expect(body.totals).toEqual({
        responses: 3,
        input_tokens: 3_000_000,
        cached_tokens: 1_500_000,
        output_tokens: 300_000,
        reasoning_tokens: 30,
        cost_usd: 2.05,
      });
    } finally {
      billing.server.close();
    }
  });

  it('refuses another tenant to an ordinary key, and lets an admin key name any tenant or all', async () => {
    const seen: UsageQuery[] = [];
    const source = {
      report: async (q: UsageQuery) => (
        seen.push(q),
        { object: 'list' as const, data: [], totals: {} as never, start: q.start, end: q.end, has_more: false }
      ),
    };
    await expect(usageRoute(source, new URLSearchParams('tenant=globex'), acme, NOW)).rejects.toMatchObject({
      status: 403,
      code: 'permission_denied',
    });
    await usageRoute(source, new URLSearchParams('tenant=acme&model=m1&start=2026-01-01&end=2026-01-31'), acme, NOW);
    await usageRoute(source, new URLSearchParams('tenant=globex'), admin, NOW);
    await usageRoute(source, new URLSearchParams(), admin, NOW);
    expect(seen.map((q) => q.tenant)).toEqual(['acme', 'globex', undefined]);
    expect(seen[0]).toEqual({ tenant: 'acme', model: 'm1', start: '2026-01-01', end: '2026-01-31' });
  });

  it.each([
    ['start=2026-13-01'],
    ['end=yesterday'],
    ['start=2026-02-01&end=2026-01-01'],
    ['start=2020-01-01&end=2026-01-01'],
  ])('answers 400 for %s', async (q) => {
    const source = { report: jest.fn() };
    await expect(usageRoute(source, new URLSearchParams(q), acme, NOW)).rejects.toMatchObject({ status: 400 });
    expect(source.report).not.toHaveBeenCalled();
  });

  it('answers 503 usage_unavailable when billing does not answer', async () => {
    const reporter = new UsageReporter({
      billingUrl: 'http://127.0.0.1:1',
      listModels: async () => catalog,
      timeoutMs: 500,
    });
    await expect(usageRoute(reporter, new URLSearchParams(), acme, NOW)).rejects.toMatchObject({
      status: 503,
      code: 'usage_unavailable',
    });
  });
});
