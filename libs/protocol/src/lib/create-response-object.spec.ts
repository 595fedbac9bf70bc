import { createResponseObject, createUsage } from './create-response-object';
import { ResponseObjectSchema, UsageSchema } from './response-object-schema';
import { validateRequest } from './validate-request';

const identity = { id: 'resp_1', model: 'gpt-oss-120b', createdAt: 1_700_000_000.75 };

describe('createResponseObject', () => {
  it('fills in OpenAI defaults for a minimal request', () => {
    const res = createResponseObject(validateRequest({ model: 'alias', input: 'hi' }), identity);
    expect(res).toEqual({
      id: 'resp_1',
      object: 'response',
      created_at: 1_700_000_000,
      completed_at: null,
      status: 'in_progress',
      background: false,
      model: 'gpt-oss-120b',
      output: [],
      error: null,
      incomplete_details: null,
      instructions: null,
      metadata: {},
      previous_response_id: null,
      tools: [],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      store: true,
      temperature: 1,
      top_p: 1,
      text: { format: { type: 'text' }, verbosity: 'medium' },
      reasoning: { effort: null, summary: null },
      max_output_tokens: null,
      truncation: 'disabled',
      usage: null,
      user: null,
      safety_identifier: null,
      prompt_cache_key: null,
      service_tier: 'default',
    });
    expect(ResponseObjectSchema.parse(res)).toEqual(res);
  });

  it('echoes the request settings', () => {
    const req = validateRequest({
      model: 'm',
      instructions: 'be brief',
      metadata: { run: '42' },
      previous_response_id: 'resp_0',
      tools: [{ type: 'function', name: 'f' }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      store: false,
      temperature: 0.2,
      top_p: 0.9,
      text: { verbosity: 'low' },
      reasoning: { effort: 'high', summary: 'auto' },
      max_output_tokens: 1000,
      truncation: 'auto',
      user: 'u',
      safety_identifier: 's',
      prompt_cache_key: 'k',
    });
    const res = createResponseObject(req, identity);
    expect(res).toMatchObject({
      instructions: 'be brief',
      metadata: { run: '42' },
      previous_response_id: 'resp_0',
      tools: [{ type: 'function', name: 'f' }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      store: false,
      temperature: 0.2,
      top_p: 0.9,
      text: { format: { type: 'text' }, verbosity: 'low' },
      reasoning: { effort: 'high', summary: 'auto' },
      max_output_tokens: 1000,
      truncation: 'auto',
      user: 'u',
      safety_identifier: 's',
      prompt_cache_key: 'k',
    });
    expect(ResponseObjectSchema.parse(res)).toEqual(res);
  });

  it('lets the caller override previous_response_id', () => {
    const req = validateRequest({ model: 'm', previous_response_id: 'resp_0' });
    expect(createResponseObject(req, { ...identity, previousResponseId: 'resp_9' }).previous_response_id).toBe(
      'resp_9',
    );
  });
});

describe('createUsage', () => {
  it('totals input and output and fills every detail field', () => {
    const usage = createUsage({ inputTokens: 1200, cachedTokens: 1000, outputTokens: 80, reasoningTokens: 30 });
    expect(usage).toEqual({
      input_tokens: 1200,
      input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 0 },
      output_tokens: 80,
      output_tokens_details: { reasoning_tokens: 30 },
      total_tokens: 1280,
    });
    expect(UsageSchema.parse(usage)).toEqual(usage);
  });
});
