import fc from 'fast-check';
import { createChatTemplateProfile, type ModelFiles } from '@fastloop/model-profiles';
import type { inferenceV1 } from '@fastloop/proto';
import { validateRequest } from '@fastloop/protocol';
import { generateConstraints } from './generate-constraints';
import { toHeader } from './render-header';

const readFile = { type: 'function', name: 'read_file', parameters: { type: 'object' } };
const applyPatch = { type: 'custom', name: 'apply_patch', description: 'Edit files.' };

/** The constraints a request body leads to, read as the edge reads it (validated, then through its header). */
const constraintsOf = (body: Record<string, unknown>) =>
  generateConstraints(toHeader(validateRequest({ model: 'm', input: 'hi', ...body })));

describe('generateConstraints', () => {
  it('forces nothing for auto, none and plain text', () => {
    expect(constraintsOf({ tools: [readFile], tool_choice: 'auto' })).toBeUndefined();
    expect(constraintsOf({ tool_choice: 'none', text: { format: { type: 'text' } } })).toBeUndefined();
  });

  it('carries required and a named function or custom tool when tools are offered', () => {
    expect(constraintsOf({ tools: [readFile], tool_choice: 'required' })).toEqual({
      toolChoice: 'required',
      responseFormatJson: '',
    });
    expect(constraintsOf({ tools: [readFile], tool_choice: { type: 'function', name: 'read_file' } })?.toolChoice).toBe(
      'read_file',
    );
    expect(
      constraintsOf({ tools: [readFile, applyPatch], tool_choice: { type: 'custom', name: 'apply_patch' } })
        ?.toolChoice,
    ).toBe('apply_patch');
  });

  it('drops a tool choice when no tool is offered', () => {
    expect(constraintsOf({ tool_choice: 'required' })).toBeUndefined();
    expect(constraintsOf({ tools: [readFile], tool_choice: 'none' })).toBeUndefined();
  });

  it('carries a JSON text format as JSON', () => {
    const format = { type: 'json_schema' as const, name: 'answer', schema: { type: 'object' }, strict: true };
    expect(
      JSON.parse(constraintsOf({ tools: [readFile], tool_choice: 'auto', text: { format } })!.responseFormatJson),
    ).toEqual(format);
    // json_object is the schema {"type":"object"}: the worker reads both forms alike (request-constraints.spec.ts).
    const json = constraintsOf({ tool_choice: 'auto', text: { format: { type: 'json_object' } } });
    expect(json?.toolChoice).toBe('');
    expect(JSON.parse(json!.responseFormatJson)).toEqual({
      type: 'json_schema',
      name: 'json_object',
      schema: { type: 'object' },
      strict: false,
    });
  });

  // The two readings of tool_choice and text.format used to disagree: a named custom tool and a
  // json_object format reached the worker's constraints but not the header, so an engine that reads
  // the prompt (llama.cpp with a chat template) did not enforce what the simulator enforced.
  it('forces on the worker exactly what the rendered prompt tells the model, for any request', () => {
    const profile = createChatTemplateProfile({ id: 'gguf:chars', files: CHAR_FILES });
    const choice = fc.constantFrom<unknown>(
      undefined,
      'auto',
      'none',
      'required',
      { type: 'function', name: 'read_file' },
      { type: 'custom', name: 'apply_patch' },
      { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'read_file' }] },
      { type: 'web_search_preview' },
    );
    const format = fc.constantFrom<unknown>(
      undefined,
      { type: 'text' },
      { type: 'json_object' },
      { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } } },
      { type: 'json_schema', name: 'strict_answer', schema: { type: 'object' }, strict: true },
    );
    const tools = fc.constantFrom<unknown[]>([], [readFile], [readFile, applyPatch]);
    fc.assert(
      fc.property(choice, format, tools, (tool_choice, textFormat, offered) => {
        const body = validateRequest({
          model: 'm',
          input: 'hi',
          tools: offered,
          ...(tool_choice === undefined ? {} : { tool_choice }),
          ...(textFormat === undefined ? {} : { text: { format: textFormat } }),
        });
        const header = toHeader(body);
        const told = profile.parsePrompt(profile.render(header, [{ kind: 'message', role: 'user', text: 'hi' }]));
        const forced = workerReading(generateConstraints(header));
        expect(told.toolChoice).toEqual(forced.toolChoice);
        expect(told.responseFormat).toEqual(forced.responseFormat);
      }),
    );
  });
});

/** What the worker makes of the constraints (apps/inference request-constraints.ts), name and schema only. */
function workerReading(c: inferenceV1.GenerateConstraints | undefined) {
  const toolChoice =
    !c || c.toolChoice === '' ? undefined : c.toolChoice === 'required' ? 'required' : { name: c.toolChoice };
  const f =
    c && c.responseFormatJson !== '' ? (JSON.parse(c.responseFormatJson) as Record<string, unknown>) : undefined;
  const responseFormat =
    f?.type === 'json_object'
      ? { name: 'json_object', schema: { type: 'object' } }
      : f?.type === 'json_schema'
        ? { name: f.name, schema: f.schema }
        : undefined;
  return { toolChoice, responseFormat };
}

/** A tokenizer of one token per UTF-16 unit: enough to render a chat template and read it back. */
const CHAR_FILES: ModelFiles = {
  tokenizer: {
    vocabSize: 0x10000,
    stopTokens: [0],
    encodeText: (text) => text.split('').map((c) => c.charCodeAt(0)),
    encodeMarkup: (text) => text.split('').map((c) => c.charCodeAt(0)),
    decode: (tokens) => String.fromCharCode(...tokens),
  },
  trainContextSize: 1 << 20,
  bosText: '',
  eosText: '',
};
