import fc from 'fast-check';
import { getProfile } from '@fastloop/model-profiles';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { openWsSession } from '../testing/ws-session';
import { ResponsesSession } from '../session/responses-session';
import { ConnectionStateCache, StateCacheBudget } from '../session/state-cache';
import { flattenStrings, headerSafetyItems } from './header-items';
import { HeaderVerdicts } from './header-verdicts';
import type { ConversationState } from '../turn/conversation-state';
import { StoredStateLoader } from '../store/stored-state-loader';
import { ownedCopy } from '../turn/verdict';
import { headerKeyOf } from '../turn/render-conversation';
import { toHeader } from '../turn/render-header';
import { sameHeaderSource } from '../turn/same-header-source';
import type { ResponseStore } from '../store/response-store';
import type { StoreWriter } from '../store/store-writer';

function open() {
  const { deps, backends, registry } = fakeDeps(new FakeBackends(), true);
  return { create: openWsSession(deps).create, backends, registry };
}

const tool = (description: string, extra: Record<string, unknown> = {}) => ({
  type: 'function',
  name: 'lookup',
  description,
  parameters: {
    type: 'object',
    properties: { mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast', description: 'how', ...extra } },
  },
});

describe('header safety', () => {
  it('turns instructions and every readable string of a tool schema into safety items', () => {
    const items = headerSafetyItems({
      model: 'm',
      instructions: 'Be brief.',
      tools: [tool('Looks things up', { examples: ['x-1'] })],
    } as never);
    expect(items.map((i) => i.itemType)).toEqual(['instructions', 'tool_definition']);
    for (const s of ['lookup', 'Looks things up', 'mode', 'fast', 'slow', 'how', 'x-1', 'enum', 'default'])
      expect(items[1].text.split('\n')).toContain(s);
    expect(headerSafetyItems({ model: 'm', tools: [tool('x')], tool_choice: 'none' } as never)).toEqual([]);
    expect(flattenStrings({ a: [1, true, { b: 'c' }] })).toBe('a\n1\ntrue\nb\nc');
  });

  it('covers every tool type the model is offered: custom grammars, namespaces and their members, local_shell', () => {
    const items = headerSafetyItems({
      model: 'm',
      tools: [
        {
          type: 'custom',
          name: 'patch',
          description: 'Edits files',
          format: { type: 'grammar', syntax: 'lark', definition: 'start: "GRAMMAR-TEXT"' },
        },
        {
          type: 'namespace',
          name: 'ns',
          description: 'NS-DESCRIPTION',
          tools: [{ type: 'function', name: 'inner', description: 'INNER-DESCRIPTION' }],
        },
        { type: 'local_shell' },
      ],
    } as never);
    expect(items.map((i) => i.itemType)).toEqual(['tool_definition', 'tool_definition', 'tool_definition']);
    expect(items[0].text).toContain('start: "GRAMMAR-TEXT"');
    for (const s of ['ns', 'NS-DESCRIPTION', 'inner', 'INNER-DESCRIPTION'])
      expect(items[1].text.split('\n')).toContain(s);
    expect(items[2].text.split('\n')).toContain('local_shell');
  });

  it.each([
    ['the instructions', { instructions: 'use BLOCK-ME' }],
    ['a tool description', { tools: [tool('BLOCK-ME')] }],
    ['an enum value', { tools: [tool('ok', { enum: ['BLOCK-ME'] })] }],
    ['a schema default', { tools: [tool('ok', { default: 'BLOCK-ME' })] }],
    [
      'a text.format schema const',
      { text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object', const: 'BLOCK-ME' } } } },
    ],
  ])('blocks a request when %s matches, before any event', async (_, header) => {
    const s = open();
    const events = await s.create({ input: 'hi', ...header });
    expect(events).toEqual([
      expect.objectContaining({
        type: 'error',
        status: 400,
        error: expect.objectContaining({ code: 'invalid_prompt' }),
      }),
    ]);
  });

  it('classifies a header once while it is unchanged, and again when it changes', async () => {
    const s = open();
    const headerCalls = () =>
      s.backends.classifyCalls.filter((c) => c.items.some((i) => i.itemType === 'tool_definition')).length;
    let r = (await s.create({ input: 'a', tools: [tool('one')] })).at(-1).response;
    r = (await s.create({ previous_response_id: r.id, input: 'b', tools: [tool('one')] })).at(-1).response;
    await s.create({ previous_response_id: r.id, input: 'c', tools: [tool('one')] });
    expect(headerCalls()).toBe(1);
    await s.create({ input: 'd', tools: [tool('two')] });
    expect(headerCalls()).toBe(2);
  });

  it('names the text.format schema when it blocks, and keys the verdict on it', async () => {
    const s = open();
    const format = (schema: Record<string, unknown>) => ({ format: { type: 'json_schema', name: 'out', schema } });
    const events = await s.create({ input: 'hi', text: format({ type: 'object', description: 'BLOCK-ME' }) });
    expect(events[0].error.message).toMatch(/the text\.format schema was blocked/);
    const schemaCalls = () =>
      s.backends.classifyCalls.filter((c) => c.items.some((i) => i.itemType === 'text_format')).length;
    await s.create({ input: 'a', text: format({ type: 'object' }) });
    await s.create({ input: 'b', text: format({ type: 'object' }) });
    expect(schemaCalls()).toBe(2);
    await s.create({ input: 'c', text: format({ type: 'object', title: 'other' }) });
    expect(schemaCalls()).toBe(3);
  });

  it("classifies under the router's canonical model, not the alias the client typed", async () => {
    const s = open();
    await s.create({ model: 'alias', input: 'hi', instructions: 'Be brief.' });
    expect(s.backends.routeCalls.map((c) => c.model)).toEqual(['alias']);
    expect(s.backends.classifyCalls.map((c) => c.model)).toEqual(['fake-model', 'fake-model']);
    // The header's verdict is shared by every name of the model: no second header classification.
    await s.create({ model: 'fake-model', input: 'hi', instructions: 'Be brief.' });
    expect(s.backends.classifyCalls.filter((c) => c.items[0]?.itemType === 'instructions')).toHaveLength(1);
  });

  it("reuses the previous turn's header verdict without flattening and hashing unchanged tools again", async () => {
    const s = open();
    const key = jest.spyOn(HeaderVerdicts, 'key');
    try {
      const tools = [tool('Looks things up FLAG-ME')];
      let r = (await s.create({ input: 'a', tools })).at(-1).response;
      expect(key).toHaveBeenCalledTimes(1);
      for (const input of ['b', 'c']) {
        const events = await s.create({ previous_response_id: r.id, input, tools });
        r = events.at(-1).response;
        // The carried verdict's findings are the turn's as before: flagged in its metadata.
        expect(r.metadata.fastloop_safety).toBe('policy:marker@header#0:flag');
      }
      expect(key).toHaveBeenCalledTimes(1);
      await s.create({ previous_response_id: r.id, input: 'd', tools: [tool('Looks things up')] });
      expect(key).toHaveBeenCalledTimes(2);
    } finally {
      key.mockRestore();
    }
  });

  it('takes a header for the previous one only when it renders and classifies the same (property)', () => {
    const toolArb = fc.record(
      {
        type: fc.constant('function'),
        name: fc.constantFrom('a', 'b'),
        description: fc.constantFrom('x', 'y', 'x\ny'),
        parameters: fc.dictionary(fc.constantFrom('p', 'q'), fc.constantFrom('s', 1, '1', true)),
      },
      { requiredKeys: ['type', 'name'] },
    );
    const headerArb = fc.record(
      {
        model: fc.constantFrom('m1', 'm2'),
        instructions: fc.constantFrom(null, '', 'Be brief.', 'Be\nbrief.'),
        tools: fc.array(toolArb, { maxLength: 3 }),
        tool_choice: fc.constantFrom('none', 'auto', 'required', { type: 'function', name: 'a' }),
        reasoning: fc.record({ effort: fc.constantFrom(null, 'low', 'high') }),
        text: fc.record({ format: fc.constantFrom({ type: 'text' }, { type: 'json_object' }) }),
      },
      { requiredKeys: ['model'] },
    );
    const safetyKey = (h: Record<string, unknown>) => HeaderVerdicts.key('t', 'm', headerSafetyItems(h as never));
    const renderKey = (h: Record<string, unknown>) => headerKeyOf(toHeader(h as never));
    const field = fc.constantFrom('model', 'instructions', 'tools', 'tool_choice', 'reasoning', 'text');
    fc.assert(
      // b: a with one field taken from another header (often the same value), as a next turn may send.
      fc.property(headerArb, headerArb, field, (a, other, f) => {
        const b: Record<string, unknown> = { ...a, [f]: (other as Record<string, unknown>)[f] };
        if (b[f] === undefined) delete b[f];
        // A copy of the same header (the client resends it every turn) is recognised...
        expect(sameHeaderSource(a as never, JSON.parse(JSON.stringify(a)))).toBe(true);
        // ...and a header taken for the previous one renders and classifies as it did.
        if (sameHeaderSource(a as never, b as never)) {
          expect(safetyKey(b)).toBe(safetyKey(a));
          expect(renderKey(b)).toBe(renderKey(a));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('records flagged findings in response metadata and metrics, and still answers', async () => {
    const s = open();
    const events = await s.create({ input: 'hi FLAG-ME', instructions: 'also FLAG-ME', metadata: { run: '1' } });
    const done = events.at(-1).response;
    expect(done.status).toBe('completed');
    expect(events[0].response.metadata).toEqual({
      run: '1',
      fastloop_safety: 'policy:marker@header#0:flag,policy:marker@input#0:flag',
    });
    expect(await s.registry.metrics()).toMatch(
      /fastloop_edge_safety_findings_total\{category="policy",action="flag",source="input"\} 1/,
    );
  });
});

describe('HeaderVerdicts', () => {
  it('keeps at most its bound of headers, evicting the least recently used, and forgets failures', async () => {
    const v = new HeaderVerdicts(2);
    let calls = 0;
    const ok = () => (
      calls++,
      Promise.resolve({ verdict: 1, state: Buffer.alloc(0), findings: [], itemsSeen: 0, windowChars: 1 })
    );
    await v.get('a', ok);
    await v.get('b', ok);
    await v.get('a', ok);
    await v.get('c', ok);
    expect(calls).toBe(3);
    await v.get('a', ok);
    await v.get('b', ok); // evicted by c
    expect(calls).toBe(4);
    await expect(v.get('x', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    await new Promise((r) => setImmediate(r));
    expect(v.size).toBe(1); // b; the failed x (which evicted a) is forgotten
  });

  it("keeps a verdict's findings but not safety's carried state, a view that pins its whole message buffer", async () => {
    const v = new HeaderVerdicts();
    const slab = Buffer.alloc(8192);
    const finding = {
      ruleId: 'r',
      itemIndex: 0,
      message: 'm',
      category: 1,
      action: 2,
      start: 0,
      endItemIndex: 0,
      end: 1,
      score: 0,
      provisional: false,
    };
    const res = await v.get('a', () =>
      Promise.resolve({ verdict: 1, state: slab.subarray(10, 30), findings: [finding], itemsSeen: 1, windowChars: 1 }),
    );
    expect(res).toMatchObject({ verdict: 1, findings: [finding], itemsSeen: 1 });
    expect(res.state.buffer).not.toBe(slab.buffer);
    expect((await v.get('a', () => Promise.reject(new Error('not called')))).state.byteLength).toBe(0);
  });
});

describe('redaction', () => {
  it.each([true, false])(
    'masks a redacted span in what the model reads, keeps the client items, with safety overlap %s',
    async (overlap) => {
      const backends = new FakeBackends();
      const { deps } = fakeDeps(backends, overlap);
      const { create } = openWsSession(deps);
      const decode = (tokens: number[]) => getProfile('harmony-o200k').decode(tokens);
      const first = (await create({ input: 'my key is REDACT-ME ok' })).at(-1).response;
      expect(first.status).toBe('completed');
      expect(first.metadata.fastloop_safety).toBe('policy:marker@input#0:redact');
      const prompt = decode(backends.prompts.at(-1)!);
      expect(prompt).toContain('my key is [redacted marker] ok');
      expect(prompt).not.toContain('REDACT-ME');
      // The continuation renders from the masked state: the worker never sees the value.
      await create({ previous_response_id: first.id, input: 'next' });
      expect(decode(backends.prompts.at(-1)!)).not.toContain('REDACT-ME');
      expect(decode(backends.prompts.at(-1)!)).toContain('[redacted marker]');
    },
  );

  it.each([
    [
      'a custom tool output',
      [
        { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: 'patch' },
        { type: 'custom_tool_call_output', call_id: 'call_p', output: 'token REDACT-ME end' },
      ],
    ],
    [
      'an output that names its tool',
      [{ type: 'function_call_output', name: 'exec', namespace: 'shell', output: 'token REDACT-ME end' }],
    ],
  ])('masks a redacted span inside %s at the span safety found in its scan text', async (_, input) => {
    const backends = new FakeBackends();
    const { deps } = fakeDeps(backends, false);
    const events = await openWsSession(deps).create({ input: [{ role: 'user', content: 'go' }, ...input] });
    expect(events.at(-1)).toMatchObject({ type: 'response.completed' });
    const prompt = getProfile('harmony-o200k').decode(backends.prompts.at(-1)!);
    expect(prompt).toContain('token [redacted marker] end');
    expect(prompt).not.toContain('REDACT-ME');
  });
});

describe('redaction across a store reload', () => {
  it('masks the earlier value again when a redacted conversation is rebuilt from the client items', async () => {
    const backends = new FakeBackends();
    const { deps } = fakeDeps(backends, true);
    const saved: ConversationState[] = [];
    deps.store = { save: (state) => saved.push(state) };
    // The store keeps the client's items; the loader rebuilds entries from them (unmasked).
    const loader = new StoredStateLoader(
      {
        get: async () => {
          const s = saved.at(-1)!;
          return {
            response: s.response,
            tenant: 't',
            itemsKey: 'k',
            itemsLength: s.items.length,
            inputLength: 0,
            safetyState: s.safetyState.toString('base64'),
            safetyItems: s.safetyItems,
            redacted: s.redacted,
            route: s.route,
            workerPrefixLength: 0,
            sampled: [],
          };
        },
        items: async () => saved.at(-1)!.items.slice(),
      } as unknown as ResponseStore,
      { settled: async () => undefined } as unknown as StoreWriter,
      deps.renderCache,
    );
    const events: any[] = [];
    const session = (cacheBytes: number) =>
      new ResponsesSession({
        deps,
        loader,
        principal: { tenant: 't', keyId: 'k' },
        transport: 'websocket',
        cache: new ConnectionStateCache(new StateCacheBudget(1 << 30), cacheBytes),
        send: (e) => events.push(e),
        logger: deps.logger,
        maxQueued: 4,
      });
    const first = session(1 << 28);
    first.receive(JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'key REDACT-ME here' }));
    await first.whenIdle();
    await new Promise((r) => setImmediate(r));
    expect(saved.at(-1)?.redacted).toBe(true);
    // A new connection: the continuation is loaded from the store.
    const second = session(1 << 28);
    second.receive(
      JSON.stringify({
        type: 'response.create',
        model: 'fake-model',
        previous_response_id: events.at(-1).response.id,
        input: 'go on',
      }),
    );
    await second.whenIdle();
    expect(events.at(-1)).toMatchObject({ type: 'response.completed' });
    const prompt = getProfile('harmony-o200k').decode(backends.prompts.at(-1)!);
    expect(prompt).toContain('key [redacted marker] here');
    expect(prompt).not.toContain('REDACT-ME');
  });
});

describe('the safety state a conversation keeps', () => {
  it('is a copy in a buffer of its own, not a view of the message buffer or a shared pool slab', () => {
    const slab = Buffer.alloc(8192, 7);
    const state = ownedCopy(slab.subarray(100, 140));
    expect(state.equals(slab.subarray(100, 140))).toBe(true);
    expect(state.buffer.byteLength).toBe(40);
  });
});
