import fc from 'fast-check';
import { DomainError, ErrorCode } from './index';
import { checkScanBounds } from './scan-bounds';

const refusal = (items: string[], maxItemBytes: number, maxRequestBytes?: number) => {
  try {
    checkScanBounds(
      items.map((text) => ({ text })),
      0,
      { maxItemBytes, maxRequestBytes },
    );
    return undefined;
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return err.code;
  }
};

describe('checkScanBounds', () => {
  it('counts UTF-8 bytes, not characters', () => {
    expect(refusal(['é'.repeat(6)], 12)).toBeUndefined();
    expect(refusal(['é'.repeat(7)], 12)).toBe(ErrorCode.safetyItemTooLarge);
  });

  it('refuses exactly the calls whose exact byte counts are over a bound', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary' }), { maxLength: 4 }),
        fc.nat(40),
        fc.nat(80),
        (items, item, request) => {
          const bytes = items.map((t) => Buffer.byteLength(t, 'utf8'));
          const total = bytes.reduce((a, b) => a + b, 0);
          const expected =
            total > request
              ? items.reduce((a, t) => a + t.length, 0) > request || bytes.every((b) => b <= item)
                ? ErrorCode.safetyRequestTooLarge
                : ErrorCode.safetyItemTooLarge
              : bytes.some((b) => b > item)
                ? ErrorCode.safetyItemTooLarge
                : undefined;
          expect(refusal(items, item, request)).toBe(expected);
        },
      ),
    );
  });
});
