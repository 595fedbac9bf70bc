import fc from 'fast-check';
import { normalise } from './normalise';

const unit = fc.constantFrom(
  ...'aZ9 -_'.split(''),
  '\u200b',
  '\u00ad',
  '\u202e',
  '\u0301',
  'ｓ',
  '\u3000',
  '𝐀',
  '\u{e0041}',
  'ﬁ',
  '㍿',
  '\ufdfa', // 18 characters under NFKC: the longest expansion
  '日本',
  '\ud800', // lone halves
  '\udc00',
);

/** The view by definition: each code point's NFKC form, format characters and marks dropped. */
function reference(text: string): string {
  let out = '';
  for (let i = 0; i < text.length;) {
    const cp = text.codePointAt(i) as number;
    const width = cp > 0xffff ? 2 : 1;
    const ch = text.slice(i, i + width);
    if (!/^[\p{Cf}\p{Mn}\p{Me}]$/u.test(ch) && !(cp >= 0xd800 && cp <= 0xdfff))
      out += ch.normalize('NFKC').replace(/[\p{Cf}\p{Mn}\p{Me}]/gu, '');
    i += width;
  }
  return out;
}

describe('normalise', () => {
  it('maps each code point on its own and places every view character on the code point it came from', () => {
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 60 }), (text) => {
        const view = normalise(text);
        expect(view.text).toBe(reference(text));
        if (view.at === null) return expect(view.text).toBe(text);
        expect(view.at.length).toBe(view.text.length + 1);
        expect(view.at[view.text.length]).toBe(text.length);
        for (let j = 0; j < view.text.length; j++) {
          const at = view.at[j];
          expect(at).toBeGreaterThanOrEqual(j > 0 ? view.at[j - 1] : 0);
          // An unchanged pair is copied as is: its second half keeps its own position.
          const half = at > 0 && /[\ud800-\udbff]/.test(text[at - 1]) && /[\udc00-\udfff]/.test(text[at]);
          // The view of the code point there begins the view of the text from there on.
          if (!half) expect(reference(text.slice(at))).toBe(view.text.slice(view.at.indexOf(at)));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('is its own view for text no code point changes', () => {
    for (const text of ['plain ascii', '日本語のテキスト — “quoted”', 'naïve café'])
      expect(normalise(text).at).toBeNull();
    expect(normalise('ｓｋ').text).toBe('sk');
  });
});
