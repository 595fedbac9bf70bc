import { schemaProblems } from '@fastloop/test-kit';
import { stackForThisFile } from './file-stack';
import { expectWellFormedStream, openaiClient } from './clients';
import { weatherTool } from './stack-fixture';

const MODEL = 'fastloop-sim';

stackForThisFile();

describe('HTTP+SSE with the official openai SDK', () => {
  let client: ReturnType<typeof openaiClient>;
  beforeAll(() => {
    client = openaiClient();
  });

  it('lists the simulated model on GET /v1/models', async () => {
    const page = await client.models.list();
    expect(page.data.map((m) => m.id)).toContain(MODEL);
  });

  it('answers a non-streaming request with a function call whose arguments fit the tool schema', async () => {
    const r = await client.responses.create({
      model: MODEL,
      input: 'What is the weather in Paris?',
      tools: [weatherTool],
      store: false,
    });
    expect(r.id).toMatch(/^resp_/);
    expect(r.object).toBe('response');
    expect(r.status).toBe('completed');
    expect(r.model).toBe(MODEL);
    expect(r.output).toHaveLength(1);
    const call = r.output[0];
    if (call.type !== 'function_call') throw new Error(`expected a function_call, got ${call.type}`);
    expect(call.id).toMatch(/^fc_/);
    expect(call.call_id).toMatch(/^call_/);
    expect(call.name).toBe('get_weather');
    expect(schemaProblems(weatherTool.parameters, JSON.parse(call.arguments))).toEqual([]);
    expect(r.usage!.input_tokens).toBeGreaterThan(50);
    expect(r.usage!.output_tokens).toBeGreaterThan(3);
    expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
  });

  it('streams a function call as SSE events in the documented order', async () => {
    const stream = await client.responses.create({
      model: MODEL,
      input: 'Weather in Oslo?',
      tools: [weatherTool],
      stream: true,
      store: false,
    });
    const events: any[] = [];
    for await (const e of stream) events.push(e);
    const terminal = expectWellFormedStream(events);
    expect(terminal.type).toBe('response.completed');
    const types = events.map((e) => e.type).filter((t) => t !== 'response.function_call_arguments.delta');
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta');
    expect(deltas.length).toBeGreaterThan(0);
    const done = events.find((e) => e.type === 'response.output_item.done');
    expect(deltas.map((d) => d.delta).join('')).toBe(done.item.arguments);
    expect(events[2].item.arguments).toBe('');
    expect(terminal.response.output[0]).toEqual(done.item);
  });

  it('streams a text answer with content parts when no tools are offered', async () => {
    const stream = await client.responses.create({
      model: MODEL,
      input: 'Tell me a story.',
      stream: true,
      store: false,
    });
    const events: any[] = [];
    for await (const e of stream) events.push(e);
    const terminal = expectWellFormedStream(events);
    const types = events.map((e) => e.type).filter((t) => t !== 'response.output_text.delta');
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const text = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    expect(text.length).toBeGreaterThan(10);
    expect(terminal.response.output[0].content[0].text).toBe(text);
    expect(terminal.response.output[0].id).toMatch(/^msg_/);
  });

  it('ends a response cut by max_output_tokens as incomplete with the reason', async () => {
    const r = await client.responses.create({
      model: MODEL,
      input: 'Tell me a long story.',
      max_output_tokens: 16,
      store: false,
    });
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(r.usage!.output_tokens).toBeLessThanOrEqual(16);
  });

  it('lets the model answer in text when tool_choice is none', async () => {
    const r = await client.responses.create({
      model: MODEL,
      input: 'Weather in Bern?',
      tools: [weatherTool],
      tool_choice: 'none',
      store: false,
    });
    expect(r.output.map((o) => o.type)).toEqual(['message']);
  });

  it('completes a 3-turn tool loop resending the full input each turn', async () => {
    const input: any[] = [{ role: 'user', content: 'Plan my trip: check the weather in Rome.' }];
    const kinds: string[] = [];
    for (let turn = 0; turn < 3; turn++) {
      const r = await client.responses.create({ model: MODEL, input, tools: [weatherTool], store: false });
      expect(r.status).toBe('completed');
      const item = r.output[r.output.length - 1];
      kinds.push(item.type);
      input.push(...r.output);
      if (item.type === 'function_call')
        input.push({ type: 'function_call_output', call_id: item.call_id, output: '{"temp_c": 21, "sky": "clear"}' });
    }
    expect(kinds).toEqual(['function_call', 'function_call', 'message']);
  });

  it('never stores a store: false response, so it cannot be fetched or chained over HTTP', async () => {
    const r = await client.responses.create({ model: MODEL, input: 'ephemeral', store: false });
    await new Promise((res) => setTimeout(res, 50));
    await expect(client.responses.retrieve(r.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      client.responses.create({ model: MODEL, input: 'next', previous_response_id: r.id }),
    ).rejects.toMatchObject({
      status: 400,
      error: expect.objectContaining({ code: 'previous_response_not_found' }),
    });
  });

  it('chains turns with previous_response_id through the response store and serves stored responses', async () => {
    const first = await client.responses.create({ model: MODEL, input: 'Weather in Lima?', tools: [weatherTool] });
    const call = first.output[0] as any;
    const second = await client.responses.create({
      model: MODEL,
      previous_response_id: first.id,
      tools: [weatherTool],
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
    });
    expect(second.status).toBe('completed');
    expect(second.previous_response_id).toBe(first.id);
    expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
    const fetched = await client.responses.retrieve(second.id);
    expect(fetched.id).toBe(second.id);
    expect(fetched.output).toEqual(second.output);
    const items = await client.responses.inputItems.list(second.id, { order: 'asc' });
    const types = items.data.map((i) => i.type);
    expect(types).toEqual(['message', 'function_call', 'function_call_output']);
    await client.responses.delete(second.id);
    await expect(client.responses.retrieve(second.id)).rejects.toMatchObject({ status: 404 });
  });
});
