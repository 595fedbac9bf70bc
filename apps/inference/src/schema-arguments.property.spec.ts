import fc from 'fast-check';
import type { JsonSchema } from '@fastloop/model-profiles';
import { schemaProblems } from '@fastloop/test-kit';
import { argumentsForSchema } from './schema-arguments';

// Satisfiable schemas with the keywords the simulated model claims to honour (bounds, exclusive
// bounds, multipleOf, lengths, enum, const, item counts, uniqueness, required, nesting), checked by
// ajv rather than by a checker written next to the generator.
const bound = fc.integer({ min: -1_000, max: 1_000 });

const integerSchema: fc.Arbitrary<JsonSchema> = fc
  .record(
    {
      lo: bound,
      span: fc.integer({ min: 2, max: 200 }),
      exclusive: fc.boolean(),
      multipleOf: fc.constantFrom(undefined, 1, 2, 5),
    },
    { requiredKeys: ['lo', 'span', 'exclusive'] },
  )
  .map(({ lo, span, exclusive, multipleOf }) => ({
    type: 'integer',
    ...(exclusive
      ? { exclusiveMinimum: lo, exclusiveMaximum: lo + span + 10 }
      : { minimum: lo, maximum: lo + span + 10 }),
    ...(multipleOf === undefined ? {} : { multipleOf }),
  }));

const numberSchema: fc.Arbitrary<JsonSchema> = fc
  .record({
    lo: fc.double({ min: -1e6, max: 1e6, noNaN: true }),
    span: fc.double({ min: 1e-3, max: 1e3, noNaN: true }),
    loOpen: fc.boolean(),
    hiOpen: fc.boolean(),
    oneSided: fc.constantFrom('both', 'min', 'max', 'none'),
  })
  .map(({ lo, span, loOpen, hiOpen, oneSided }) => ({
    type: 'number',
    ...(oneSided === 'both' || oneSided === 'min' ? { [loOpen ? 'exclusiveMinimum' : 'minimum']: lo } : {}),
    ...(oneSided === 'both' || oneSided === 'max' ? { [hiOpen ? 'exclusiveMaximum' : 'maximum']: lo + span } : {}),
  }));

const stringSchema: fc.Arbitrary<JsonSchema> = fc
  .record({ min: fc.nat(40), extra: fc.nat(40), withMax: fc.boolean(), withMin: fc.boolean() })
  .map(({ min, extra, withMax, withMin }) => ({
    type: 'string',
    ...(withMin ? { minLength: min } : {}),
    ...(withMax ? { maxLength: (withMin ? min : 0) + extra } : {}),
  }));

const enumSchema: fc.Arbitrary<JsonSchema> = fc.oneof(
  fc
    .uniqueArray(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 5 })
    .map((e): JsonSchema => ({ type: 'string', enum: e })),
  fc.uniqueArray(fc.integer(), { minLength: 1, maxLength: 5 }).map((e): JsonSchema => ({ enum: e })),
  fc.jsonValue().map((v): JsonSchema => ({ const: v })),
);

const leaf: fc.Arbitrary<JsonSchema> = fc.oneof(
  integerSchema,
  numberSchema,
  stringSchema,
  enumSchema,
  fc.constant<JsonSchema>({ type: 'boolean' }),
  fc.constant<JsonSchema>({ type: ['integer', 'null'], minimum: 3, maximum: 9 }),
);

const { schema } = fc.letrec<{ schema: JsonSchema; object: JsonSchema; array: JsonSchema }>((tie) => ({
  schema: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('object'), tie('array')),
  // No `__proto__` here: ajv cannot check a property of that name (schemaProblems refuses it); the
  // test above checks it by hand.
  object: fc
    .dictionary(
      fc.string({ minLength: 1, maxLength: 10 }).filter((key) => key !== '__proto__'),
      tie('schema'),
      { maxKeys: 5 },
    )
    .chain((properties) =>
      fc.record({
        type: fc.constant('object'),
        properties: fc.constant(properties),
        required: fc.subarray(Object.keys(properties)),
        additionalProperties: fc.constant(false),
      }),
    ),
  array: fc
    .record({ items: tie('schema'), min: fc.nat(3), extra: fc.nat(3), unique: fc.boolean() })
    .map(({ items, min, extra, unique }) => ({
      type: 'array',
      items,
      minItems: min,
      maxItems: min + extra,
      // Uniqueness needs enough distinct values: only with item schemas that have many.
      ...(unique && items.type === 'integer' && !('multipleOf' in items) ? { uniqueItems: true } : {}),
    })),
}));

describe('argumentsForSchema on property names that objects inherit', () => {
  it('gives `__proto__` and `toString` as own properties (found by the property below)', () => {
    const s = {
      type: 'object',
      properties: { ['__proto__']: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 1 } },
      required: ['toString'],
      additionalProperties: false,
    } as JsonSchema;
    const value = argumentsForSchema(s, { seed: 0, text: '' }) as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__', 'toString']);
    // By hand: ajv drops a property named `__proto__` (schemaProblems refuses such a schema).
    const proto = Object.getOwnPropertyDescriptor(value, '__proto__')?.value as unknown;
    expect(Array.isArray(proto) && proto.length === 1 && typeof proto[0] === 'string').toBe(true);
    expect(() => schemaProblems(s, value)).toThrow(/__proto__/);
  });
});

describe('argumentsForSchema on generated schemas (property)', () => {
  it('produces a value ajv accepts for every satisfiable schema, seed and user text', () => {
    fc.assert(
      fc.property(schema, fc.nat(), fc.string(), (s, seed, text) => {
        expect(schemaProblems(s, argumentsForSchema(s, { seed, text }))).toEqual([]);
      }),
      { numRuns: 2_000 },
    );
  });
});
