import fc from 'fast-check';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { asciiPieceEnd, BAIL } from './o200k-ascii-split';
import { trickyText } from '../testing/o200k-text-arbitraries';

function regexPieces(text: string): string[] {
  return Array.from(text.matchAll(O200K_TOKEN_SPLIT_REGEX), (match) => match[0]);
}

/** The scanner's pieces of an all-ASCII text; throws on a BAIL, which ASCII text never needs. */
function scannerPieces(text: string): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length;) {
    const end = asciiPieceEnd(text, start);
    if (end === BAIL) throw new Error(`bailed at ${start} in ${JSON.stringify(text)}`);
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

describe('asciiPieceEnd', () => {
  it.each([
    [
      'contractions in either case',
      "don't DON'T we'Ve she'LL it'x",
      ["don't", " DON'T", " we'Ve", " she'LL", ' it', "'x"],
    ],
    ['an upper run followed by a lower run', 'HTTPServer XMLHttp ABC', ['HTTPServer', ' XMLHttp', ' ABC']],
    ['a prefix unit before letters', '  foo\tbar_baz.qux', [' ', ' foo', '\tbar', '_baz', '.qux']],
    ['punctuation with trailing newlines and slashes', 'x;\n//y', ['x', ';\n//', 'y']],
    ['a space before punctuation', 'a = (b);', ['a', ' =', ' (', 'b', ');']],
    ['whitespace up to its last newline', 'a  \n  \n  b', ['a', '  \n  \n', ' ', ' b']],
    ['CRLF runs', 'a\r\n\r\nb\r\n', ['a', '\r\n\r\n', 'b', '\r\n']],
    ['trailing spaces', 'end  ', ['end', '  ']],
    ['a single space before a digit', 'x 1', ['x', ' ', '1']],
    ['digits in threes', '1234567', ['123', '456', '7']],
    ['vertical tab and form feed as whitespace', 'a\v\fb', ['a', '\v', '\fb']],
    ['control characters as punctuation', '\0\x1fa\x01b\x7f', ['\0\x1f', 'a', '\x01b', '\x7f']],
  ])('splits %s as the regex does', (_name, text, pieces) => {
    expect(regexPieces(text)).toEqual(pieces);
    expect(scannerPieces(text)).toEqual(pieces);
  });

  it.each([
    ['a letter run ends in a non-ASCII letter', 'café', 0],
    ['a letter run ends in a combining mark', 'e\u0301', 0],
    ['a prefix unit precedes a non-ASCII letter', ' é', 0],
    ['fewer than three digits end in a non-ASCII digit', '12²', 0],
    ['a whitespace run ends in NBSP', ' \u00a0', 0],
    ['a punctuation run ends in a non-ASCII symbol', '(…', 0],
    ['a contraction letter is non-ASCII', "it'ѕ", 0],
    ['the unit is a lone surrogate', '\ud800', 0],
  ])('bails when %s', (_name, text, start) => {
    expect(asciiPieceEnd(text, start)).toBe(BAIL);
  });

  it('does not look past a piece that is complete without the next unit', () => {
    expect(asciiPieceEnd('123²', 0)).toBe(3);
    expect(asciiPieceEnd("it'sé", 0)).toBe(4);
  });

  it('splits ASCII text exactly as the regex does', () => {
    const ascii = fc.string({ unit: fc.integer({ min: 0, max: 127 }).map((code) => String.fromCharCode(code)) });
    fc.assert(
      fc.property(fc.oneof(ascii, trickyText({ asciiOnly: true })), (text) =>
        expect(scannerPieces(text)).toEqual(regexPieces(text)),
      ),
      {
        numRuns: 5000,
      },
    );
  });

  it('returns the regex piece or BAIL at every piece start of any text', () => {
    const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
    const anyText = fc.oneof(
      fc.string({ unit: 'grapheme' }),
      fc.string({ unit: 'binary' }),
      fc.string({ unit: codeUnit }),
      trickyText(),
    );
    fc.assert(
      fc.property(anyText, (text) => {
        for (const match of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) {
          const end = asciiPieceEnd(text, match.index);
          if (end !== BAIL) expect(text.slice(match.index, end)).toBe(match[0]);
        }
      }),
      { numRuns: 5000 },
    );
  });
});
