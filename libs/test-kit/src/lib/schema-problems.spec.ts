import fc from 'fast-check';
import { schemaProblems } from './schema-problems';

// The schemas the e2e tests use carry bounds; a checker that skipped them let `limit: 999` and a
// 500-character `city` pass. Each keyword below must be able to fail.
const search = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1, maxLength: 24 },
    days: { type: 'integer', minimum: 1, maximum: 14 },
    ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    kind: { const: 'forecast' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
  },
  required: ['city', 'days'],
  additionalProperties: false,
};
const valid = { city: 'Paris', days: 3, ratio: 0.5, unit: 'celsius', kind: 'forecast', tags: ['a'] };

describe('schemaProblems (ajv)', () => {
  it('accepts a value that satisfies every keyword', () => {
    expect(schemaProblems(search, valid)).toEqual([]);
  });

  it.each([
    ['maxLength', { city: 'x'.repeat(500) }],
    ['minLength', { city: '' }],
    ['maximum', { days: 999 }],
    ['minimum', { days: -50 }],
    ['type integer', { days: 1.5 }],
    ['exclusiveMinimum', { ratio: 0 }],
    ['exclusiveMaximum', { ratio: 1 }],
    ['enum', { unit: 'kelvin' }],
    ['const', { kind: 'history' }],
    ['minItems', { tags: [] }],
    ['maxItems', { tags: ['a', 'b', 'c', 'd'] }],
    ['additionalProperties', { extra: true }],
  ])('reports a value that breaks %s', (_keyword, change) => {
    expect(schemaProblems(search, { ...valid, ...change })).not.toEqual([]);
  });

  it('reports a missing required property, naming it', () => {
    const { days: _days, ...withoutDays } = valid;
    expect(schemaProblems(search, withoutDays).join()).toContain('days');
  });

  it('follows local $ref and anyOf', () => {
    const schema = {
      $defs: { n: { type: 'integer', maximum: 3 } },
      anyOf: [{ $ref: '#/$defs/n' }, { type: 'string', maxLength: 2 }],
    };
    expect(schemaProblems(schema, 2)).toEqual([]);
    expect(schemaProblems(schema, 'ab')).toEqual([]);
    expect(schemaProblems(schema, 4)).not.toEqual([]);
    expect(schemaProblems(schema, 'abc')).not.toEqual([]);
  });

  it('agrees with a direct check of the integer bounds on any value (property)', () => {
    const schema = { type: 'integer', minimum: 1, maximum: 14 };
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.double(), fc.string()), (v) => {
        const ok = typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 14;
        expect(schemaProblems(schema, v).length === 0).toBe(ok);
      }),
    );
  });

  it('throws on a schema it cannot compile instead of passing everything', () => {
    expect(() => schemaProblems({ type: 'no-such-type' }, 1)).toThrow();
  });

  it('refuses a schema with a property named __proto__, which ajv would not check', () => {
    const schema = JSON.parse('{"type":"object","properties":{"a":{"properties":{"__proto__":{"type":"string"}}}}}');
    expect(() => schemaProblems(schema, {})).toThrow(/__proto__/);
  });
});
