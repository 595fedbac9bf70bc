import fc from 'fast-check';
import { inferenceV1, responsesV1 } from './index';
import { encodeMessage, messageWriter } from './message-writer';

/** Any UTF-16 string, lone surrogates included, short or long (the writer's long path starts at 1,024 units). */
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 3000 }),
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 5000 }).map((units) => String.fromCharCode(...units)),
  fc.tuple(fc.constantFrom('a', 'é', '✓', '𝄞', ' '), fc.integer({ min: 0, max: 70_000 })).map(([c, n]) => c.repeat(n)),
);

const reference = <T>(type: { encode(v: T): { finish(): Uint8Array } }, value: T) =>
  Buffer.from(type.encode(value).finish());

describe('messageWriter', () => {
  it('writes the bytes BinaryWriter writes, for strings, nested repeated messages and packed numbers', () => {
    fc.assert(
      fc.property(
        text,
        text,
        fc.array(fc.record({ type: text, eventJson: text }), { maxLength: 4 }),
        (type, eventJson, more) => {
          const message = { type, eventJson, more };
          expect(
            encodeMessage(responsesV1.SessionResponse, message).equals(reference(responsesV1.SessionResponse, message)),
          ).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { maxLength: 20_000 }),
        text,
        fc.nat(),
        (tokens, sessionKey, prefixLen) => {
          const message = inferenceV1.GenerateRequest.fromPartial({
            tokens,
            sessionKey,
            prefixLen,
            model: 'm',
            stopTokens: [1, 2],
          });
          expect(
            encodeMessage(inferenceV1.GenerateRequest, message).equals(reference(inferenceV1.GenerateRequest, message)),
          ).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('decodes back to the message', () => {
    const message = { type: 'response.output_text.delta', eventJson: `{"delta":"${'é✓'.repeat(2_000)}"}`, more: [] };
    expect(responsesV1.SessionResponse.decode(encodeMessage(responsesV1.SessionResponse, message))).toEqual(message);
  });

  it('reserves a long string its UTF-8 length, not three bytes a unit, and finishes with a view of what it wrote', () => {
    const writer = messageWriter();
    writer.uint32(10).string('x'.repeat(1 << 20));
    const bytes = writer.finish();
    expect(bytes.byteLength).toBe(1 + 3 + (1 << 20));
    // The buffer behind the view is the one written into: at most a quarter more than needed.
    expect(bytes.buffer.byteLength).toBeLessThanOrEqual(Math.ceil(bytes.byteLength * 1.25) + 8);
  });

  it('writes fixed-width numbers (doubles, floats) where BinaryWriter does, message after message', () => {
    // Small buffers are slices of Node's shared pool, at an offset: BinaryWriter's own DataView,
    // made over the whole ArrayBuffer from offset 0, would put doubles elsewhere (the writer's
    // view() override keeps them in place; without it this fails).
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            tokens: fc.array(fc.nat(), { maxLength: 300 }),
            engineElapsedMs: fc.double({ noNaN: true }),
            promptTokens: fc.nat(),
            cachedTokens: fc.nat(),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        (chunks) => {
          for (const chunk of chunks) {
            const message: inferenceV1.GenerateResponse = { event: { $case: 'chunk', value: chunk } };
            expect(
              encodeMessage(inferenceV1.GenerateResponse, message).equals(
                reference(inferenceV1.GenerateResponse, message),
              ),
            ).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
