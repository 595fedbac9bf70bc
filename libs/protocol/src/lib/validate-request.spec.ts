import fc from 'fast-check';
import { ApiError } from './api-error';
import { isKnownInputItem } from './input-item-schema';
import { parseClientEvent, parseClientFrame, validateItems, validateRequest } from './validate-request';
import type { ResponseCreateEvent } from './response-create-request-schema';

/** A second-turn body as a coding-agent CLI sends it over HTTP. */
function codexBody(): Record<string, unknown> {
  return {
    model: 'gpt-oss-120b',
    instructions: 'You are a coding agent running in a terminal.',
    input: [
      {
        type: 'message',
        role: 'developer',
        content: [
          { type: 'input_text', text: '<permissions instructions>sandbox: workspace-write</permissions instructions>' },
        ],
      },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'List the files here.' }] },
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [{ type: 'summary_text', text: 'Need to run ls.' }],
        content: null,
        encrypted_content: 'gAAAAAB…opaque…',
      },
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_1',
        name: 'exec_command',
        namespace: 'shell',
        arguments: '{"cmd":"ls"}',
        status: 'completed',
      },
      { type: 'function_call_output', call_id: 'call_1', output: 'README.md\nsrc\n' },
      { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch' },
      { type: 'custom_tool_call_output', call_id: 'call_2', output: 'Done!' },
      {
        type: 'message',
        role: 'assistant',
        phase: 'final_answer',
        content: [{ type: 'output_text', text: 'Two entries.', annotations: [] }],
      },
      { role: 'user', content: 'Now open README.md' },
    ],
    tools: [
      {
        type: 'function',
        name: 'update_plan',
        description: 'Updates the plan',
        strict: false,
        parameters: { type: 'object', properties: {}, additionalProperties: false },
      },
      {
        type: 'namespace',
        name: 'shell',
        description: 'Shell tools',
        tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object', properties: {} } }],
      },
      {
        type: 'custom',
        name: 'apply_patch',
        description: 'Apply a patch',
        format: { type: 'grammar', syntax: 'lark', definition: 'start: …' },
      },
      { type: 'web_search' },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: '7f1c0a7e-5a5d-4a57-9a89-2a2f1a0c9d11',
    text: { verbosity: 'low' },
    client_metadata: { originator: 'codex_cli_rs' },
    service_tier: 'auto',
  };
}

