import type { JsonSchema } from '../json-schema';
import { schemaToTypeScript } from './schema-to-typescript';

describe('schemaToTypeScript', () => {
  it('renders primitive types, with integer as number', () => {
    expect(schemaToTypeScript({ type: 'string' })).toBe('string');
    expect(schemaToTypeScript({ type: 'number' })).toBe('number');
    expect(schemaToTypeScript({ type: 'integer' })).toBe('number');
    expect(schemaToTypeScript({ type: 'boolean' })).toBe('boolean');
    expect(schemaToTypeScript({ type: 'null' })).toBe('null');
    expect(schemaToTypeScript({})).toBe('any');
  });

  it('renders enums as unions of quoted literals', () => {
    expect(schemaToTypeScript({ type: 'string', enum: ['celsius', 'fahrenheit'] })).toBe('"celsius" | "fahrenheit"');
    expect(schemaToTypeScript({ type: 'integer', enum: [1, 2] })).toBe('1 | 2');
  });

  it('renders arrays as T[], parenthesising unions, and arrays without items as Array<any>', () => {
    expect(schemaToTypeScript({ type: 'array', items: { type: 'string' } })).toBe('string[]');
    expect(schemaToTypeScript({ type: 'array', items: { type: 'array', items: { type: 'number' } } })).toBe('number[][]');
    expect(schemaToTypeScript({ type: 'array', items: { type: 'string', enum: ['a', 'b'] } })).toBe('("a" | "b")[]');
    expect(schemaToTypeScript({ type: 'array' })).toBe('Array<any>');
  });

  it('renders nullable, type lists, anyOf and oneOf as unions without a duplicate null', () => {
    expect(schemaToTypeScript({ type: 'string', nullable: true })).toBe('string | null');
    expect(schemaToTypeScript({ type: ['string', 'null'] })).toBe('string | null');
    expect(schemaToTypeScript({ type: ['string', 'null'], nullable: true })).toBe('string | null');
    expect(schemaToTypeScript({ anyOf: [{ type: 'string' }, { type: 'integer' }] })).toBe('string | number');
    expect(schemaToTypeScript({ oneOf: [{ type: 'boolean' }, { type: 'null' }] })).toBe('boolean | null');
  });

  it('renders an object one property per line with descriptions above, ? for optional keys and defaults after', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
        format: { type: 'string', enum: ['celsius', 'fahrenheit'], default: 'celsius' },
        days: { type: 'integer', default: 3 },
        label: { type: 'string', default: 'x' },
      },
      required: ['location'],
    };
    expect(schemaToTypeScript(schema)).toBe(
      [
        '{',
        '// The city and state, e.g. San Francisco, CA',
        'location: string,',
        'format?: "celsius" | "fahrenheit", // default: celsius',
        'days?: number, // default: 3',
        'label?: string, // default: "x"',
        '}',
      ].join('\n'),
    );
  });

  it('indents nested objects by four spaces, as harmony does', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: { opts: { type: 'object', properties: { deep: { type: 'boolean', description: 'Go deep' } }, required: ['deep'] } },
    };
    expect(schemaToTypeScript(schema)).toBe('{\nopts?: {\n    // Go deep\n    deep: boolean,\n    },\n}');
  });

  it('quotes keys that are not identifiers and comments every line of a multi-line description', () => {
    const schema: JsonSchema = { type: 'object', properties: { 'a b': { type: 'string', description: 'one\ntwo' } } };
    expect(schemaToTypeScript(schema)).toBe('{\n// one\n// two\n"a b"?: string,\n}');
  });

  it('renders shapes it does not understand as any instead of throwing', () => {
    const loose = { type: 'object', properties: { a: true, b: null, c: { type: 'array', items: [{ type: 'string' }] } }, required: 'a' } as unknown as JsonSchema;
    expect(schemaToTypeScript(loose)).toBe('{\na?: any,\nb?: any,\nc?: Array<any>,\n}');
    expect(schemaToTypeScript({ type: 'object', properties: 'x' } as unknown as JsonSchema)).toBe('{\n}');
  });
});
