import fc from 'fast-check';
import { getProfile, type ConversationEntry } from '@fastloop/model-profiles';
import { DomainError } from '@fastloop/service-kit';
import { fakeDeps, FakeBackends } from '../testing/fake-deps';
import { ResponsesSession } from './responses-session';
import { ConnectionStateCache, StateCacheBudget } from './state-cache';

const profile = getProfile('harmony-o200k');
const tools = [
  {
    type: 'function',
    name: 'read_file',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];

function open(backends = new FakeBackends(), safetyOverlap = true) {
  const { deps, usage, registry } = fakeDeps(backends, safetyOverlap);
  const events: any[] = [];
  const cache = new ConnectionStateCache(new StateCacheBudget(1 << 30), 1 << 28);
  const session = new ResponsesSession({
    deps,
    principal: { tenant: 't', keyId: 'k' },
    transport: 'websocket',
    cache,
    send: (e) => events.push(e),
    logger: deps.logger,
    maxQueued: 4,
  });
  const create = async (body: Record<string, unknown>) => {
    const from = events.length;
    session.receive(JSON.stringify({ type: 'response.create', model: 'fake-model', store: false, tools, ...body }));
    await session.whenIdle();
    return events.slice(from);
  };
  return { session, events, create, backends, cache, usage, registry, deps };
}

const terminal = (events: any[]) => events[events.length - 1];

/** The entries the chat format sees for Responses items (what the stateless path renders). */
function entriesOf(items: any[]): ConversationEntry[] {
  const names = new Map<string, string>();
  return items.map((i): ConversationEntry => {
    if (i.type === 'function_call') {
      names.set(i.call_id, i.name);
      return { kind: 'function_call', name: i.name, arguments: i.arguments, callId: i.call_id };
    }
    if (i.type === 'custom_tool_call') {
      names.set(i.call_id, i.name);
      return { kind: 'custom_tool_call', name: i.name, input: i.input, callId: i.call_id };
    }
    if (i.type === 'function_call_output' && i.call_id === undefined) {
      const callId = [...names].filter(([, name]) => name === i.name).pop()?.[0] ?? '';
      return { kind: 'function_call_output', name: i.name, output: i.output, callId };
    }
    if (i.type === 'function_call_output' || i.type === 'custom_tool_call_output') {
      return { kind: 'function_call_output', name: names.get(i.call_id)!, output: i.output, callId: i.call_id };
    }
    const text = typeof i.content === 'string' ? i.content : i.content.map((c: any) => c.text).join('\n');
    return { kind: 'message', role: i.role, text };
  });
}

describe('ResponsesSession', () => {
  it('gives every continuation the same prompt as the stateless path, sending only new tokens, classifying each item once', async () => {
    const turnArb = fc.record({
      // A tool output answers by call_id, or (function calls only) by name as Codex CLI sends it.
      kind: fc.constantFrom('tool_output', 'tool_output_by_name', 'user'),
      text: fc.string({ unit: 'grapheme', maxLength: 30 }),
      instructions: fc.option(fc.constantFrom('Be brief.', 'Be thorough.'), { nil: undefined }),
      answer: fc.boolean(),
      /** The tool the model calls in this turn's response: a function or a custom (freeform) tool. */
      tool: fc.constantFrom('read_file', 'apply_patch'),
    });
    const allTools = [...tools, { type: 'custom', name: 'apply_patch', description: 'Edit files.' }];
    const header = (instructions: string | undefined) => ({
      instructions,
      tools: [
        { name: 'read_file', description: 'Read a file', parameters: tools[0].parameters as never },
        { name: 'apply_patch', description: 'Edit files.', freeform: { type: 'text' as const } },
      ],
    });
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 30 }),
        fc.array(turnArb, { minLength: 1, maxLength: 6 }),
        async (first, turns) => {
          const s = open();
          let turnIndex = 0;
          s.backends.script = (): ConversationEntry => {
            const turn = turns[turnIndex - 1];
            if (turn?.answer) return { kind: 'message', role: 'assistant', text: `answer ${turnIndex}` };
            if (turn?.tool === 'apply_patch')
              return {
                kind: 'custom_tool_call',
                name: 'apply_patch',
                input: `*** Begin Patch\n${turnIndex}\n*** End Patch`,
                callId: '',
              };
            return { kind: 'function_call', name: 'read_file', arguments: `{"path":"${turnIndex}"}`, callId: '' };
          };
          const all: any[] = [{ type: 'message', role: 'user', content: first }];
          let r = terminal(await s.create({ input: first, tools: allTools })).response;
          all.push(...r.output);
          for (const turn of turns) {
            turnIndex++;
            const last = r.output[r.output.length - 1];
            let item: Record<string, unknown> = { type: 'message', role: 'user', content: turn.text || '?' };
            if (turn.kind !== 'user' && last?.type === 'custom_tool_call')
              item = { type: 'custom_tool_call_output', call_id: last.call_id, output: turn.text };
            else if (turn.kind === 'tool_output' && last?.type === 'function_call')
              item = { type: 'function_call_output', call_id: last.call_id, output: turn.text };
            else if (turn.kind === 'tool_output_by_name' && last?.type === 'function_call')
              item = { type: 'function_call_output', name: last.name, output: turn.text };
            all.push(item);
            const events = await s.create({
              previous_response_id: r.id,
              input: [item],
              instructions: turn.instructions,
              tools: allTools,
            });
            r = terminal(events).response;
            expect(r.status).toBe('completed');
            const expected = profile.render(header(turn.instructions), entriesOf(all));
            expect(s.backends.prompts[s.backends.prompts.length - 1]).toEqual(expected);
            const call = s.backends.generateCalls[s.backends.generateCalls.length - 1];
            if (turn.instructions === undefined && turns[turnIndex - 2]?.instructions === undefined) {
              // Same header: the worker holds everything up to the new item.
              expect(call.prefixLen).toBeGreaterThan(0);
              expect(call.tokens.length).toBeLessThan(profile.renderEntry(entriesOf([item])[0]).length + 40);
            }
            all.push(...r.output);
          }
          // Safety saw every item once, in order (outputs when the next turn carried them).
          const isHeader = (c: { items: { itemType: string }[] }) =>
            c.items.some((i) => i.itemType === 'tool_definition' || i.itemType === 'instructions');
          const classified = s.backends.classifyCalls
            .filter((c) => !isHeader(c))
            .flatMap((c) => c.items.map((i) => i.text));
          // The header (instructions + tools) once per distinct header, whatever the number of turns.
          const headers = new Set([undefined, ...turns.map((t) => t.instructions)]);
          expect(s.backends.classifyCalls.filter(isHeader)).toHaveLength(headers.size);
          const expectedTexts = all.slice(0, all.length - r.output.length).map((i) => {
            if (i.type === 'function_call') return `${i.name}\n${i.arguments}`;
            if (i.type === 'custom_tool_call') return `${i.name}\n${i.input}`;
            if (i.type === 'function_call_output' && i.call_id === undefined)
              return [i.name, i.output].filter(Boolean).join('\n');
            if (i.type === 'function_call_output' || i.type === 'custom_tool_call_output') return i.output;
            return typeof i.content === 'string' ? i.content : i.content.map((c: any) => c.text).join('\n');
          });
          expect(classified).toEqual(expectedTexts);
          // One route for the whole conversation.
          expect(s.backends.routeCalls).toHaveLength(1);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('routes again when a continuation names another model, keeping the whole conversation in the prompt', async () => {
    const s = open();
    const r = terminal(await s.create({ input: 'hi' })).response;
    const item = { type: 'function_call_output', call_id: r.output[0].call_id, output: 'x' };
    expect(terminal(await s.create({ model: 'alias', previous_response_id: r.id, input: [item] })).type).toBe(
      'response.completed',
    );
    expect(s.backends.routeCalls.map((c) => c.model)).toEqual(['fake-model', 'alias']);
    const all = [{ type: 'message', role: 'user', content: 'hi' }, ...r.output, item];
    const header = {
      tools: [{ name: 'read_file', description: 'Read a file', parameters: tools[0].parameters as never }],
    };
    expect(s.backends.prompts[1]).toEqual(profile.render(header, entriesOf(all)));
  });

  it('continues with a function_call_output that names its tool instead of a call_id, as Codex CLI sends it', async () => {
    const s = open();
    const r = terminal(await s.create({ input: 'hi' })).response;
    const item = { type: 'function_call_output', name: 'read_file', output: 'contents' };
    expect(terminal(await s.create({ previous_response_id: r.id, input: [item] })).type).toBe('response.completed');
    const all = [
      { type: 'message', role: 'user', content: 'hi' },
      ...r.output,
      { ...item, call_id: r.output[0].call_id },
    ];
    const header = {
      tools: [{ name: 'read_file', description: 'Read a file', parameters: tools[0].parameters as never }],
    };
    expect(s.backends.prompts[1]).toEqual(profile.render(header, entriesOf(all)));
  });

  it('resends the full prompt once when the worker answers prefix_miss', async () => {
    const s = open();
    const r = terminal(await s.create({ input: 'hi' })).response;
    s.backends.failNextGenerate = new DomainError('prefix_miss', 'lost', 9, true);
    const call = r.output[0];
    const done = terminal(
      await s.create({
        previous_response_id: r.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'x' }],
      }),
    );
    expect(done.type).toBe('response.completed');
    const [, missed, resent] = s.backends.generateCalls;
    expect(missed.prefixLen).toBeGreaterThan(0);
    expect(resent.prefixLen).toBe(0);
    expect(resent.tokens.length).toBe(s.backends.prompts[1].length);
  });

  it("records the engine's own time to the chunk that opened the first output item, and the edge's overhead around it", async () => {
    const s = open();
    await s.create({ input: 'hi' });
    // The fake worker sends 3 tokens a chunk, reporting 10 ms per chunk; harmony opens a function
    // call once its header is complete.
    const header = profile.renderCompletion(s.backends.script(0));
    const parser = profile.createOutputParser();
    const opening = header.findIndex((t) => parser.push([t]).some((e) => e.type === 'item_start'));
    const metric = (await s.registry.getSingleMetric('fastloop_edge_engine_first_item_seconds')!.get()).values as {
      metricName?: string;
      labels: Record<string, unknown>;
      value: number;
    }[];
    const sum = metric.find(
      (v) => v.metricName === 'fastloop_edge_engine_first_item_seconds_sum' && v.labels.transport === 'websocket',
    );
    const count = metric.find(
      (v) => v.metricName === 'fastloop_edge_engine_first_item_seconds_count' && v.labels.transport === 'websocket',
    );
    expect(count?.value).toBe(1);
    expect(sum?.value).toBeCloseTo((10 * (Math.floor(opening / 3) + 1)) / 1000);
    const overhead = (await s.registry.getSingleMetric('fastloop_edge_first_item_overhead_seconds')!.get()).values as {
      metricName?: string;
      labels: Record<string, unknown>;
      value: number;
    }[];
    expect(
      overhead.find(
        (v) => v.metricName === 'fastloop_edge_first_item_overhead_seconds_count' && v.labels.transport === 'websocket',
      )?.value,
    ).toBe(1);
  });

  it('queues a response.create sent while one runs and answers them in order', async () => {
    const s = open();
    s.session.receive(JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'one', store: false }));
    s.session.receive(JSON.stringify({ type: 'response.create', model: 'fake-model', input: 'two', store: false }));
    await s.session.whenIdle();
    const lifecycle = s.events
      .filter((e) => e.type === 'response.created' || e.type === 'response.completed')
      .map((e) => e.type);
    expect(lifecycle).toEqual(['response.created', 'response.completed', 'response.created', 'response.completed']);
  });

  it('rejects response.create events beyond the queue bound with an error frame', async () => {
    const s = open();
    for (let i = 0; i < 7; i++)
      s.session.receive(JSON.stringify({ type: 'response.create', model: 'fake-model', input: `m${i}`, store: false }));
    await s.session.whenIdle();
    expect(s.events.filter((e) => e.type === 'response.completed')).toHaveLength(5);
    expect(s.events.filter((e) => e.type === 'error')).toHaveLength(2);
  });

  it('evicts the previous response when its continuation fails, so it cannot be chained again', async () => {
    const s = open();
    const r = terminal(await s.create({ input: 'hi' })).response;
    const blocked = await s.create({ previous_response_id: r.id, input: 'BLOCK-ME please' });
    expect(blocked[0]).toMatchObject({ type: 'error', status: 400, error: { code: 'invalid_prompt' } });
    const again = await s.create({ previous_response_id: r.id, input: 'hello' });
    expect(again[0]).toMatchObject({
      type: 'error',
      error: { code: 'previous_response_not_found', param: 'previous_response_id' },
    });
  });

  it.each([true, false])('never sends a blocked prompt a single event, with safety overlap %s', async (overlap) => {
    const s = open(new FakeBackends(), overlap);
    const events = await s.create({ input: 'please BLOCK-ME' });
    expect(events).toEqual([
      expect.objectContaining({
        type: 'error',
        status: 400,
        error: expect.objectContaining({ code: 'invalid_prompt' }),
      }),
    ]);
    // With overlap the worker was asked (and cancelled); without, it never heard of the prompt.
    expect(s.backends.generateCalls).toHaveLength(overlap ? 1 : 0);
    await new Promise((r) => setImmediate(r));
    expect(s.usage).toHaveLength(0);
  });

  describe('ends every Generate stream it opens, not leaving one to the idle timeout', () => {
    const unavailable = () => {
      throw new DomainError('unavailable', 'safety overloaded', 14, true);
    };
    it.each([
      ['a prompt the verdict blocks', 'please BLOCK-ME', undefined, 'invalid_prompt'],
      ['a verdict that fails', 'hi', unavailable, 'safety_unavailable'],
      ['a prompt restarted with redactions', 'my REDACT-ME', undefined, undefined],
      ['a completed turn', 'hi', undefined, undefined],
    ])(
      'after %s (safety overlap: the first chunk is read ahead of the verdict)',
      async (_case, input, classify, code) => {
        const backends = new FakeBackends();
        if (classify) backends.classify = async () => classify();
        const s = open(backends);
        const events = await s.create({ input });
        if (code) expect(events[0]).toMatchObject({ type: 'error', error: { code } });
        else expect(terminal(events).type).toBe('response.completed');
        expect(backends.generateCalls.length).toBeGreaterThan(0);
        expect(backends.openGenerateStreams).toBe(0);
      },
    );

    it('after an error while a chunk is handled (nothing else cancels that call)', async () => {
      const { deps, backends } = fakeDeps();
      const events: any[] = [];
      const session = new ResponsesSession({
        deps,
        principal: { tenant: 't', keyId: 'k' },
        transport: 'websocket',
        cache: new ConnectionStateCache(new StateCacheBudget(1 << 30), 1 << 28),
        send: (e) => {
          if (e.type === 'response.output_item.added') throw new Error('socket write failed');
          events.push(e);
        },
        logger: deps.logger,
        maxQueued: 4,
      });
      session.receive(
        JSON.stringify({ type: 'response.create', model: 'fake-model', store: false, tools, input: 'hi' }),
      );
      await session.whenIdle();
      expect(terminal(events)).toMatchObject({ type: 'response.failed' });
      expect(backends.openGenerateStreams).toBe(0);
    });

    it('after the client goes away mid-stream', async () => {
      const backends = new FakeBackends();
      const s = open(backends);
      s.session.receive(
        JSON.stringify({ type: 'response.create', model: 'fake-model', store: false, tools, input: 'hi' }),
      );
      while (!s.events.some((e) => e.type === 'response.output_item.added')) await new Promise((r) => setImmediate(r));
      s.session.close();
      await s.session.whenIdle();
      expect(backends.openGenerateStreams).toBe(0);
    });
  });

  it.each([true, false])(
    'ends a continuation that outgrows the context window in response.failed with context_length_exceeded, sending nothing to a worker (safety overlap %s)',
    async (overlap) => {
      const backends = new FakeBackends();
      const route = backends.route.bind(backends);
      backends.route = async (req) => ({ ...(await route(req)), contextWindow: 400 });
      const s = open(backends, overlap);
      const r = terminal(await s.create({ input: 'hi' })).response;
      const calls = backends.generateCalls.length;
      const events = await s.create({
        previous_response_id: r.id,
        input: [
          { type: 'function_call_output', call_id: r.output[0].call_id, output: 'line of tool output\n'.repeat(200) },
        ],
      });
      expect(events.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'response.failed']);
      expect(terminal(events).response).toMatchObject({
        status: 'failed',
        error: { code: 'context_length_exceeded' },
        previous_response_id: r.id,
      });
      expect(backends.generateCalls).toHaveLength(calls);
      await new Promise((res) => setImmediate(res));
      expect(s.usage[s.usage.length - 1]).toMatchObject({ status: 'failed', inputTokens: 0, outputTokens: 0 });
    },
  );

  it('answers an oversized prompt that is also blocked with invalid_prompt, not response.failed', async () => {
    const backends = new FakeBackends();
    const route = backends.route.bind(backends);
    backends.route = async (req) => ({ ...(await route(req)), contextWindow: 100 });
    const events = await open(backends).create({ input: 'BLOCK-ME '.repeat(100) });
    expect(events).toEqual([
      expect.objectContaining({ type: 'error', error: expect.objectContaining({ code: 'invalid_prompt' }) }),
    ]);
  });

  it.each([
    [
      'a custom_tool_call_output',
      [
        { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'custom_tool_call_output', call_id: 'call_p', output: `-----BEGIN PRIVATE KEY-----\nMIIE` },
      ],
    ],
    [
      'a refusal part',
      [{ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: '-----BEGIN PRIVATE KEY-----' }] }],
    ],
    [
      'a local_shell_call_output',
      [{ type: 'local_shell_call_output', id: 'call_s', output: 'x -----BEGIN PRIVATE KEY-----' }],
    ],
    [
      'a carried hosted-tool item',
      [
        {
          type: 'mcp_call',
          id: 'mc_1',
          server_label: 's',
          name: 't',
          arguments: '{}',
          output: '-----BEGIN PRIVATE KEY-----',
        },
      ],
    ],
  ])('blocks a private key inside %s', async (_, input) => {
    const s = open();
    s.backends.blockMarker = '-----BEGIN PRIVATE KEY-----';
    const events = await s.create({ input: [{ role: 'user', content: 'go' }, ...input] });
    expect(events).toEqual([
      expect.objectContaining({
        type: 'error',
        status: 400,
        error: expect.objectContaining({ code: 'invalid_prompt' }),
      }),
    ]);
  });

  it.each([
    ['instructions', { instructions: 'rules -----BEGIN PRIVATE KEY-----' }, 'the instructions were'],
    [
      'a tool description',
      { tools: [{ type: 'function', name: 'f', description: '-----BEGIN PRIVATE KEY-----' }] },
      'tool definition 0 was',
    ],
    [
      'a custom tool grammar',
      {
        tools: [
          {
            type: 'custom',
            name: 'g',
            format: { type: 'grammar', syntax: 'lark', definition: 'start: "-----BEGIN PRIVATE KEY-----"' },
          },
        ],
      },
      'tool definition 0 was',
    ],
    [
      'a namespace description',
      {
        tools: [
          {
            type: 'namespace',
            name: 'ns',
            description: '-----BEGIN PRIVATE KEY-----',
            tools: [{ type: 'function', name: 'f' }],
          },
        ],
      },
      'tool definition 0 was',
    ],
  ])('blocks a private key inside %s, which the model reads as its developer message', async (_, body, what) => {
    const s = open();
    s.backends.blockMarker = '-----BEGIN PRIVATE KEY-----';
    const events = await s.create({ input: 'go', ...body });
    expect(events).toEqual([
      expect.objectContaining({
        type: 'error',
        status: 400,
        error: expect.objectContaining({ code: 'invalid_prompt', message: expect.stringContaining(what) }),
      }),
    ]);
  });

  it('streams a call to a custom tool as a custom_tool_call and continues from its output as the stateless path would', async () => {
    const s = open();
    const patch = '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch';
    s.backends.script = () => ({ kind: 'custom_tool_call', name: 'apply_patch', input: patch, callId: '' });
    const customTools = [...tools, { type: 'custom', name: 'apply_patch', description: 'Edit files.' }];
    const events = await s.create({ input: 'edit', tools: customTools });
    const r = terminal(events).response;
    expect(r.output).toEqual([
      {
        id: expect.stringMatching(/^ctc_/),
        type: 'custom_tool_call',
        status: 'completed',
        call_id: expect.stringMatching(/^call_/),
        name: 'apply_patch',
        input: patch,
      },
    ]);
    expect(events.map((e) => e.type)).toContain('response.custom_tool_call_input.delta');
    expect(events.find((e) => e.type === 'response.custom_tool_call_input.done')).toMatchObject({
      input: patch,
      item_id: r.output[0].id,
    });

    s.backends.script = () => ({ kind: 'message', role: 'assistant', text: 'done' });
    const output = { type: 'custom_tool_call_output', call_id: r.output[0].call_id, output: 'Done!' };
    expect(terminal(await s.create({ previous_response_id: r.id, input: [output], tools: customTools })).type).toBe(
      'response.completed',
    );
    const header = {
      tools: [
        { name: 'read_file', description: 'Read a file', parameters: tools[0].parameters as never },
        { name: 'apply_patch', description: 'Edit files.', freeform: { type: 'text' as const } },
      ],
    };
    const stateless: ConversationEntry[] = [
      { kind: 'message', role: 'user', text: 'edit' },
      { kind: 'custom_tool_call', name: 'apply_patch', input: patch, callId: r.output[0].call_id },
      { kind: 'function_call_output', name: 'apply_patch', output: 'Done!', callId: r.output[0].call_id },
    ];
    expect(s.backends.prompts[1]).toEqual(profile.render(header, stateless));
  });

  it('returns a call to the offered local_shell tool as a local_shell_call item and continues from its output', async () => {
    const s = open();
    s.backends.script = () => ({
      kind: 'function_call',
      name: 'local_shell',
      arguments: '{"command":["ls","-la"],"working_directory":"/tmp"}',
      callId: '',
    });
    const shellTools = [...tools, { type: 'local_shell' }];
    const events = await s.create({ input: 'list', tools: shellTools });
    const r = terminal(events).response;
    expect(r.output).toEqual([
      {
        id: expect.stringMatching(/^lsh_/),
        type: 'local_shell_call',
        status: 'completed',
        call_id: expect.stringMatching(/^call_/),
        action: { type: 'exec', command: ['ls', '-la'], working_directory: '/tmp', env: {} },
      },
    ]);
    expect(events.filter((e) => e.type.startsWith('response.output_item')).map((e) => [e.type, e.item.status])).toEqual(
      [
        ['response.output_item.added', 'in_progress'],
        ['response.output_item.done', 'completed'],
      ],
    );
    s.backends.script = () => ({ kind: 'message', role: 'assistant', text: 'listed' });
    const next = await s.create({
      previous_response_id: r.id,
      input: [{ type: 'local_shell_call_output', id: r.output[0].call_id, output: 'a.txt' }],
      tools: shellTools,
    });
    expect(terminal(next).type).toBe('response.completed');
    expect(profile.decode(s.backends.prompts[1])).toContain(
      '<|start|>functions.local_shell to=assistant<|channel|>commentary<|message|>a.txt<|end|>',
    );
  });

  it('returns a local_shell call whose arguments are not an action as the function_call the model wrote', async () => {
    const s = open();
    s.backends.script = () => ({ kind: 'function_call', name: 'local_shell', arguments: '{"cmd":"ls"}', callId: '' });
    const r = terminal(await s.create({ input: 'list', tools: [{ type: 'local_shell' }] })).response;
    expect(r.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        name: 'local_shell',
        arguments: '{"cmd":"ls"}',
        status: 'completed',
      }),
    ]);
  });

  it("resolves an item_reference from the store within the caller's tenant when the connection does not hold it", async () => {
    const s = open();
    const stored = { type: 'message', role: 'user', content: 'from the store', id: 'msg_stored' } as const;
    const asked: [string, string][] = [];
    s.deps.items = {
      find: async (id, tenant) => {
        asked.push([id, tenant]);
        return id === stored.id && tenant === 't' ? stored : undefined;
      },
    };
    expect(terminal(await s.create({ input: [{ type: 'item_reference', id: 'msg_stored' }] })).type).toBe(
      'response.completed',
    );
    expect(asked).toEqual([['msg_stored', 't']]);
    expect(profile.decode(s.backends.prompts[0])).toContain('<|start|>user<|message|>from the store<|end|>');
    const missing = await s.create({ input: [{ type: 'item_reference', id: 'msg_other' }] });
    expect(missing).toEqual([
      expect.objectContaining({ type: 'error', status: 400, error: expect.objectContaining({ param: 'input[0].id' }) }),
    ]);
  });

  it('warms the cache with generate: false, sampling nothing, and chains from the returned id', async () => {
    const s = open();
    const warm = terminal(
      await s.create({ input: [{ role: 'developer', content: 'rules' }], generate: false }),
    ).response;
    expect(warm.output).toEqual([]);
    expect(s.backends.generateCalls).toHaveLength(0);
    const next = terminal(await s.create({ previous_response_id: warm.id, input: 'go' }));
    expect(next.type).toBe('response.completed');
    expect(s.backends.routeCalls).toHaveLength(1);
  });

  it('answers malformed JSON and unknown events with error frames and keeps serving', async () => {
    const s = open();
    s.session.receive('{nope');
    s.session.receive(JSON.stringify({ type: 'response.cancel' }));
    expect(s.events.map((e) => [e.type, e.status, e.error.code])).toEqual([
      ['error', 400, 'invalid_json'],
      ['error', 400, 'invalid_value'],
    ]);
    expect(terminal(await s.create({ input: 'ok' })).type).toBe('response.completed');
  });

  it('fails a response that already started with exactly one response.failed when the worker dies mid-way', async () => {
    const s = open();
    // Every worker fails (the retry on another worker too).
    const generate = s.backends.generate.bind(s.backends);
    s.backends.generate = (address, req, signal) => {
      s.backends.failNextGenerate = new DomainError('engine_error', 'boom', 13);
      return generate(address, req, signal);
    };
    const events = await s.create({ input: 'hi' });
    expect(events.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'response.failed']);
    expect(terminal(events).response.error).toMatchObject({ code: 'server_error' });
    // Usage is recorded after the terminal event, off the turn's path.
    expect(s.usage).toHaveLength(0);
    await new Promise((r) => setImmediate(r));
    expect(s.usage).toEqual([expect.objectContaining({ status: 'failed', tenant: 't', model: 'fake-model' })]);
  });
});