function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('validateRequest', () => {
  it('accepts a coding-agent CLI body with reasoning items, namespaces, custom tools and unknown fields', () => {
    const req = validateRequest(codexBody());
    expect(req.store).toBe(false);
    expect(req.stream).toBe(true);
    expect(req.include).toEqual(['reasoning.encrypted_content']);
    expect(req.reasoning).toEqual({ effort: 'medium', summary: 'auto' });
    expect(req.text).toEqual({ verbosity: 'low' });
    expect(req.tools).toHaveLength(4);
    expect(Array.isArray(req.input) && req.input.length).toBe(9);
  });

  it('strips unknown top-level fields but keeps unknown fields inside items and tools', () => {
    const req = validateRequest(codexBody());
    expect(req).not.toHaveProperty('client_metadata');
    const items = req.input as Exclude<typeof req.input, string | undefined>;
    expect(items[7]).toMatchObject({ phase: 'final_answer' });
    expect(items[5]).toEqual({
      type: 'custom_tool_call',
      id: 'ctc_1',
      call_id: 'call_2',
      name: 'apply_patch',
      input: '*** Begin Patch',
    });
    expect(req.tools[2]).toMatchObject({ type: 'custom', format: { type: 'grammar' } });
  });

  it('fills in type "message" on easy messages and tells known items from carried ones', () => {
    const items = validateRequest(codexBody()).input as Exclude<
      ReturnType<typeof validateRequest>['input'],
      string | undefined
    >;
    expect(items[8]).toEqual({ type: 'message', role: 'user', content: 'Now open README.md' });
    expect(items.map(isKnownInputItem)).toEqual([true, true, true, true, true, true, true, true, true]);
    const carried = validateItems([
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
    ]);
    expect(carried.map(isKnownInputItem)).toEqual([false]);
  });

  it('reads null optional fields as absent and applies OpenAI defaults', () => {
    const req = validateRequest({
      model: 'm',
      input: 'hi',
      instructions: null,
      temperature: null,
      store: null,
      tools: null,
    });
    expect(req.instructions).toBeUndefined();
    expect(req.temperature).toBeUndefined();
    expect(req).toMatchObject({ store: true, parallel_tool_calls: true, tool_choice: 'auto', tools: [] });
  });

  it('accepts a continuation without input, and json_schema output formats', () => {
    const req = validateRequest({
      model: 'm',
      previous_response_id: 'resp_1',
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
      tool_choice: { type: 'function', name: 'update_plan' },
    });
    expect(req.input).toBeUndefined();
    expect(req.text?.format).toMatchObject({ type: 'json_schema', name: 'answer' });
  });

  it.each([
    [{ input: 'hi' }, 'model', 'missing_required_parameter', "Missing required parameter: 'model'."],
    [
      { model: 'm', temperature: 'hot' },
      'temperature',
      'invalid_type',
      "Invalid type for 'temperature': expected a number, but got a string instead.",
    ],
    [
      { model: 'm', temperature: 3 },
      'temperature',
      'decimal_above_max_value',
      "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 instead.",
    ],
    [{ model: 'm', top_p: -0.5 }, 'top_p', 'decimal_below_min_value', undefined],
    [
      { model: 'm', max_output_tokens: 5 },
      'max_output_tokens',
      'integer_below_min_value',
      "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 5 instead.",
    ],
    [
      { model: 'm', max_output_tokens: 100.5 },
      'max_output_tokens',
      'invalid_type',
      "Invalid type for 'max_output_tokens': expected an integer, but got a decimal instead.",
    ],
    [{ model: 'm', store: 'no' }, 'store', 'invalid_type', undefined],
    [
      { model: 'm', input: 5 },
      'input',
      'invalid_type',
      "Invalid type for 'input': expected one of a string or an array, but got an integer instead.",
    ],
    [{ model: 'm', reasoning: { effort: 'extreme' } }, 'reasoning.effort', 'invalid_value', undefined],
    [
      { model: 'm', text: { format: { type: 'xml' } } },
      'text.format.type',
      'invalid_value',
      "Invalid value: 'xml'. Supported values are: 'text', 'json_object', and 'json_schema'.",
    ],
    [
      { model: 'm', text: { format: { type: 'json_schema', schema: {} } } },
      'text.format.name',
      'missing_required_parameter',
      undefined,
    ],
    [
      { model: 'm', tool_choice: 'sometimes' },
      'tool_choice',
      'invalid_value',
      "Invalid value: 'sometimes'. Supported values are: 'none', 'auto', and 'required'.",
    ],
    [{ model: 'm', tool_choice: { type: 'function' } }, 'tool_choice.name', 'missing_required_parameter', undefined],
    [
      { model: 'm', tools: [{ type: 'function', description: 'no name' }] },
      'tools[0].name',
      'missing_required_parameter',
      undefined,
    ],
    [
      { model: 'm', tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 7 }] }] },
      'tools[0].tools[0].name',
      'invalid_type',
      undefined,
    ],
  ])('rejects %j at param %s with code %s', (body, param, code, message) => {
    const err = errorOf(() => validateRequest(body));
    expect(err).toMatchObject({ status: 400, type: 'invalid_request_error', param, code });
    if (message) expect(err.message).toBe(message);
  });

  it.each([
    [
      [
        { type: 'message', role: 'user', content: 'a' },
        { type: 'function_call_output', output: 'x' },
      ],
      'input[1].call_id',
      'missing_required_parameter',
    ],
    [[{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }], 'input[0].arguments', 'invalid_type'],
    [[{ role: 'robot', content: 'hi' }], 'input[0].role', 'invalid_value'],
    [
      [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 1 }] }],
      'input[0].content[0].text',
      'invalid_type',
    ],
    [
      [{ type: 'reasoning', summary: [{ type: 'summary_text' }] }],
      'input[0].summary[0].text',
      'missing_required_parameter',
    ],
    [[{ content: 'no role, no type' }], 'input[0].type', 'missing_required_parameter'],
    [[{ type: 42 }], 'input[0].type', 'invalid_type'],
    [[{ type: 'web_search_call', id: 7 }], 'input[0].id', 'invalid_type'],
    [[{ type: 'custom_tool_call', call_id: 'c', name: 'apply_patch' }], 'input[0].input', 'missing_required_parameter'],
    [['just a string'], 'input[0]', 'invalid_type'],
  ])('rejects input items %j at param %s', (input, param, code) => {
    expect(errorOf(() => validateRequest({ model: 'm', input }))).toMatchObject({ param, code });
  });

  it('bounds metadata as OpenAI does: 16 pairs, 64-char keys, 512-char values', () => {
    const tooMany = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    expect(errorOf(() => validateRequest({ model: 'm', metadata: tooMany }))).toMatchObject({
      param: 'metadata',
      code: 'object_above_max_properties',
    });
    expect(errorOf(() => validateRequest({ model: 'm', metadata: { ['k'.repeat(65)]: 'v' } }))).toMatchObject({
      param: 'metadata',
      code: 'string_above_max_length',
    });
    expect(errorOf(() => validateRequest({ model: 'm', metadata: { note: 'v'.repeat(513) } }))).toMatchObject({
      param: 'metadata.note',
      code: 'string_above_max_length',
    });
    expect(errorOf(() => validateRequest({ model: 'm', metadata: { n: 1 } }))).toMatchObject({
      param: 'metadata.n',
      code: 'invalid_type',
    });
    expect(validateRequest({ model: 'm', metadata: { ['k'.repeat(64)]: 'v'.repeat(512) } }).metadata).toBeDefined();
  });

  it('rejects a body that is not a JSON object', () => {
    expect(errorOf(() => validateRequest([]))).toMatchObject({ status: 400, param: null, code: 'invalid_type' });
  });
});

