import fc from 'fast-check';
import { ApiErrors, describeId } from './api-error';
import { checkRequestLimits, DEFAULT_REQUEST_LIMITS, type RequestLimits } from './request-limits';
import { parseClientEvent, validateRequest } from './validate-request';
import { cpuMsOf } from '@fastloop/test-kit';

const limits: RequestLimits = {
  maxInputItems: 5,
  maxTools: 3,
  maxSchemaDepth: 8,
  maxSchemaNodes: 50,
  maxStringChars: 100,
  maxJsonDepth: 16,
};

function nestedSchema(depth: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < depth; i++) schema = { type: 'object', properties: { a: schema } };
  return schema;
}

const tool = (parameters: unknown) => ({ type: 'function', name: 'f', parameters });

describe('checkRequestLimits', () => {
  it('accepts a request within every bound', () => {
    const body = {
      model: 'm',
      input: [{ role: 'user', content: 'hi' }],
      tools: [tool(nestedSchema(3))],
      metadata: { a: 'b' },
    };
    expect(checkRequestLimits(body, limits)).toBeUndefined();
  });

  it('refuses a tool schema nested 1,500 deep with a 400 naming the limit and the tool', () => {
    const err = checkRequestLimits(
      { model: 'm', tools: [tool({}), tool(nestedSchema(1_500))] },
      DEFAULT_REQUEST_LIMITS,
    );
    expect(err).toMatchObject({ status: 400, code: 'schema_too_deep', param: 'tools[1].parameters' });
    expect(err?.message).toContain('max_schema_depth');
    expect(err?.message).toContain('64');
  });

  it('refuses schemas with too many values, in namespaces and in text.format too', () => {
    const wide = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`p${i}`, { type: 'string' }])),
    };
    expect(
      checkRequestLimits({ tools: [{ type: 'namespace', name: 'n', tools: [tool(wide)] }] }, limits),
    ).toMatchObject({ code: 'schema_too_large', param: 'tools[0].tools[0].parameters' });
    expect(
      checkRequestLimits({ text: { format: { type: 'json_schema', name: 'x', schema: nestedSchema(6) } } }, limits),
    ).toMatchObject({ code: 'schema_too_deep', param: 'text.format.schema' });
  });

  it('refuses too many items and tools (namespace members count)', () => {
    expect(
      checkRequestLimits({ input: Array.from({ length: 6 }, () => ({ role: 'user', content: 'x' })) }, limits),
    ).toMatchObject({ code: 'array_above_max_length', param: 'input' });
    const ns = { type: 'namespace', name: 'n', tools: [tool({}), tool({}), tool({})] };
    expect(checkRequestLimits({ tools: [ns] }, limits)).toMatchObject({
      code: 'array_above_max_length',
      param: 'tools',
    });
  });

  it('refuses an overlong string anywhere, naming where, and never echoes it', () => {
    const long = 'x'.repeat(101);
    const err = checkRequestLimits(
      { input: [{ role: 'user', content: [{ type: 'input_text', text: long }] }] },
      limits,
    );
    expect(err).toMatchObject({ code: 'string_above_max_length', param: 'input[0].content[0].text' });
    expect(err?.message).not.toContain(long);
    const keyErr = checkRequestLimits({ metadata: { [long]: 'v' } }, limits);
    expect(keyErr?.code).toBe('string_above_max_length');
    expect(keyErr?.param?.length).toBeLessThan(100);
  });

  it('answers a body nested 100,000 deep without recursing', () => {
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    expect(checkRequestLimits({ input: [{ type: 'custom', payload: deep }] })).toMatchObject({
      code: 'nesting_too_deep',
    });
  });

  it('is what validateRequest and parseClientEvent apply before zod', () => {
    const body = { model: 'm', tools: [tool(nestedSchema(1_500))] };
    expect(() => validateRequest(body)).toThrow(expect.objectContaining({ code: 'schema_too_deep' }));
    expect(parseClientEvent({ type: 'response.create', ...body })).toMatchObject({ code: 'schema_too_deep' });
    expect(() => validateRequest({ model: 'm', input: 'x'.repeat(200) }, limits)).toThrow(
      expect.objectContaining({ code: 'string_above_max_length', param: 'input' }),
    );
  });

  it('answers adversarial shapes with the right verdict within a time bound (fuzz)', () => {
    const shape = fc.record({
      depth: fc.integer({ min: 0, max: 3_000 }),
      width: fc.integer({ min: 0, max: 20_000 }),
      items: fc.integer({ min: 0, max: 20_000 }),
      stringLength: fc.integer({ min: 0, max: 2_000_000 }),
      metadataPairs: fc.integer({ min: 0, max: 50_000 }),
    });
    fc.assert(
      fc.property(shape, ({ depth, width, items, stringLength, metadataPairs }) => {
        const props = Object.fromEntries(Array.from({ length: width }, (_, i) => [`p${i}`, { type: 'string' }]));
        const body = {
          model: 'm',
          input: [
            ...Array.from({ length: items }, () => ({ role: 'user', content: 'x' })),
            { role: 'user', content: 'y'.repeat(stringLength) },
          ],
          tools: [tool(nestedSchema(depth)), tool({ type: 'object', properties: props })],
          metadata: Object.fromEntries(Array.from({ length: metadataPairs }, (_, i) => [`k${i}`, 'v'])),
        };
        const bounded: RequestLimits = { ...DEFAULT_REQUEST_LIMITS, maxStringChars: 1_000_000 };
        let err: ReturnType<typeof checkRequestLimits> | undefined;
        expect(cpuMsOf(() => (err = checkRequestLimits(body, bounded)))).toBeLessThan(2_000); // CPU, not wall time
        const tooDeep = 2 * depth + 1 > bounded.maxSchemaDepth;
        const tooMany = items + 1 > bounded.maxInputItems;
        const tooWide = 2 * width + 3 > bounded.maxSchemaNodes;
        const tooLong = stringLength > bounded.maxStringChars;
        expect(err === undefined).toBe(!(tooDeep || tooMany || tooWide || tooLong));
        if (err) expect(err.status).toBe(400);
        if (!err && metadataPairs > 16)
          expect(() => validateRequest(body, bounded)).toThrow(expect.objectContaining({ param: 'metadata' }));
      }),
      { numRuns: 40 },
    );
  });
});

describe('describeId', () => {
  it('echoes ordinary ids and describes oversized or unprintable ones', () => {
    expect(describeId('resp_abc')).toBe("id 'resp_abc'");
    expect(describeId('r'.repeat(100_000))).toBe('id of 100000 characters');
    expect(ApiErrors.previousResponseNotFound('x'.repeat(5_000)).message).toBe(
      'Previous response with id of 5000 characters not found.',
    );
    expect(ApiErrors.notFound('Response', 'a\nb').message).not.toContain('\n');
  });
});
