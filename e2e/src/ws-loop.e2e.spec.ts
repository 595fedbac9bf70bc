import { stackForThisFile } from './file-stack';
import { expectWellFormedStream, WsConversation } from './clients';
import { schemaProblems, weatherTool } from './stack-fixture';

const MODEL = 'fastloop-sim';

stackForThisFile();

describe('WebSocket mode with the SDK ResponsesWS', () => {
  let conv: WsConversation;
  beforeEach(() => {
    conv = new WsConversation();
  });
  afterEach(() => conv.close());

  it('runs a 3-turn tool loop sending only new items with previous_response_id', async () => {
    let events = await conv.create({ model: MODEL, input: 'Check the weather in Tokyo, please.', tools: [weatherTool], store: false });
    let terminal = expectWellFormedStream(events);
    const outputs: string[] = [];
    const usages: any[] = [];
    for (let turn = 0; turn < 3; turn++) {
      expect(terminal.type).toBe('response.completed');
      const r = terminal.response;
      usages.push(r.usage);
      const item = r.output[r.output.length - 1];
      outputs.push(item.type);
      const done = events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item);
      expect(done).toEqual(r.output);
      if (item.type !== 'function_call') break;
      expect(schemaProblems(weatherTool.parameters, JSON.parse(item.arguments))).toEqual([]);
      events = await conv.create({
        model: MODEL,
        previous_response_id: r.id,
        store: false,
        tools: [weatherTool],
        input: [{ type: 'function_call_output', call_id: item.call_id, output: '{"temp_c": 18}' }],
      });
      terminal = expectWellFormedStream(events);
      expect(terminal.response.previous_response_id).toBe(r.id);
    }
    expect(outputs).toEqual(['function_call', 'function_call', 'message']);
    // Later turns reuse the worker's prefix: at least the whole previous prompt is cached.
    // (The first turn may already share the system header with other conversations: the worker
    // reuses any prefix it holds, by content.)
    expect(usages[0].input_tokens_details.cached_tokens).toBeLessThan(usages[0].input_tokens);
    for (let t = 1; t < usages.length; t++) {
      expect(usages[t].input_tokens).toBeGreaterThan(usages[t - 1].input_tokens);
      expect(usages[t].input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(usages[t - 1].input_tokens);
      expect(usages[t].input_tokens_details.cached_tokens).toBeLessThan(usages[t].input_tokens);
    }
  });

  it('mixes a full-history turn without previous_response_id on the same socket', async () => {
    const events = await conv.create({ model: MODEL, input: 'Weather in Cairo?', tools: [weatherTool], store: false });
    const r = expectWellFormedStream(events).response;
    const call = r.output[0];
    const full = await conv.create({
      model: MODEL,
      store: false,
      tools: [weatherTool],
      instructions: 'Answer briefly.',
      input: [{ role: 'user', content: 'Weather in Cairo?' }, call, { type: 'function_call_output', call_id: call.call_id, output: 'hot' }],
    });
    expect(expectWellFormedStream(full).type).toBe('response.completed');
  });

  it('warms up with generate: false and chains from the returned id', async () => {
    const warm = await conv.create({ model: MODEL, generate: false, store: false, tools: [weatherTool], input: [{ role: 'developer', content: 'You are a travel agent.' }] });
    const t = expectWellFormedStream(warm);
    expect(t.type).toBe('response.completed');
    expect(t.response.output).toEqual([]);
    const next = await conv.create({ model: MODEL, previous_response_id: t.response.id, store: false, tools: [weatherTool], input: 'Weather in Lisbon?' });
    expect(expectWellFormedStream(next).response.output[0].type).toBe('function_call');
  });

  it('queues a response.create sent while another runs and answers both in order', async () => {
    conv.ws.send({ type: 'response.create', model: MODEL, input: 'first', store: false } as never);
    conv.ws.send({ type: 'response.create', model: MODEL, input: 'second', store: false } as never);
    const a = await conv.collect();
    const b = await conv.collect();
    expectWellFormedStream(a);
    expectWellFormedStream(b);
    expect(a[0].response.id).not.toBe(b[0].response.id);
  });
});
