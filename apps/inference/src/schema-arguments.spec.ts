import fc from 'fast-check';
import type { JsonSchema } from '@fastloop/model-profiles';
import { schemaProblems } from '@fastloop/test-kit';
import { argumentsForSchema } from './schema-arguments';

const weather: JsonSchema = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 2, maxLength: 40 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    detailed: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 3, uniqueItems: true },
    when: { type: 'string', format: 'date-time' },
    filter: {
      type: 'object',
      properties: { kind: { const: 'exact' }, limit: { type: ['integer', 'null'] } },
      required: ['kind', 'limit'],
      additionalProperties: false,
    },
    mode: { anyOf: [{ type: 'null' }, { type: 'string', enum: ['fast', 'slow'] }] },
    node: { $ref: '#/$defs/node' },
    extra: {
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        { properties: { b: { type: 'number' } }, required: ['b'] },
      ],
    },
  },
  required: ['city', 'days', 'filter', 'extra'],
  $defs: {
    node: {
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } },
      required: ['name'],
    },
  },
};

describe('argumentsForSchema', () => {
  it('fills every property of a rich schema so that it validates', () => {
    const args = argumentsForSchema(weather, { seed: 1, text: 'What is the weather in Paris tomorrow?' });
    expect(schemaProblems(weather, args)).toEqual([]);
    expect(Object.keys(args as object)).toEqual(expect.arrayContaining(Object.keys(weather.properties!)));
  });

  it('validates for any seed and any user text', () => {
    fc.assert(
      fc.property(fc.nat(), fc.string(), (seed, text) => {
        expect(schemaProblems(weather, argumentsForSchema(weather, { seed, text }))).toEqual([]);
      }),
    );
  });

  it('is deterministic for a seed and text', () => {
    const a = argumentsForSchema(weather, { seed: 5, text: 'hello' });
    expect(argumentsForSchema(weather, { seed: 5, text: 'hello' })).toEqual(a);
  });

  it('puts the user words into free-text fields such as query', () => {
    const args = argumentsForSchema(
      { type: 'object', properties: { query: { type: 'string' } } },
      { seed: 1, text: 'Find cheap flights' },
    );
    expect(args).toEqual({ query: 'find cheap flights' });
  });

  it('gives required keys without a declared schema a value', () => {
    expect(argumentsForSchema({ type: 'object', required: ['x'] }, { seed: 1, text: '' })).toEqual({
      x: expect.any(String),
    });
  });

  it('returns an empty object for a tool without parameters', () => {
    expect(argumentsForSchema({ type: 'object', properties: {} }, { seed: 1, text: 'hi' })).toEqual({});
  });
});
