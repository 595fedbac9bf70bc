import fc from 'fast-check';
import { eventJson } from './event-json';

describe('eventJson', () => {
  const long = fc.string({ unit: 'grapheme', minLength: 257, maxLength: 600 });
  const responseArb = fc.record(
    {
      id: fc.string(),
      instructions: fc.oneof(fc.constant(null), fc.string({ unit: 'grapheme' }), long),
      tools: fc.oneof(fc.constant([]), fc.array(fc.jsonValue(), { maxLength: 4 })),
      text: fc.jsonValue(),
      output: fc.array(fc.jsonValue(), { maxLength: 3 }),
      metadata: fc.dictionary(fc.string(), fc.string()),
    },
    { requiredKeys: ['id'] },
  );
  const eventArb = fc.record({ type: fc.string(), sequence_number: fc.nat(), response: responseArb });

  it('writes exactly what JSON.stringify writes, for any response event, repeated or not (property)', () => {
    fc.assert(
      fc.property(eventArb, fc.jsonValue(), (event, other) => {
        expect(eventJson(event)).toBe(JSON.stringify(event));
        // The same response again (its tools and instructions cached), and an event without one.
        const next = { ...event, type: 'response.in_progress', sequence_number: event.sequence_number + 1 };
        expect(eventJson(next)).toBe(JSON.stringify(next));
        expect(eventJson({ type: 'x', other })).toBe(JSON.stringify({ type: 'x', other }));
      }),
      { numRuns: 400 },
    );
  });

  it("serializes a request's tools once, whatever number of events carry them", () => {
    const tools = [{ type: 'function', name: 'f', parameters: { type: 'object' } }];
    const response = { id: 'resp_1', tools, instructions: 'x'.repeat(300) };
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      for (let i = 0; i < 3; i++) eventJson({ type: 'e', sequence_number: i, response });
      expect(stringify.mock.calls.filter(([v]) => v === tools)).toHaveLength(1);
      expect(stringify.mock.calls.filter(([v]) => v === response.instructions)).toHaveLength(1);
    } finally {
      stringify.mockRestore();
    }
  });
});
