import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { getProfile } from '@fastloop/model-profiles';
import { CompactedResponseSchema } from '@fastloop/protocol';
import { compactConversation } from '../http/compact-route';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { openWsSession } from '../testing/ws-session';
import { SUMMARY_REQUEST } from '../turn/compaction';
import { SUMMARY_PREFIX } from '../turn/narrow-item';
import { ReasoningSeal } from '../turn/reasoning-seal';
import type { TurnRequest } from '../turn/turn-deps';
import { runTurn } from '../turn/run-turn';

const profile = getProfile('harmony-o200k');
const seal = new ReasoningSeal([{ kid: 'k1', key: randomBytes(32) }]);
const tools = [
  {
    type: 'function',
    name: 'read_file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];

/** The fake model: the summary when asked for one, else an answer naming the call it is. */
function model(backends: FakeBackends, summary = 'SUMMARY: the user wants the bug fixed') {
  backends.script = (turn) => {
    const prompt = profile.decode(backends.prompts[turn]);
    const text = prompt.includes(SUMMARY_REQUEST) ? summary : `answer ${turn}`;
    return { kind: 'message', role: 'assistant', text };
  };
}

/** A WebSocket session of `tenant` on an edge that seals with `seal`. */
function open(tenant = 't', backends = new FakeBackends()) {
  const { deps, usage } = fakeDeps(backends);
  deps.reasoningSeal = seal;
  model(backends);
  const { create } = openWsSession(deps, { tenant, defaults: { tools } });
  /** `POST /v1/responses/compact` with `body`, as the HTTP route runs it. */
  const compact = (body: Record<string, unknown>) => {
    const req: TurnRequest = {
      body: { model: 'fake-model', tools: [], tool_choice: 'auto', parallel_tool_calls: true, store: true, ...body },
      principal: { tenant, keyId: 'k' },
      transport: 'http',
      generate: true,
      signal: new AbortController().signal,
      validateMs: 0,
      loadMs: 0,
      logger: deps.logger,
    };
    return compactConversation(deps, req);
  };
  return { create, compact, backends, usage, deps };
}

const last = (events: any[]) => events[events.length - 1];
const user = (text: string) => ({ type: 'message', role: 'user', content: text });
const history = [user('fix the bug in parser.ts'), user('and add a test')];

describe('POST /v1/responses/compact', () => {
  it("returns the user messages and one compaction item sealing the serving model's summary for the tenant", async () => {
    const s = open();
    const compacted = await s.compact({ input: history });
    expect(CompactedResponseSchema.parse(compacted)).toEqual(compacted);
    expect(compacted.output.map((i) => i.type)).toEqual(['message', 'message', 'compaction']);
    expect(compacted.output[0]).toMatchObject({
      role: 'user',
      content: [{ type: 'input_text', text: history[0].content }],
    });
    const item = compacted.output[2] as { encrypted_content: string };
    expect(seal.open(item.encrypted_content, 't', 'compaction')).toBe('SUMMARY: the user wants the bug fixed');
    // Not a reasoning blob, and not another tenant's.
    expect(() => seal.open(item.encrypted_content, 't')).toThrow();
    expect(() => seal.open(item.encrypted_content, 'u', 'compaction')).toThrow();
    // The model read the conversation and the request, with the tools hidden.
    const prompt = profile.decode(s.backends.prompts[0]);
    expect(prompt).toContain('fix the bug in parser.ts');
    expect(prompt).toContain(SUMMARY_REQUEST);
    // Billed as its own usage record, under the id it returns.
    await new Promise((r) => setImmediate(r));
    expect(s.usage).toEqual([expect.objectContaining({ responseId: compacted.id, tenant: 't' })]);
    expect(compacted.usage.output_tokens).toBeGreaterThan(0);
  });

  it('keeps only the latest user messages within EDGE_COMPACTION_KEEP_USER_CHARS', async () => {
    const s = open();
    s.deps.compaction = { maxSummaryTokens: 256, keepUserChars: 60 };
    const compacted = await s.compact({ input: [user('x'.repeat(100)), user('recent')] });
    expect(compacted.output.map((i) => (i.type === 'message' ? i.content : i.type))).toEqual([
      [{ type: 'input_text', text: 'recent' }],
      'compaction',
    ]);
  });

  it('sent back without previous_response_id, renders the summary for the model and the classifier', async () => {
    const first = open();
    const compacted = await first.compact({ input: history });
    const s = open();
    const events = await s.create({ input: [...compacted.output, user('continue')] });
    expect(last(events).type).toBe('response.completed');
    const prompt = profile.decode(s.backends.prompts[0]);
    expect(prompt).toContain(SUMMARY_PREFIX + 'SUMMARY: the user wants the bug fixed');
    const scanned = s.backends.classifyCalls.flatMap((c) => c.items).filter((i) => i.itemType === 'compaction');
    expect(scanned).toEqual([
      expect.objectContaining({ text: SUMMARY_PREFIX + 'SUMMARY: the user wants the bug fixed' }),
    ]);
  });

  it('is blocked by safety when the summary carries blocked text', async () => {
    const first = open();
    model(first.backends, 'summary: BLOCK-ME');
    const compacted = await first.compact({ input: history });
    const events = await open().create({ input: [...compacted.output, user('go')] });
    expect(events.map((e) => [e.type, e.error?.code])).toEqual([['error', 'invalid_prompt']]);
  });

  it('refuses to seal a summary that output moderation blocks', async () => {
    const s = open();
    s.deps.outputModeration = { flushMs: 0, flushChars: 8 };
    model(s.backends, 'the summary says BLOCK-ME here');
    await expect(s.compact({ input: history })).rejects.toMatchObject({ status: 400, code: 'invalid_prompt' });
  });

  it.each([
    ['altered', (blob: string) => blob.slice(0, -2) + (blob.endsWith('AA') ? 'BA' : 'AA')],
    ['made for another tenant', (blob: string) => blob, 'other'],
  ])('answers a compaction item %s with a 400 invalid_encrypted_content', async (_what, mangle, tenant = 't') => {
    const compacted = await open(tenant).compact({ input: history });
    const item = compacted.output[2] as { encrypted_content: string };
    const s = open();
    const events = await s.create({
      input: [user('q'), { ...item, encrypted_content: mangle(item.encrypted_content) }],
    });
    expect(events).toEqual([
      expect.objectContaining({
        type: 'error',
        status: 400,
        error: expect.objectContaining({ code: 'invalid_encrypted_content', param: 'input[1].encrypted_content' }),
      }),
    ]);
    expect(s.backends.generateCalls).toHaveLength(0);
  });

  it('does not open a sealed reasoning blob as a compaction', async () => {
    const reasoning = seal.seal('a thought', 't');
    const events = await open().create({ input: [user('q'), { type: 'compaction', encrypted_content: reasoning }] });
    expect(last(events).error).toMatchObject({ code: 'invalid_encrypted_content' });
  });
});

describe('context_management compaction', () => {
  const threshold = [{ type: 'compaction', compact_threshold: 200 }];

  it('does nothing while the rendered input is under the threshold', async () => {
    const s = open();
    const events = await s.create({
      input: history,
      context_management: [{ type: 'compaction', compact_threshold: 100_000 }],
    });
    expect(events.some((e) => e.item?.type === 'compaction')).toBe(false);
    expect(s.backends.generateCalls).toHaveLength(1);
  });

  it('does not compact a warm-up (generate: false), which samples nothing', async () => {
    const s = open();
    const r1 = last(await s.create({ input: [user('a long first task: ' + 'word '.repeat(150))] })).response;
    const events = await s.create({
      previous_response_id: r1.id,
      input: [user('second task')],
      context_management: threshold,
      generate: false,
    });
    expect(last(events).response.output).toEqual([]);
    expect(s.backends.generateCalls).toHaveLength(1);
  });

  it('compacts past the threshold: the stream carries the compaction item first and the model reads the window', async () => {
    const s = open();
    const r1 = last(await s.create({ input: [user('a long first task: ' + 'word '.repeat(150))] })).response;
    const events = await s.create({
      previous_response_id: r1.id,
      input: [user('second task')],
      context_management: threshold,
    });
    const done = last(events);
    expect(done.type).toBe('response.completed');
    expect(events.slice(2, 4).map((e) => [e.type, e.item?.type])).toEqual([
      ['response.output_item.added', 'compaction'],
      ['response.output_item.done', 'compaction'],
    ]);
    expect(done.response.output.map((i: any) => i.type)).toEqual(['compaction', 'message']);
    expect(done.response.previous_response_id).toBe(r1.id);
    // Generate calls: turn 1, the summary (continuing turn 1's session on its worker), turn 2 over the window.
    expect(s.backends.generateCalls).toHaveLength(3);
    expect(s.backends.generateCalls[1].parentSessionKey).toBe(r1.id);
    const window = profile.decode(s.backends.prompts[2]);
    expect(window).not.toContain('a long first task');
    expect(window).toContain(SUMMARY_PREFIX + 'SUMMARY: the user wants the bug fixed');
    expect(window).toContain('second task');
    expect(s.backends.generateCalls[2].prefixLen).toBe(0);
  });

  it('continues after compaction exactly as a stateless client that sends the window back', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 30 }), async (next) => {
        const s = open();
        const r1 = last(await s.create({ input: [user('task ' + 'word '.repeat(150))] })).response;
        const r2 = last(
          await s.create({ previous_response_id: r1.id, input: [user('second')], context_management: threshold }),
        ).response;
        await s.create({ previous_response_id: r2.id, input: [user(next)] });
        const viaCache = s.backends.prompts[3];
        expect(s.backends.generateCalls[3].prefixLen).toBeGreaterThan(0);

        // A stateless client drops what came before the compaction item and sends the rest back.
        const stateless = open();
        model(stateless.backends);
        stateless.backends.script = () => ({ kind: 'message', role: 'assistant', text: 'answer 3' });
        const [compaction, answer] = r2.output;
        await stateless.create({ input: [compaction, user('second'), answer, user(next)] });
        expect(stateless.backends.prompts[0]).toEqual(viaCache);
      }),
      { numRuns: 15 },
    );
  });

  it('compacts a plain HTTP request that overflows the model window instead of refusing it', async () => {
    const s = open();
    const half = 'word '.repeat(70_000);
    const body = {
      model: 'fake-model',
      tools: [],
      tool_choice: 'auto' as const,
      parallel_tool_calls: true,
      store: false,
      context_management: [{ type: 'compaction' }],
      input: [user(half), { type: 'message' as const, role: 'assistant' as const, content: 'ok' }, user(half)],
    };
    const req: TurnRequest = {
      body,
      principal: { tenant: 't', keyId: 'k' },
      transport: 'http',
      generate: true,
      signal: new AbortController().signal,
      validateMs: 0,
      loadMs: 0,
      logger: s.deps.logger,
    };
    const outcome = await runTurn(s.deps, req, () => undefined);
    expect(outcome.response.status).toBe('completed');
    expect(outcome.response.output.map((i) => i.type)).toEqual(['compaction', 'message']);
    // Without context_management the same request is the 400 it always was.
    await expect(
      runTurn(s.deps, { ...req, body: { ...body, context_management: undefined } }, () => undefined),
    ).rejects.toMatchObject({
      code: 'context_length_exceeded',
    });
  }, 30_000);

  it('bills the summary and the response as two usage records', async () => {
    const s = open();
    const r1 = last(await s.create({ input: [user('task ' + 'word '.repeat(150))] })).response;
    const r2 = last(
      await s.create({ previous_response_id: r1.id, input: [user('second')], context_management: threshold }),
    ).response;
    await new Promise((r) => setImmediate(r));
    const ids = (s.usage as { responseId: string }[]).map((u) => u.responseId);
    expect(ids).toHaveLength(3);
    expect(ids).toContain(r2.id);
  });

  it('compacts on a compaction_trigger item: the output is the compaction alone, and the chain goes on from it', async () => {
    const s = open();
    const r1 = last(await s.create({ input: [user('the first task, in detail')] })).response;
    const events = await s.create({ previous_response_id: r1.id, input: [{ type: 'compaction_trigger' }] });
    const done = last(events);
    expect(done.type).toBe('response.completed');
    expect(done.response.output.map((i: any) => i.type)).toEqual(['compaction']);
    // Turn 1 and the summary: nothing is sampled after the compaction.
    expect(s.backends.generateCalls).toHaveLength(2);
    await s.create({ previous_response_id: done.response.id, input: [user('next step')] });
    const prompt = profile.decode(s.backends.prompts[2]);
    expect(prompt).toContain(SUMMARY_PREFIX + 'SUMMARY: the user wants the bug fixed');
    expect(prompt).not.toContain('the first task, in detail');
  });

  it('answers a compaction_trigger that is not the final input item with a 400 naming it', async () => {
    const events = await open().create({ input: [user('a'), { type: 'compaction_trigger' }, user('b')] });
    expect(events).toEqual([
      expect.objectContaining({ type: 'error', status: 400, error: expect.objectContaining({ param: 'input[1]' }) }),
    ]);
  });
});
