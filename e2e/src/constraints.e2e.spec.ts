import { schemaProblems } from '@fastloop/test-kit';
import { stackForThisFile } from './file-stack';
import { openaiClient } from './clients';
import { weatherTool } from './stack-fixture';

const MODEL = 'fastloop-sim';
const searchTool = {
  type: 'function' as const,
  name: 'search_docs',
  description: 'Search the documentation',
  strict: true,
  parameters: {
    type: 'object',
    properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 10 } },
    required: ['query', 'limit'],
    additionalProperties: false,
  },
};
const forecastSchema = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    sky: { type: 'string', enum: ['clear', 'cloudy', 'rain'] },
  },
  required: ['city', 'days', 'sky'],
  additionalProperties: false,
};

// One tool call, then an answer: what tool_choice required must override.
stackForThisFile({ SIM_TOOL_CALLS: '1' });

describe('tool_choice and text.format, enforced by the simulated engine, through the official openai SDK', () => {
  const client = () => openaiClient();

  it('calls exactly the named function, with schema-valid arguments, for every request', async () => {
    for (const input of ['What is the weather in Paris?', 'Weather in Oslo please', 'hello']) {
      const r = await client().responses.create({
        model: MODEL,
        input,
        tools: [weatherTool, searchTool],
        tool_choice: { type: 'function', name: 'search_docs' },
        store: false,
      });
      expect(r.output.map((i) => i.type)).toEqual(['function_call']);
      const call = r.output[0];
      if (call.type !== 'function_call') throw new Error('unreachable');
      expect(call.name).toBe('search_docs');
      expect(schemaProblems(searchTool.parameters, JSON.parse(call.arguments))).toEqual([]);
    }
  });

  it('keeps calling a tool under tool_choice required where it would otherwise answer', async () => {
    const first = await client().responses.create({
      model: MODEL,
      input: 'What is the weather in Paris?',
      tools: [weatherTool],
      store: false,
    });
    const call = first.output[0];
    if (call.type !== 'function_call') throw new Error(`expected a function_call, got ${call.type}`);
    const history = [
      { role: 'user' as const, content: 'What is the weather in Paris?' },
      call,
      { type: 'function_call_output' as const, call_id: call.call_id, output: '{"temp":21}' },
    ];
    const free = await client().responses.create({ model: MODEL, input: history, tools: [weatherTool], store: false });
    const forced = await client().responses.create({
      model: MODEL,
      input: history,
      tools: [weatherTool],
      tool_choice: 'required',
      store: false,
    });
    expect(free.output.map((i) => i.type)).toEqual(['message']);
    expect(forced.output.map((i) => i.type)).toEqual(['function_call']);
  });

  it('answers with JSON valid against a strict json_schema format', async () => {
    const r = await client().responses.create({
      model: MODEL,
      input: 'Give me the forecast for Lisbon.',
      text: { format: { type: 'json_schema', name: 'forecast', schema: forecastSchema, strict: true } },
      store: false,
    });
    expect(r.status).toBe('completed');
    expect(schemaProblems(forecastSchema, JSON.parse(r.output_text))).toEqual([]);
  });
});
