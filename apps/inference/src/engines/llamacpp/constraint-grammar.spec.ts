import { constraintFor, constraintGbnf } from './constraint-grammar';

const schema = { type: 'object' as const, properties: { city: { type: 'string' as const } }, required: ['city'] };
const tools = [
  { namespace: 'functions', name: 'get_weather', parameters: schema },
  { namespace: 'maps', name: 'route', parameters: { type: 'object' as const, properties: {} } },
];

describe('constraintFor', () => {
  it('forces a call of the named tool with its schema as the arguments', () => {
    const c = constraintFor({
      messages: [],
      tools,
      endsWithGenerationPrompt: true,
      toolChoice: { name: 'get_weather' },
    });
    expect(c).toEqual({
      kind: 'tool_call',
      schema: {
        type: 'object',
        properties: { name: { const: 'get_weather' }, arguments: schema },
        required: ['name', 'arguments'],
        additionalProperties: false,
      },
    });
  });

  it('offers every tool (namespaced names qualified) when any call is required', () => {
    const c = constraintFor({ messages: [], tools, endsWithGenerationPrompt: true, toolChoice: 'required' });
    expect(
      (c?.schema as { oneOf: Array<{ properties: { name: { const: string } } }> }).oneOf.map(
        (s) => s.properties.name.const,
      ),
    ).toEqual(['get_weather', 'maps.route']);
  });

  it('constrains the answer to the response format, and leaves a free prompt alone', () => {
    expect(
      constraintFor({
        messages: [],
        tools: [],
        endsWithGenerationPrompt: true,
        responseFormat: { name: 'out', schema },
      }),
    ).toEqual({ kind: 'json', schema });
    expect(constraintFor({ messages: [], tools, endsWithGenerationPrompt: true })).toBeUndefined();
  });
});

describe('constraintGbnf', () => {
  const json = 'root ::= "{" ws "}" "\\n\\n\\n\\n" [\\n]*\nws ::= [ ]?';

  it('wraps a tool call in Hermes tags and ends at the closing brace', () => {
    expect(constraintGbnf({ kind: 'tool_call', schema }, json)).toBe(
      'root ::= "<tool_call>\\n" json-value-root "\\n</tool_call>"\njson-value-root ::= "{" ws "}"\nws ::= [ ]?',
    );
  });

  it('keeps integers integral (node-llama-cpp would allow 8e-4)', () => {
    const withInteger =
      'root ::= integer-number-rule\ninteger-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,15}) ([eE] [-+]? ("0" | [1-9] [0-9]{0,15}))?';
    expect(constraintGbnf({ kind: 'json', schema }, withInteger)).toBe(
      'root ::= json-value-root\njson-value-root ::= integer-number-rule\ninteger-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,15})',
    );
  });

  it('uses the JSON grammar alone for a response format', () => {
    expect(constraintGbnf({ kind: 'json', schema }, json)).toBe(
      'root ::= json-value-root\njson-value-root ::= "{" ws "}"\nws ::= [ ]?',
    );
  });
});
