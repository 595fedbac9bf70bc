import fc from 'fast-check';
import { canonicalSchema } from '../testing/conversation-arbitraries';
import { schemaToTypeScript } from './schema-to-typescript';
import { parseToolSignature, TsSyntaxError, typeScriptToSchema } from './typescript-to-schema';

describe('typeScriptToSchema', () => {
  it('recovers canonical schemas exactly from their rendering', () => {
    fc.assert(
      fc.property(canonicalSchema(3), (schema) => {
        expect(typeScriptToSchema(schemaToTypeScript(schema))).toEqual(schema);
      }),
      { numRuns: 300 },
    );
  });

  it('recovers defaults, quoted keys and multi-line descriptions', () => {
    const text =
      '{\n// one\n// two\n"a b"?: string,\nformat?: "c" | "f", // default: c\ndays?: number, // default: 3\nlabel: string, // default: "x"\n}';
    expect(typeScriptToSchema(text)).toEqual({
      type: 'object',
      properties: {
        'a b': { type: 'string', description: 'one\ntwo' },
        format: { type: 'string', enum: ['c', 'f'], default: 'c' },
        days: { type: 'number', default: 3 },
        label: { type: 'string', default: 'x' },
      },
      required: ['label'],
    });
  });

  it('maps unions that are neither enums nor primitive lists to anyOf', () => {
    expect(typeScriptToSchema('string | number[]')).toEqual({
      anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'number' } }],
    });
    expect(typeScriptToSchema('"a" | "b" | null')).toEqual({
      anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'null' }],
    });
    expect(typeScriptToSchema('1 | "x"')).toEqual({ enum: [1, 'x'] });
    expect(typeScriptToSchema('Array<any>')).toEqual({ type: 'array' });
    expect(typeScriptToSchema('any')).toEqual({});
  });

  it('throws TsSyntaxError on text the renderer does not produce', () => {
    expect(() => typeScriptToSchema('{ a: string')).toThrow(TsSyntaxError);
    expect(() => typeScriptToSchema('string string')).toThrow(TsSyntaxError);
  });
});

describe('parseToolSignature', () => {
  it('reads a signature starting in the middle of a text and reports where it ends', () => {
    const src = 'type f = (_: {\nq: string,\n}) => any;\n\nrest';
    const { parameters, end } = parseToolSignature(src, 'type f = '.length);
    expect(parameters).toEqual({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
    expect(src.slice(end)).toBe('\n\nrest');
  });

  it('reads a tool without arguments as an empty object schema', () => {
    expect(parseToolSignature('() => any;', 0).parameters).toEqual({ type: 'object', properties: {} });
  });
});
