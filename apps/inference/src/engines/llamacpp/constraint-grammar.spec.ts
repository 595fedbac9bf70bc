import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import Ajv from 'ajv';
import { ggufProfileId, HERMES_FORMAT, resolveProfile } from '@fastloop/model-profiles';
import { grammarAccepts, sampleGrammar } from '../../testing/grammar-walk';
import {
  constraintFor,
  constraintGbnf,
  constraintGrammar,
  HERMES_WRAPPER,
  toolCallWrapperOf,
} from './constraint-grammar';

const schema = { type: 'object' as const, properties: { city: { type: 'string' as const } }, required: ['city'] };
const tools = [
  { namespace: 'functions', name: 'get_weather', parameters: schema },
  { namespace: 'maps', name: 'route', parameters: { type: 'object' as const, properties: {} } },
];
const MODEL = resolve(__dirname, '../../../../../../shared/models/stories260K.gguf');
const itWithModel = existsSync(MODEL) ? it : it.skip;

describe('constraintFor', () => {
  it('forces a call of the named tool with its schema as the arguments', () => {
    const c = constraintFor({
      messages: [],
      tools,
      endsWithGenerationPrompt: true,
      toolChoice: { name: 'get_weather' },
    });
    expect(c).toEqual({ kind: 'tool_call', tools: [{ name: 'get_weather', parameters: schema }] });
  });

  it('offers every tool (namespaced names qualified) when any call is required', () => {
    const c = constraintFor({ messages: [], tools, endsWithGenerationPrompt: true, toolChoice: 'required' });
    expect(c?.kind === 'tool_call' && c.tools.map((t) => t.name)).toEqual(['get_weather', 'maps.route']);
  });

  it('constrains the answer to the response format, and leaves a free prompt alone', () => {
    const parsed = { messages: [], tools: [], endsWithGenerationPrompt: true, responseFormat: { name: 'out', schema } };
    expect(constraintFor(parsed)).toEqual({ kind: 'json', schema });
    expect(constraintFor({ messages: [], tools, endsWithGenerationPrompt: true })).toBeUndefined();
  });

  it("takes what the prompt does not say from the request's constraints", () => {
    const parsed = { messages: [], tools, endsWithGenerationPrompt: true };
    expect(constraintFor(parsed, { toolChoice: { name: 'maps.route' } })).toMatchObject({
      kind: 'tool_call',
      tools: [{ name: 'maps.route' }],
    });
    expect(constraintFor(parsed, { responseFormat: { name: 'f', schema, strict: true } })).toEqual({
      kind: 'json',
      schema,
    });
  });
});

describe('constraintGrammar', () => {
  const ajv = new Ajv({ strict: false });
  const pick = (seed: number) => ({ pick: (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n });

  it('writes a forced call exactly as the chat template renders it: wrapper, name, compact arguments', () => {
    const grammar = constraintGrammar({
      kind: 'tool_call',
      tools: tools.map((t) => ({
        name: t.namespace === 'functions' ? t.name : `maps.${t.name}`,
        parameters: t.parameters,
      })),
    });
    expect(
      grammarAccepts(grammar, '<tool_call>\n{"name": "get_weather", "arguments": {"city":"Oslo"}}\n</tool_call>\n'),
    ).toBe(true);
    expect(grammarAccepts(grammar, '<tool_call>\n{"name": "maps.route", "arguments": {}}\n</tool_call>\n')).toBe(true);
    expect(grammarAccepts(grammar, '<tool_call>\n{"name": "route", "arguments": {}}\n</tool_call>\n')).toBe(false);
    expect(grammarAccepts(grammar, '<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>\n')).toBe(
      false,
    );
    expect(
      grammarAccepts(grammar, '<tool_call>\n{"name": "get_weather", "arguments": { "city": "Oslo" }}\n</tool_call>\n'),
    ).toBe(false);
    for (let seed = 0; seed < 30; seed++) {
      const text = sampleGrammar(grammar, pick(seed));
      const call = JSON.parse(text.slice('<tool_call>\n'.length, -'\n</tool_call>\n'.length)) as {
        name: string;
        arguments: unknown;
      };
      const tool = call.name === 'get_weather' ? schema : tools[1].parameters;
      expect(ajv.validate(tool, call.arguments)).toBe(true);
    }
  });

  it('prints GBNF llama.cpp reads: literals and classes escaped, one rule per line, root first', () => {
    const gbnf = constraintGbnf({ kind: 'json', schema: { enum: ['a"b\\c', 'é\n'] } });
    expect(gbnf).toBe('root ::= "\\"a\\\\\\"b\\\\\\\\c\\"" | "\\"\\xe9\\\\n\\""');
    const tool = constraintGbnf({
      kind: 'tool_call',
      tools: [{ name: 'f', parameters: { type: 'object', properties: {} } }],
    });
    expect(tool.split('\n')[0]).toBe(
      'root ::= "<tool_call>\\x0a{\\"name\\": \\"f\\", \\"arguments\\": " t0-arguments "}\\x0a</tool_call>\\x0a"',
    );
  });

  itWithModel("reads the wrapper off the model's own template (the default template's Hermes form)", async () => {
    const profile = await resolveProfile(ggufProfileId(MODEL));
    expect(toolCallWrapperOf(profile, HERMES_FORMAT.endMarkers)).toEqual(HERMES_WRAPPER);
  });

  it('falls back to the Hermes form when a template does not write arguments verbatim', () => {
    const profile = {
      renderCompletion: () => [1],
      decode: () => '<tool_call>{"name": "x", "arguments": "{\\"a\\": 1}"}',
    };
    expect(toolCallWrapperOf(profile, ['<|im_end|>'])).toEqual(HERMES_WRAPPER);
  });
});
