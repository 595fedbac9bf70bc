import { Metadata } from '@grpc/grpc-js';
import { responsesV1 } from '@fastloop/proto';
import { createGrpcClient } from '@fastloop/service-kit';
import { expectWellFormedStream, stackEnv } from './clients';
import { weatherTool } from './stack-fixture';

const MODEL = 'fastloop-sim';

/** A gRPC bidi session: write response.create events, read the same events WebSocket mode sends. */
function openSession(key = stackEnv().key) {
  const client = createGrpcClient(responsesV1.ResponsesServiceClient, stackEnv().grpc);
  const md = new Metadata();
  md.set('authorization', `Bearer ${key}`);
  const call = client.session(md);
  const events: any[] = [];
  const waiters: (() => void)[] = [];
  call.on('data', (m: responsesV1.SessionResponse) => {
    const e = JSON.parse(m.eventJson);
    expect(e.type).toBe(m.type);
    events.push(e);
    waiters.splice(0).forEach((w) => w());
  });
  call.on('error', () => waiters.splice(0).forEach((w) => w()));
  const untilTerminal = async (from: number) => {
    for (;;) {
      const done = events.slice(from).find((e) => /^(response\.(completed|failed|incomplete)|error)$/.test(e.type));
      if (done) return events.slice(from, events.indexOf(done) + 1);
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return {
    call,
    async create(body: Record<string, unknown>) {
      const from = events.length;
      call.write({ eventJson: JSON.stringify({ type: 'response.create', ...body }) });
      return untilTerminal(from);
    },
    close() {
      call.end();
      client.close();
    },
  };
}

/** Registered by stack.e2e.spec.ts. */
export function grpcAndBillingSuite(): void {
  describe('gRPC bidi stream (fastloop.responses.v1)', () => {
    it('runs the same tool loop as WebSocket mode over one stream', async () => {
      const s = openSession();
      try {
        let events = await s.create({ model: MODEL, input: 'Weather in Nairobi?', tools: [weatherTool], store: false });
        let r = expectWellFormedStream(events).response;
        const kinds = [r.output[0].type];
        while (r.output[0].type === 'function_call') {
          events = await s.create({
            model: MODEL,
            previous_response_id: r.id,
            store: false,
            tools: [weatherTool],
            input: [{ type: 'function_call_output', call_id: r.output[0].call_id, output: 'rain' }],
          });
          r = expectWellFormedStream(events).response;
          kinds.push(r.output[0].type);
        }
        expect(kinds).toEqual(['function_call', 'function_call', 'message']);
        expect(r.usage.input_tokens_details.cached_tokens).toBeGreaterThan(0);
        const bad = await s.create({ model: MODEL, input: 'x', previous_response_id: 'resp_nope' });
        expect(bad[0]).toMatchObject({ type: 'error', status: 400, error: { code: 'previous_response_not_found' } });
      } finally {
        s.close();
      }
    });

    it('refuses a stream without a valid key', async () => {
      const s = openSession('wrong');
      const err = await new Promise<any>((resolve) => s.call.on('error', resolve));
      expect(err.code).toBe(16); // UNAUTHENTICATED
      s.close();
    });
  });

  describe('observability', () => {
    it('times every stage of a turn on the edge /metrics, by transport and cached', async () => {
      const { stack } = stackEnv();
      const text = await (await fetch(`http://127.0.0.1:${stack.services.edge.ports.admin}/metrics`)).text();
      const count = (name: string, labels: Record<string, string>) => {
        const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
        return line ? Number(line.split(' ').pop()) : 0;
      };
      for (const stage of ['validate', 'safety', 'route', 'render', 'queue', 'ttft', 'stream', 'post']) {
        expect(count('fastloop_edge_turn_stage_seconds_count', { stage, transport: 'websocket', cached: 'true' })).toBeGreaterThan(0);
      }
      expect(count('fastloop_edge_turn_stage_seconds_count', { stage: 'render', transport: 'http', cached: 'false' })).toBeGreaterThan(0);
      expect(count('fastloop_edge_state_cache_lookups_total', { result: 'hit' })).toBeGreaterThan(0);
    });
  });

  describe('billing', () => {
    it('records every response once in the tenant ledger, after the fact', async () => {
      const { stack, key } = stackEnv();
      const r = await fetch(`${stack.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, input: 'count me', store: false }),
      });
      const body = (await r.json()) as any;
      const url = `http://127.0.0.1:${stack.services.billing.ports.http}/v1/usage?tenant=e2e-tenant&model=${MODEL}`;
      let row: any;
      for (let i = 0; i < 100; i++) {
        const report = (await (await fetch(url)).json()) as any;
        row = report.data[0];
        if (row && row.output_tokens >= body.usage.output_tokens) break;
        await new Promise((res) => setTimeout(res, 100));
      }
      expect(row).toMatchObject({ tenant: 'e2e-tenant', model: MODEL });
      expect(row.requests).toBeGreaterThanOrEqual(1);
      expect(row.input_tokens).toBeGreaterThanOrEqual(body.usage.input_tokens);
      expect(row.output_tokens).toBeGreaterThanOrEqual(body.usage.output_tokens);
    });
  });
}
