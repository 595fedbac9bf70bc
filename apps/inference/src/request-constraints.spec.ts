import { parseConstraints } from './request-constraints';

describe('parseConstraints', () => {
  it('is undefined when nothing is forced', () => {
    expect(parseConstraints(undefined)).toBeUndefined();
    expect(parseConstraints({ toolChoice: '', responseFormatJson: '' })).toBeUndefined();
  });

  it('reads required and a named tool', () => {
    expect(parseConstraints({ toolChoice: 'required', responseFormatJson: '' })).toEqual({ toolChoice: 'required' });
    expect(parseConstraints({ toolChoice: 'apply_patch', responseFormatJson: '' })).toEqual({
      toolChoice: { name: 'apply_patch' },
    });
  });

  it('reads json_schema with its strictness, and json_object as any object', () => {
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] };
    expect(
      parseConstraints({
        toolChoice: '',
        responseFormatJson: JSON.stringify({ type: 'json_schema', name: 'out', schema, strict: true }),
      }),
    ).toEqual({
      responseFormat: { name: 'out', schema, strict: true },
    });
    expect(parseConstraints({ toolChoice: '', responseFormatJson: '{"type":"json_object"}' })?.responseFormat).toEqual({
      name: 'json_object',
      schema: { type: 'object' },
      strict: false,
    });
  });

  it('reads json_object and the schema {"type":"object"} named json_object (what the edge sends for it) alike', () => {
    const edge = JSON.stringify({
      type: 'json_schema',
      name: 'json_object',
      schema: { type: 'object' },
      strict: false,
    });
    expect(parseConstraints({ toolChoice: '', responseFormatJson: edge })).toEqual(
      parseConstraints({ toolChoice: '', responseFormatJson: '{"type":"json_object"}' }),
    );
  });

  it('refuses a malformed or unknown format with invalid_prompt', () => {
    expect(() => parseConstraints({ toolChoice: '', responseFormatJson: '{nope' })).toThrow(
      expect.objectContaining({ code: 'invalid_prompt' }),
    );
    expect(() => parseConstraints({ toolChoice: '', responseFormatJson: '{"type":"text"}' })).toThrow(
      expect.objectContaining({ code: 'invalid_prompt' }),
    );
  });
});
