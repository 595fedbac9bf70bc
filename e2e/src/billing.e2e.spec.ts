import { tenantKeys, WsConversation, openaiClient, expectWellFormedStream } from './clients';
import { stackForThisFile } from './file-stack';

// Each test bills its own tenant, so the ledger rows it reads hold exactly its own responses.
const MODEL = 'fastloop-sim';
const tenants = tenantKeys('billing-http', 'billing-ws', 'billing-failed');
const stack = stackForThisFile({ FASTLOOP_API_KEYS: tenants.env });

/** The tenant's all-time ledger row for the model, once it holds `requests` responses (or the last seen). */
async function ledgerRow(tenant: string, requests: number): Promise<any> {
  const url = `http://127.0.0.1:${stack().services.billing.ports.http}/v1/usage?tenant=${tenant}&model=${MODEL}`;
  // Billing's report is internal: it answers only callers with the stack's internal token.
  const headers = { 'x-fastloop-internal-token': stack().internalToken };
  let row: any;
  for (let i = 0; i < 100; i++) {
    row = ((await (await fetch(url, { headers })).json()) as any).data[0];
    if (row && row.requests >= requests) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  // Billing is asynchronous: give a duplicate delivery time to show up before asserting "once".
  await new Promise((res) => setTimeout(res, 300));
  return ((await (await fetch(url, { headers })).json()) as any).data[0];
}

const sum = (usages: any[], f: (u: any) => number) => usages.reduce((n, u) => n + f(u), 0);

describe('billing', () => {
  it('bills each HTTP response exactly once, with the usage the client was shown', async () => {
    const client = openaiClient(tenants.key('billing-http'));
    const a = await client.responses.create({ model: MODEL, input: 'count me', store: false });
    const b = await client.responses.create({ model: MODEL, input: 'and me, twice as long please', store: false });
    const usages = [a.usage!, b.usage!];
    expect(await ledgerRow('billing-http', 2)).toEqual({
      tenant: 'billing-http',
      model: MODEL,
      day: null,
      requests: 2,
      input_tokens: sum(usages, (u) => u.input_tokens),
      cached_tokens: sum(usages, (u) => u.input_tokens_details.cached_tokens),
      output_tokens: sum(usages, (u) => u.output_tokens),
      reasoning_tokens: sum(usages, (u) => u.output_tokens_details.reasoning_tokens),
    });
  });

  it('bills each WebSocket turn of a conversation once, including its cached tokens', async () => {
    const conv = new WsConversation(openaiClient(tenants.key('billing-ws')));
    try {
      const first = expectWellFormedStream(
        await conv.create({ model: MODEL, input: 'hello there', store: false }),
      ).response;
      const second = expectWellFormedStream(
        await conv.create({ model: MODEL, previous_response_id: first.id, input: 'and again', store: false }),
      ).response;
      const usages = [first.usage, second.usage];
      expect(second.usage.input_tokens_details.cached_tokens).toBeGreaterThan(0);
      expect(await ledgerRow('billing-ws', 2)).toMatchObject({
        requests: 2,
        input_tokens: sum(usages, (u) => u.input_tokens),
        cached_tokens: sum(usages, (u) => u.input_tokens_details.cached_tokens),
        output_tokens: sum(usages, (u) => u.output_tokens),
      });
    } finally {
      conv.close();
    }
  });

  it('bills nothing for a request refused before response.created', async () => {
    const client = openaiClient(tenants.key('billing-failed'));
    await expect(
      client.responses.create({ model: MODEL, input: 'x', previous_response_id: 'resp_missing' }),
    ).rejects.toMatchObject({ status: 400 });
    const ok = await client.responses.create({ model: MODEL, input: 'only this one', store: false });
    expect(await ledgerRow('billing-failed', 1)).toMatchObject({ requests: 1, output_tokens: ok.usage!.output_tokens });
  });
});
