import { keyWall, openStream, postResponse, smallTurn, type Target } from '@fastloop/service-kit/testing';
import { tenantKeys } from './clients';
import { stackForThisFile } from './file-stack';

// One tenant attacks a shared resource; another tenant's small turns must be served all along.
// (The edge's own classes, CPU shapes and queued bytes, come with the edge's worker-thread wiring.)
const tenants = tenantKeys('neighbour', 'hostile');
const stack = stackForThisFile({
  FASTLOOP_API_KEYS: tenants.env,
  // Slow answers hold generation slots for seconds; the neighbour asks for 16 tokens.
  SIM_TOKENS_PER_SECOND: '200',
  SIM_ANSWER_WORDS: '400',
  SIM_TOOL_CALLS: '0',
  INFERENCE_MAX_CONCURRENCY: '8',
  EDGE_OUTPUT_MODERATION: 'false',
});
const as = (tenant: string): Target => ({ url: stack().url, wsUrl: stack().wsUrl, apiKey: tenants.key(tenant) });
const MB = 1 << 20;

/**
 * Items the model does not read (hosted-tool items) are carried, stored and scanned, but take no
 * room in the context window: the way to hand safety megabytes in one request.
 */
const carried = (output: string, i: number) => ({
  type: 'mcp_call',
  id: `mcp_${i}`,
  server_label: 'docs',
  name: 'fetch',
  arguments: '{}',
  output,
});

async function neighbourTurns(count: number, gapMs = 100) {
  const outcomes = [];
  for (let i = 0; i < count; i++) {
    outcomes.push(await smallTurn(as('neighbour')));
    await new Promise((r) => setTimeout(r, gapMs));
  }
  return outcomes;
}

describe('one tenant cannot starve another', () => {
  it("serves a neighbour's turns while one tenant holds every generation slot it can get", async () => {
    const hostile = Array.from({ length: 12 }, () =>
      openStream(as('hostile'), { input: 'Tell me a long story.', max_output_tokens: 4096 }),
    );
    let started = 0;
    for (const h of hostile) void h.then((s) => (started += s.started ? 1 : 0));
    // 7 of 8 slots: the eighth stays free for every other tenant.
    for (let i = 0; i < 300 && started < 7; i++) await new Promise((r) => setTimeout(r, 20));
    expect(started).toBe(7);
    const outcomes = await neighbourTurns(3);
    for (const h of hostile) void h.then((s) => s.close());
    await Promise.all(hostile.map((h) => h.then((s) => s.ended)));
    expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200]);
  });

  it('refuses six 3.9 MB tool outputs in one request without failing the shared safety stream', async () => {
    const wall = keyWall(3.9 * MB);
    const items = [{ role: 'user', content: 'Summarize.' }, ...Array.from({ length: 6 }, (_, i) => carried(wall, i))];
    const attack = postResponse(as('hostile'), { input: items, max_output_tokens: 16 });
    const outcomes = await neighbourTurns(5, 200);
    const refused = await attack;
    expect(refused.status).not.toBe(200);
    expect(outcomes.map((o) => `${o.status}${o.code ? ` ${o.code}` : ''}`)).toEqual(Array(5).fill('200'));
  });

  it("blocks a tenant's flood of secret-laden requests while the neighbour's turns keep their verdicts", async () => {
    // 3 MB of keys each (~150,000 findings): seconds of scanning per request for a single-threaded classifier.
    const attack = Array.from({ length: 6 }, (_, i) =>
      postResponse(as('hostile'), {
        input: [{ role: 'user', content: 'Summarize.' }, carried(keyWall(3 * MB, i + 1), 0)],
        max_output_tokens: 16,
      }),
    );
    const outcomes = await neighbourTurns(3, 200);
    const blocked = (await Promise.all(attack)).map((b) => `${b.status} ${b.code}`);
    // Each is blocked, or times out behind its own tenant's earlier requests: never served, never in
    // front of the neighbour.
    expect(blocked.filter((b) => b !== '400 invalid_prompt' && b !== '503 safety_unavailable')).toEqual([]);
    expect(blocked).toContain('400 invalid_prompt');
    expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200]);
  });
});
