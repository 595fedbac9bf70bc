import fc from 'fast-check';
import { approxBytes } from './conversation-state';

describe('approxBytes', () => {
  it('stays within a small factor of the JSON length of any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const json = JSON.stringify(value).length;
        const approx = approxBytes(value);
        // Escapes lengthen JSON up to 6× a character; a number or boolean counts 8 however short.
        expect(approx).toBeGreaterThanOrEqual(json / 6);
        expect(approx).toBeLessThanOrEqual(8 * json + 8);
      }),
    );
  });

  it('counts megabytes of text by their length, without stringifying them', () => {
    const text = 'x'.repeat(4 * 1024 * 1024);
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      const bytes = approxBytes([{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }]);
      expect(bytes).toBeGreaterThanOrEqual(text.length);
      expect(bytes).toBeLessThan(text.length + 200);
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
  });
});
