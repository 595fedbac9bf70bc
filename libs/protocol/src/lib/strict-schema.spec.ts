import { ApiError } from './api-error';
import { strictSchemaProblems } from './strict-schema';
import { parseClientEvent, validateRequest } from './validate-request';

const forecast = {
  type: 'object',
  title: 'Forecast',
  properties: {
    city: { type: 'string', maxLength: 24, description: 'City name' },
    days: { type: 'integer', minimum: 1, maximum: 14 },
    unit: { enum: ['c', 'f'] },
    tags: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, maxItems: 3 },
    where: { $ref: '#/$defs/place' },
    note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    ratio: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
  },
  required: ['city', 'days'],
  additionalProperties: false,
  $defs: { place: { type: 'object', properties: { inner: { $ref: '#/$defs/place' } }, 'x-origin': 'test' } },
};

describe('strictSchemaProblems', () => {
  it('finds nothing wrong with schemas made of the keywords a grammar enforces', () => {
    expect(strictSchemaProblems(forecast)).toEqual([]);
    expect(strictSchemaProblems({ type: 'object', properties: {} })).toEqual([]);
    expect(strictSchemaProblems({ type: 'integer', minimum: 0.5 })).toEqual([]); // an integer ≥ 0.5 is ≥ 1
  });

  it('names every keyword it cannot enforce, with where it sits', () => {
    const schema = {
      type: 'object',
      properties: {
        city: { type: 'string', pattern: '^[A-Z]' },
        when: { type: 'string', format: 'date' },
        ids: { type: 'array', uniqueItems: true, items: [{ type: 'string' }] },
        either: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
        ratio: { type: 'number', minimum: 0.5, multipleOf: 0.1 },
      },
      patternProperties: { '^x': {} },
      if: { required: ['city'] },
      then: { required: ['when'] },
      not: { required: ['ids'] },
    };
    const found = strictSchemaProblems(schema).map((p) => `${p.path}:${p.keyword}`);
    expect(found.sort()).toEqual(
      [
        'properties.city:pattern',
        'properties.when:format',
        'properties.ids:uniqueItems',
        'properties.ids:items',
        'properties.either:oneOf',
        'properties.ratio:minimum',
        'properties.ratio:multipleOf',
        ':patternProperties',
        ':if',
        ':then',
        ':not',
      ].sort(),
    );
  });

  it('refuses schemas that point nowhere, accept nothing or mix an applicator with constraints', () => {
    const keywords = (s: unknown) => strictSchemaProblems(s).map((p) => `${p.path}:${p.keyword}`);
    expect(keywords({ $ref: '#/$defs/missing' })).toEqual([':$ref']);
    expect(keywords({ $ref: 'https://example.com/s.json' })).toEqual([':$ref']);
    expect(keywords({ enum: [] })).toEqual([':enum']);
    expect(keywords({ type: 'string', minLength: 5, maxLength: 2 })).toEqual([':minLength']);
    expect(keywords({ type: 'strin' })).toEqual([':type']);
    expect(keywords({ type: 'string', maxLength: -1 })).toEqual([':maxLength']);
    expect(keywords({ type: 'string', anyOf: [{ maxLength: 3 }] })).toEqual([':type']);
    expect(keywords({ type: 'object', required: ['a'], additionalProperties: false })).toEqual([':required']);
    expect(keywords({ type: 'object', properties: { a: false } })).toEqual(['properties.a:false']);
    expect(keywords('not a schema')).toEqual([':type']);
  });
});

describe('strict schemas at the door', () => {
  const tool = (parameters: unknown, strict = true) => ({ type: 'function', name: 'get_weather', parameters, strict });
  const refused = (fn: () => unknown): ApiError => {
    try {
      fn();
    } catch (err) {
      if (err instanceof ApiError) return err;
      throw err;
    }
    throw new Error('expected a refusal');
  };

  it('refuses a strict function whose schema uses what fastloop cannot enforce, naming each keyword', () => {
    const err = refused(() =>
      validateRequest({
        model: 'm',
        input: 'hi',
        tools: [tool(forecast), tool({ type: 'object', properties: { city: { type: 'string', pattern: 'x' } } })],
      }),
    );
    expect(err.status).toBe(400);
    expect(err).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_function_parameters',
      param: 'tools[1].parameters',
    });
    expect(err.message).toContain("Invalid schema for function 'get_weather'");
    expect(err.message).toContain("'pattern' at properties.city");
  });

  it('refuses members of namespaces and strict json_schema text formats the same way', () => {
    const ns = refused(() =>
      validateRequest({
        model: 'm',
        tools: [{ type: 'namespace', name: 'ns', description: 'd', tools: [tool({ not: {} })] }],
      }),
    );
    expect(ns).toMatchObject({ code: 'invalid_function_parameters', param: 'tools[0].tools[0].parameters' });
    const format = refused(() =>
      validateRequest({
        model: 'm',
        text: {
          format: { type: 'json_schema', name: 'out', strict: true, schema: { type: 'string', format: 'email' } },
        },
      }),
    );
    expect(format).toMatchObject({ code: 'invalid_json_schema', param: 'text.format.schema' });
    expect(format.message).toContain("'format'");
  });

  it('passes non-strict schemas on as they are (best effort, as OpenAI does)', () => {
    const req = validateRequest({
      model: 'm',
      tools: [tool({ type: 'object', properties: { city: { type: 'string', pattern: 'x' } } }, false)],
      text: { format: { type: 'json_schema', name: 'out', schema: { type: 'string', format: 'email' } } },
    });
    expect(req.tools).toHaveLength(1);
  });

  it('answers a WebSocket response.create with the same error, as a value', () => {
    const result = parseClientEvent({ type: 'response.create', model: 'm', tools: [tool({ if: {} })] });
    expect(result).toBeInstanceOf(ApiError);
    expect(result).toMatchObject({ code: 'invalid_function_parameters', param: 'tools[0].parameters' });
  });
});
