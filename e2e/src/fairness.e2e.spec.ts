import {
  badJson,
  cpuShapes,
  keyWall,
  openStream,
  postResponse,
  queueBigFrames,
  smallTurn,
  type Target,
} from '@fastloop/service-kit/testing';
import { tenantKeys } from './clients';
import { stackForThisFile } from './file-stack';

// One tenant attacks a shared resource; another tenant's small turns must be served all along.
const tenants = tenantKeys('neighbour', 'hostile', 'bulky');
const stack = stackForThisFile({
  FASTLOOP_API_KEYS: tenants.env,
  // Slow answers hold generation slots for seconds; the neighbour asks for 16 tokens.
  SIM_TOKENS_PER_SECOND: '200',
  SIM_ANSWER_WORDS: '400',
  SIM_TOOL_CALLS: '0',
  INFERENCE_MAX_CONCURRENCY: '8',
  EDGE_OUTPUT_MODERATION: 'false',
  // Small byte bounds, so the memory flood below crosses them with tens of MB, not GBs (one 30 MB
  // body still fits).
  EDGE_MAX_QUEUED_BYTES_PER_CONNECTION: String(40 << 20),
  EDGE_MAX_QUEUED_BYTES_PER_TENANT: String(48 << 20),
  // A term set on the model's canonical name must hold under each of its aliases.
  SAFETY_POLICIES: JSON.stringify({
    tenants: {},
    models: { 'fastloop-sim': { terms: ['project-nightjar'], regexes: [], actions: {} } },
  }),
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

  it('tokenizes hostile inputs of every shape off the event loop, answering the neighbour and bad JSON meanwhile', async () => {
    const attack = Object.values(cpuShapes()).map((input) =>
      postResponse(as('hostile'), { input, max_output_tokens: 16 }),
    );
    const outcomes = await neighbourTurns(3, 100);
    const edgeOnly = await badJson(as('neighbour'));
    const hostile = await Promise.all(attack);
    expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200]);
    expect(edgeOnly).toMatchObject({ status: 400, code: 'invalid_json' });
    // Each shape is served or refused with a 4xx that says why (context_length_exceeded), never a 500.
    expect(hostile.filter((h) => h.status !== 200 && !(h.status >= 400 && h.status < 500))).toEqual([]);
  });

  it("refuses a tenant's flood of queued 4 MB frames past its bytes, while the neighbour's turns are served", async () => {
    const sockets = await Promise.all(Array.from({ length: 4 }, () => queueBigFrames(as('hostile'), 8, 4 * MB)));
    const outcomes = await neighbourTurns(3, 100);
    for (let i = 0; i < 500 && sockets.some((s) => s.errors.length === 0); i++)
      await new Promise((r) => setTimeout(r, 20));
    for (const s of sockets) s.close();
    const refused = sockets.flatMap((s) => s.errors);
    expect(new Set(refused)).toEqual(new Set(['too_many_queued_bytes']));
    // 4 × 8 frames of 4 MB (128 MB) against 48 MB for the tenant: many are refused.
    expect(refused.length).toBeGreaterThanOrEqual(8);
    expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200]);
  });

  it('answers a 30 MB streaming request and a single 4.5 MB item with a 4xx naming the limit', async () => {
    const text = (bytes: number, seed: number) => `${seed} lorem ipsum dolor sit amet `.repeat(bytes / 28);
    const thirty = [0, 1, 2, 3].map((i) => ({ role: 'user', content: text(7.5 * MB, i + 1) }));
    const carriedThirty = [0, 1, 2, 3].map((i) => carried(text(7.5 * MB, i + 5), i));
    const single = [{ role: 'user', content: 'x'.repeat(4.5 * MB) }];
    const answers = [];
    for (const input of [thirty, [{ role: 'user', content: 'Summarize.' }, ...carriedThirty], single])
      answers.push(await postResponse(as('bulky'), { input, stream: true, max_output_tokens: 16 }));
    expect(answers.map((a) => `${a.status} ${a.code}`)).toEqual([
      // Streaming, a prompt over the window fails after the verdict, which refuses the bytes first.
      '400 safety_request_too_large',
      '400 safety_request_too_large',
      '400 safety_item_too_large',
    ]);
  });

  it("enforces a model's policy under each of its names, and scans text.format.schema", async () => {
    for (const model of ['fastloop-sim', 'default', 'gpt-oss-sim'])
      expect(await postResponse(as('neighbour'), { model, input: 'Tell me about project-nightjar.' })).toMatchObject({
        status: 400,
        code: 'invalid_prompt',
      });
    const schema = { type: 'object', properties: { key: { type: 'string', const: keyWall(20) } } };
    const format = { type: 'json_schema', name: 'creds', schema };
    expect(await postResponse(as('neighbour'), { input: 'Fill it in.', text: { format } })).toMatchObject({
      status: 400,
      code: 'invalid_prompt',
    });
  });
});
