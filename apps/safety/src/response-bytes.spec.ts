import fc from 'fast-check';
import { encodeMessage, safetyV1 } from '@fastloop/proto';
import { classifyResponseBytesAtMost } from './response-bytes';

const u32 = fc.nat({ max: 0xffff_ffff });
const text = fc.string({ unit: 'binary', maxLength: 40 });
const finding = fc.record({
  ruleId: text,
  itemIndex: u32,
  message: text,
  category: fc.constantFrom(...Object.values(safetyV1.Category).filter((v) => typeof v === 'number' && v >= 0)),
  action: fc.constantFrom(...Object.values(safetyV1.Action).filter((v) => typeof v === 'number' && v >= 0)),
  start: u32,
  endItemIndex: u32,
  end: u32,
  score: u32,
  provisional: fc.boolean(),
});

describe('classifyResponseBytesAtMost', () => {
  it('is never below the encoded size, whatever the fields hold', () => {
    fc.assert(
      fc.property(
        fc.record({
          verdict: fc.constantFrom(safetyV1.Verdict.VERDICT_ALLOW, safetyV1.Verdict.VERDICT_BLOCK),
          state: fc.uint8Array({ maxLength: 300 }),
          findings: fc.array(finding, { maxLength: 5 }),
          itemsSeen: u32,
          windowChars: u32,
          findingsOmitted: fc.option(u32, { nil: undefined }),
          heldChars: fc.option(u32, { nil: undefined }),
        }),
        (fields) => {
          const response = safetyV1.ClassifyResponse.fromPartial(fields as Partial<safetyV1.ClassifyResponse>);
          const exact = encodeMessage(safetyV1.ClassifyResponse, response).length;
          expect(classifyResponseBytesAtMost(response)).toBeGreaterThanOrEqual(exact);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('stays close for a streamed output batch (a state, no findings)', () => {
    const response = safetyV1.ClassifyResponse.fromPartial({
      verdict: safetyV1.Verdict.VERDICT_ALLOW,
      state: Buffer.alloc(700),
      itemsSeen: 3,
      windowChars: 255,
      heldChars: 12,
    });
    const exact = encodeMessage(safetyV1.ClassifyResponse, response).length;
    expect(classifyResponseBytesAtMost(response) - exact).toBeLessThan(40);
  });
});