describe('validateItems', () => {
  it('validates only the given items and names errors by their index in the whole input', () => {
    const items = validateItems(
      [
        { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
        { role: 'user', content: 'next' },
      ],
      40,
    );
    expect(items[1]).toMatchObject({ type: 'message' });
    expect(
      errorOf(() =>
        validateItems(
          [
            { role: 'user', content: 'ok' },
            { type: 'function_call_output', output: 'x' },
          ],
          40,
        ),
      ),
    ).toMatchObject({
      param: 'input[41].call_id',
    });
  });

  it('accepts a function_call_output that names its tool instead of giving a call_id (Codex CLI)', () => {
    const [item] = validateItems([{ type: 'function_call_output', name: 'exec', namespace: 'shell', output: 'ok' }]);
    expect(item).toEqual({ type: 'function_call_output', name: 'exec', namespace: 'shell', output: 'ok' });
  });

  it('counts from zero without an offset', () => {
    expect(errorOf(() => validateItems([{ type: 'item_reference' }]))).toMatchObject({ param: 'input[0].id' });
  });

  it('treats a bare {id} as an item reference', () => {
    expect(validateItems([{ id: 'msg_1' }])).toEqual([{ type: 'item_reference', id: 'msg_1' }]);
  });
});

describe('parseClientEvent', () => {
  const create = { type: 'response.create', model: 'm', input: [{ role: 'user', content: 'hi' }] };

  it('parses a flat response.create event, dropping stream and keeping generate', () => {
    const event = parseClientEvent({ ...create, stream: true, generate: false, previous_response_id: 'resp_1' });
    expect(event).not.toBeInstanceOf(ApiError);
    expect(event).toMatchObject({
      type: 'response.create',
      model: 'm',
      generate: false,
      previous_response_id: 'resp_1',
      store: true,
    });
    expect(event).not.toHaveProperty('stream');
  });

  it('answers an unknown event type with invalid_value on type, naming the event', () => {
    expect(parseClientEvent({ type: 'response.inject' })).toMatchObject({
      status: 400,
      code: 'invalid_value',
      param: 'type',
      message: expect.stringContaining("Unsupported event type 'response.inject'"),
    });
  });

  it('reads stream_id on response.create and refuses a malformed one with invalid_stream_id', () => {
    expect(parseClientEvent({ type: 'response.create', model: 'm', stream_id: 'lane-1.a_b' })).toMatchObject({
      stream_id: 'lane-1.a_b',
    });
    expect(parseClientEvent({ type: 'response.create', model: 'm' })).not.toHaveProperty('stream_id');
    for (const bad of ['', 'a b', 'x'.repeat(257), 'é', 42]) {
      expect(parseClientEvent({ type: 'response.create', model: 'm', stream_id: bad })).toMatchObject({
        status: 400,
        code: 'invalid_stream_id',
        param: 'stream_id',
      });
    }
    expect(parseClientEvent({ type: 'response.create', model: 'm', stream_id: 'x'.repeat(256) })).toMatchObject({
      type: 'response.create',
    });
  });

  it('reads response.interrupt, response.processed and response.steer, and names what is wrong in them', () => {
    const interrupt = { type: 'response.interrupt', response_id: 'resp_1', mode: 'discard_partial_items' };
    expect(parseClientEvent(interrupt)).toEqual(interrupt);
    expect(parseClientEvent({ ...interrupt, mode: 'keep' })).toMatchObject({ status: 400, param: 'mode' });
    expect(parseClientEvent({ type: 'response.processed', response_id: 'resp_1' })).toMatchObject({
      type: 'response.processed',
    });
    const steer = { type: 'response.steer', previous_response_id: 'resp_1', input: 'smaller scope' };
    expect(parseClientEvent(steer)).toEqual(steer);
    expect(parseClientEvent({ ...steer, input: [] })).toMatchObject({ status: 400, param: 'input' });
    expect(parseClientEvent({ ...steer, model: 'm' })).toMatchObject({ status: 400 });
  });

  it('answers a missing type, a non-object and an invalid body with errors, never by throwing', () => {
    expect(parseClientEvent({ model: 'm' })).toMatchObject({ code: 'missing_required_parameter', param: 'type' });
    expect(parseClientEvent('response.create')).toMatchObject({ code: 'invalid_type', param: null });
    expect(parseClientEvent({ ...create, input: [{ type: 'function_call' }] })).toMatchObject({
      param: 'input[0].call_id',
    });
  });

  it('rejects background mode', () => {
    expect(parseClientEvent({ ...create, background: true })).toMatchObject({
      code: 'unsupported_parameter',
      param: 'background',
    });
    expect(parseClientEvent({ ...create, background: false })).not.toBeInstanceOf(ApiError);
  });
});

describe('parseClientFrame', () => {
  it('answers malformed JSON with invalid_json', () => {
    expect(parseClientFrame('{"type":')).toMatchObject({ status: 400, code: 'invalid_json' });
  });

  it('parses a valid frame', () => {
    expect(parseClientFrame('{"type":"response.create","model":"m","input":"hi"}')).toMatchObject({ input: 'hi' });
  });
});

describe('parseClientEvent with the tools validated before', () => {
  const toolArb = fc.oneof(
    fc.record({
      type: fc.constant('function'),
      name: fc.constantFrom('a', 'b', ''),
      parameters: fc.constantFrom(
        { type: 'object', properties: { p: { type: 'string' } } },
        { type: 'object', properties: {}, additionalProperties: false, required: [] },
        'not a schema',
      ),
      strict: fc.constantFrom(true, false, undefined),
    }),
    fc.record({ type: fc.constantFrom('custom', 'web_search', 'nope'), name: fc.constantFrom('c', 'd') }),
  );
  const toolsArb = fc.array(toolArb, { maxLength: 3 });
  const event = (tools: unknown, extra: Record<string, unknown>) => ({
    type: 'response.create',
    model: 'm',
    input: 'hi',
    ...extra,
    tools: JSON.parse(JSON.stringify(tools)), // as a new frame parses them
  });
  const extraArb = fc.record(
    {
      tool_choice: fc.constantFrom('auto', 'none', { type: 'function', name: 'a' }, 7),
      text: fc.constantFrom(
        { format: { type: 'json_object' } },
        { format: { type: 'json_schema', name: 'x', strict: true, schema: { type: 'object' } } },
        { format: { type: 'json_schema', name: 'y', strict: true, schema: { type: 'object', notAKeyword: 1 } } },
      ),
    },
    { requiredKeys: [] },
  );

  // Tight limits, so that the limits' walk refuses some events (in their tools or elsewhere).
  const limitsArb = fc.record({
    maxInputItems: fc.constantFrom(1, 10),
    maxTools: fc.constantFrom(2, 512),
    maxSchemaDepth: fc.constantFrom(2, 64),
    maxSchemaNodes: fc.constantFrom(4, 10_000),
    maxStringChars: fc.constantFrom(8, 1 << 20),
    maxJsonDepth: fc.constantFrom(3, 5, 128),
  });
  const inputArb = fc.constantFrom<unknown>(
    'hi',
    'a longer input text',
    [{ role: 'user', content: 'hi' }],
    [
      { role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
      { role: 'user', content: 'again' },
    ],
  );

  it('answers exactly as validating everything, limits included (property)', () => {
    fc.assert(
      fc.property(
        toolsArb,
        toolsArb,
        extraArb,
        fc.boolean(),
        limitsArb,
        inputArb,
        (before, now, extra, same, limits, input) => {
          const first = parseClientEvent(event(before, {}), limits);
          if (first instanceof ApiError) return;
          const previous = { raw: event(before, {}).tools, parsed: (first as ResponseCreateEvent).tools };
          const next = event(same ? before : now, { ...extra, input });
          expect(parseClientEvent(next, limits, previous)).toEqual(parseClientEvent(next, limits));
        },
      ),
      { numRuns: 600 },
    );
  });

  it('reuses the previous result for tools equal to the previous ones, and validates other tools', () => {
    const tools = [{ type: 'function', name: 'a', parameters: { type: 'object' } }];
    const first = parseClientEvent(event(tools, {}));
    if (first instanceof ApiError) throw first;
    const previous = { raw: event(tools, {}).tools, parsed: (first as ResponseCreateEvent).tools };
    const again = parseClientEvent(event(tools, {}), undefined, previous);
    expect(again instanceof ApiError ? again : (again as ResponseCreateEvent).tools).toBe(
      (first as ResponseCreateEvent).tools,
    );
    const other = parseClientEvent(event([{ type: 'function', name: '' }], {}), undefined, previous);
    expect(other).toBeInstanceOf(ApiError);
  });
});
