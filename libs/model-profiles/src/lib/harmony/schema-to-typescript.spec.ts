import fc from 'fast-check';
import type { JsonSchema } from '../json-schema';
import { RenderLimitError } from '../profile-errors';
import { referenceSchemaToTypeScript } from '../testing/schema-to-typescript.reference';
import { schemaToTypeScript } from './schema-to-typescript';
import { cpuMsOf } from '@fastloop/test-kit';

/** `depth` objects, each with one property holding the next; a string at the bottom. */
function nested(depth: number): JsonSchema {
  let schema: JsonSchema = { type: 'string' };
  for (let i = 0; i < depth; i++) schema = { type: 'object', properties: { a: schema }, required: ['a'] };
  return schema;
}

/** Any shape a client may send as a schema: the keywords the renderer reads, with odd values too. */
const looseSchema: fc.Arbitrary<unknown> = fc.letrec<{ schema: unknown }>((tie) => ({
  schema: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<unknown>({}, true, null, 'x', { type: 'string' }, { type: 'integer', nullable: true }),
    fc.record(
      {
        type: fc.oneof(
          fc.constantFrom('string', 'number', 'integer', 'boolean', 'null', 'array', 'object', 'weird'),
          fc.array(fc.constantFrom('string', 'null', 'object', 'array', 'number'), { maxLength: 3 }),
        ),
        description: fc.string({ maxLength: 12 }),
        properties: fc.dictionary(fc.string({ maxLength: 6 }), tie('schema'), { maxKeys: 3 }),
        required: fc.array(fc.string({ maxLength: 6 }), { maxLength: 2 }),
        items: tie('schema'),
        enum: fc.array(
          fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null), fc.constant({ a: '|' })),
          { maxLength: 3 },
        ),
        anyOf: fc.array(tie('schema'), { maxLength: 3 }),
        oneOf: fc.array(tie('schema'), { maxLength: 2 }),
        nullable: fc.boolean(),
        default: fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.constant(null)),
      },
      { requiredKeys: [] },
    ),
  ),
})).schema;

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
    expect(schemaToTypeScript({ type: 'array', items: { type: 'array', items: { type: 'number' } } })).toBe(
      'number[][]',
    );
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
      properties: {
        opts: { type: 'object', properties: { deep: { type: 'boolean', description: 'Go deep' } }, required: ['deep'] },
      },
    };
    expect(schemaToTypeScript(schema)).toBe('{\nopts?: {\n    // Go deep\n    deep: boolean,\n    },\n}');
  });

  it('quotes keys that are not identifiers and comments every line of a multi-line description', () => {
    const schema: JsonSchema = { type: 'object', properties: { 'a b': { type: 'string', description: 'one\ntwo' } } };
    expect(schemaToTypeScript(schema)).toBe('{\n// one\n// two\n"a b"?: string,\n}');
  });

  it('renders shapes it does not understand as any instead of throwing', () => {
    const loose = {
      type: 'object',
      properties: { a: true, b: null, c: { type: 'array', items: [{ type: 'string' }] } },
      required: 'a',
    } as unknown as JsonSchema;
    expect(schemaToTypeScript(loose)).toBe('{\na?: any,\nb?: any,\nc?: Array<any>,\n}');
    expect(schemaToTypeScript({ type: 'object', properties: 'x' } as unknown as JsonSchema)).toBe('{\n}');
  });

  it('renders every schema to the same text as the first, super-linear implementation', () => {
    fc.assert(
      fc.property(looseSchema, (schema) => {
        const text = schemaToTypeScript(schema as JsonSchema);
        let reference: string;
        try {
          reference = referenceSchemaToTypeScript(schema as JsonSchema);
        } catch (err) {
          // The first version threw a TypeError (a 500) on a null variant of a nullable union,
          // e.g. {"anyOf":[null],"nullable":true}; the rewrite renders the null as `any`.
          expect(err).toBeInstanceOf(TypeError);
          return;
        }
        expect(text).toBe(reference);
      }),
      { numRuns: 3000 },
    );
  });

  it('renders a schema nested 250 objects deep as before, in time linear in the text', () => {
    const schema = nested(250);
    let text = '';
    // CPU time, not wall time (a loaded machine stretches the latter). Generous: ~1 ms here; the first
    // version took ~0.35 s at depth 300 (it copied each level's text).
    expect(cpuMsOf(() => (text = schemaToTypeScript(schema)))).toBeLessThan(2_000);
    expect(text).toBe(referenceSchemaToTypeScript(schema));
  });

  it('stops a schema nested 1,500 deep at the depth limit instead of recursing through it', () => {
    const cpuMs = cpuMsOf(() => {
      expect(() => schemaToTypeScript(nested(1_500), { maxDepth: 64 })).toThrow(
        expect.objectContaining({ code: 'render_limit_exceeded', limit: 'schema_depth', value: 64 }),
      );
      expect(() => schemaToTypeScript(nested(100_000))).toThrow(RenderLimitError);
    });
    expect(cpuMs).toBeLessThan(2_000);
  });

  it('stops once the rendered text would exceed maxChars, having written at most that much', () => {
    const wide: JsonSchema = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`p${i}`, { type: 'string' }])),
    };
    expect(() => schemaToTypeScript(wide, { maxChars: 10_000 })).toThrow(
      expect.objectContaining({ limit: 'tool_rendered_chars', value: 10_000 }),
    );
    expect(schemaToTypeScript(nested(3), { maxChars: 10_000 })).toBe(referenceSchemaToTypeScript(nested(3)));
  });
});
