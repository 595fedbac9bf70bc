import fc from 'fast-check';

/**
 * fast-check arbitraries of JSON Schemas made only of the keywords a strict schema may carry
 * (ENFORCED_SCHEMA_KEYWORDS in @fastloop/protocol), for tests of what engines sample under them.
 */
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const clean = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
const ordered = (a?: number, b?: number): [number | undefined, number | undefined] =>
  a !== undefined && b !== undefined && a > b ? [b, a] : [a, b];

const stringSchema = fc.record({ min: maybe(fc.nat(4)), max: maybe(fc.nat(12)) }).map(({ min, max }) => {
  const [minLength, maxLength] = ordered(min, max);
  return clean({ type: 'string', minLength, maxLength });
});
const wholeBound = maybe(fc.integer({ min: -40, max: 40 }));
const numericSchema = fc
  .record({ type: fc.constantFrom('integer', 'number'), lo: wholeBound, hi: wholeBound, exclusive: fc.boolean() })
  .map(({ type, lo, hi, exclusive }) => {
    const [a, b] = ordered(lo, hi);
    const [x, y] = exclusive && a !== undefined && b !== undefined && b - a < 2 ? [a - 1, b + 1] : [a, b];
    return exclusive
      ? clean({ type, exclusiveMinimum: x, exclusiveMaximum: y })
      : clean({ type, minimum: x, maximum: y });
  });
const literal = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.integer({ min: -99, max: 99 }),
  fc.boolean(),
  fc.constant(null),
);
const leafSchema = fc.oneof(
  stringSchema,
  numericSchema,
  fc.constant({ type: 'boolean' }),
  fc.constant({ type: 'null' }),
  fc.uniqueArray(literal, { minLength: 1, maxLength: 4, selector: (v) => JSON.stringify(v) }).map((e) => ({ enum: e })),
  literal.map((c) => ({ const: c })),
  fc.constant({}),
);

/** Schemas made only of keywords a strict schema may carry (the enforced set). */
export const enforceableSchema = fc.letrec<{ node: Record<string, unknown> }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafSchema,
    fc
      .record({
        props: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/), tie('node'), { maxKeys: 4 }),
        requiredMask: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
        closed: fc.boolean(),
      })
      .map(({ props, requiredMask, closed }) =>
        clean({
          type: 'object',
          properties: props,
          required: Object.keys(props).filter((_, i) => requiredMask[i]),
          additionalProperties: closed ? false : undefined,
        }),
      ),
    fc.record({ items: tie('node'), min: maybe(fc.nat(2)), max: maybe(fc.nat(4)) }).map(({ items, min, max }) => {
      const [minItems, maxItems] = ordered(min, max);
      return clean({ type: 'array', items, minItems, maxItems });
    }),
    fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((anyOf) => ({ anyOf })),
    stringSchema.map((s) => ({ ...s, nullable: true })),
    fc.constant({ type: 'object', additionalProperties: { type: 'integer', minimum: 0, maximum: 9 } }),
  ),
})).node;
