import Ajv from 'ajv';
import fc from 'fast-check';
import { strictSchemaProblems } from '@fastloop/protocol';
import { argumentsForSchema } from '../../schema-arguments';
import { grammarAccepts, sampleGrammar } from '../../testing/grammar-walk';
import { enforceableSchema } from '../../testing/schema-arbitraries';
import type { GNode, Grammar } from './gbnf';
import { JsonSchemaGrammar, UnsatisfiableSchemaError } from './json-schema-grammar';

const ajv = new Ajv({ strict: false, allErrors: true });

function grammarOf(schema: unknown): Grammar {
  const rules = new Map<string, GNode>();
  rules.set('root', new JsonSchemaGrammar(rules, 's-', schema).rootValue());
  return { rules };
}

/** Seeded choices for the grammar walk. */
const choicesFrom = (seed: number) => {
  let s = seed >>> 0 || 1;
  return {
    pick: (n: number) => {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      return (s >>> 0) % n;
    },
  };
};

describe('JsonSchemaGrammar', () => {
  it('samples only values that satisfy the schema (ajv), for any schema a strict request may carry', () => {
    fc.assert(
      fc.property(enforceableSchema, fc.integer(), (schema, seed) => {
        expect(strictSchemaProblems(schema)).toEqual([]);
        const grammar = grammarOf(schema);
        const validate = ajv.compile(schema);
        for (let i = 0; i < 12; i++) {
          const text = sampleGrammar(grammar, choicesFrom(seed + i));
          const value: unknown = JSON.parse(text);
          if (!validate(value))
            throw new Error(`${text} fails ${JSON.stringify(schema)}: ${ajv.errorsText(validate.errors)}`);
          expect(grammarAccepts(grammar, text)).toBe(true); // the recogniser agrees with the walk
        }
      }),
      { numRuns: 150 },
    );
  });

  it("accepts the simulator's arguments for the same schemas, so neither engine is stricter than the schema", () => {
    fc.assert(
      fc.property(enforceableSchema, fc.integer(), (schema, seed) => {
        const value = argumentsForSchema(schema, { seed, text: 'weather in Paris' });
        expect(ajv.validate(schema, value)).toBe(true);
        // The grammar writes properties in schema order; the simulator fills them in that order too.
        expect(grammarAccepts(grammarOf(schema), JSON.stringify(value))).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('enforces the bounds of the scenario that used to leak (city ≤ 24 characters, days 1..14)', () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 24 }, days: { type: 'integer', minimum: 1, maximum: 14 } },
      required: ['city', 'days'],
      additionalProperties: false,
    };
    const grammar = grammarOf(schema);
    const re = { test: (t: string) => grammarAccepts(grammar, t) };
    expect(re.test('{"city":"Sop.","days":3}')).toBe(true);
    expect(re.test('{"city":"Sop.","days":-50}')).toBe(false);
    expect(re.test('{"city":"Sop.","days":15}')).toBe(false);
    expect(re.test(`{"city":"${'x'.repeat(25)}","days":3}`)).toBe(false);
    expect(re.test('{ "city": "Sop.", "days": 3 }')).toBe(false); // one spelling only
    expect(re.test('{"days":3,"city":"Sop."}')).toBe(false);
    expect(re.test('{"city":"Sop."}')).toBe(false);
    expect(re.test('{"city":"Sop.","days":3,"x":1}')).toBe(false);
  });

  it('counts string length in code points, an escape being one', () => {
    const grammar = grammarOf({ type: 'string', minLength: 2, maxLength: 2 });
    const re = { test: (t: string) => grammarAccepts(grammar, t) };
    expect(re.test('"ab"')).toBe(true);
    expect(re.test('"a\\n"')).toBe(true);
    expect(re.test('"😀é"')).toBe(true);
    expect(re.test('"a\\u001f"')).toBe(true);
    expect(re.test('"abc"')).toBe(false);
    expect(re.test('"a\n"')).toBe(false); // a raw control character is not JSON
  });

  it('follows $ref into $defs, recursion included', () => {
    const schema = {
      $defs: {
        node: {
          type: 'object',
          properties: {
            name: { type: 'string', maxLength: 3 },
            children: { type: 'array', items: { $ref: '#/$defs/node' } },
          },
          required: ['name'],
        },
      },
      $ref: '#/$defs/node',
    };
    const grammar = grammarOf(schema);
    const re = { test: (t: string) => grammarAccepts(grammar, t) };
    expect(re.test('{"name":"a","children":[{"name":"b","children":[{"name":"c"}]}]}')).toBe(true);
    expect(re.test('{"name":"a","children":[{"name":"toolong"}]}')).toBe(false);
    for (let i = 0; i < 20; i++)
      expect(ajv.validate(schema, JSON.parse(sampleGrammar(grammar, choicesFrom(i))))).toBe(true);
  });

  it('refuses to build a grammar for a schema nothing satisfies', () => {
    expect(() => grammarOf({ type: 'integer', exclusiveMinimum: 1, exclusiveMaximum: 2 })).toThrow(
      UnsatisfiableSchemaError,
    );
    expect(() => grammarOf({ type: 'object', required: ['a'], additionalProperties: false })).toThrow(
      UnsatisfiableSchemaError,
    );
  });

  it('is best effort for non-strict keywords: oneOf as anyOf, allOf merged, pattern and format ignored', () => {
    const merged = grammarOf({
      allOf: [
        { type: 'object', properties: { a: { type: 'integer', minimum: 0, maximum: 3 } }, required: ['a'] },
        { properties: { b: { oneOf: [{ type: 'boolean' }, { type: 'null' }] } }, required: ['b'] },
      ],
    });
    expect(grammarAccepts(merged, '{"a":2,"b":null}')).toBe(true);
    expect(grammarAccepts(merged, '{"a":4,"b":true}')).toBe(false);
    expect(grammarAccepts(grammarOf({ type: 'string', pattern: '^x', format: 'email' }), '"y"')).toBe(true);
  });
});
