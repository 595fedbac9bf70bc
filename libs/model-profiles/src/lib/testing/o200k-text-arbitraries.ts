/**
 * fast-check generators for the o200k encoder's specs (not exported from the package): text made
 * of the fragments where the split regex's alternatives meet.
 */
import fc from 'fast-check';

const WHITESPACE = [' ', ' ', '  ', '    ', '\t', '\n', '\n', '\r', '\r\n', '\v', '\f', ' \n '];
const CONTRACTIONS = [
  "'s",
  "'S",
  "'t",
  "'T",
  "'d",
  "'D",
  "'m",
  "'M",
  "'ll",
  "'LL",
  "'lL",
  "'Ll",
  "'ve",
  "'VE",
  "'vE",
  "'re",
  "'Re",
  "'",
  "'l",
  "'v",
  "'r",
  "'x",
  "''",
];
const PUNCTUATION = [
  '/',
  '//',
  '///',
  '.',
  ',',
  ';',
  ':',
  '(',
  ')',
  '{',
  '}',
  '[',
  ']',
  '_',
  '-',
  '=',
  '=>',
  '*',
  '#',
  '"',
  '`',
  '\\',
  '<|end|>',
  '\0',
  '\x1f',
  '\x7f',
];
/** Non-ASCII letters (Ll, Lu, Lt, Lm, Lo), digits (Nd, No), marks, whitespace, symbols, surrogates. */
const NON_ASCII = [
  'é',
  'É',
  'ß',
  'ǅ',
  'ʰ',
  '日本',
  '²',
  '٣',
  '\u0301',
  '\u00a0',
  '\u2028',
  '\u2029',
  '\u3000',
  '\ufeff',
  '\u0085',
  '…',
  '🦀',
  '👩‍👩‍👧',
  '\ud800',
  '\udc00',
];

const run = (units: string, maxLength: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...units), minLength: 1, maxLength });

/** Strings of letters, digits, whitespace, punctuation and contractions, with some non-ASCII. */
export const trickyText = ({ asciiOnly = false } = {}): fc.Arbitrary<string> => {
  const fragments = [
    { weight: 5, arbitrary: fc.constantFrom(...WHITESPACE) },
    { weight: 3, arbitrary: fc.constantFrom(...CONTRACTIONS) },
    { weight: 4, arbitrary: run('abcxyz', 6) },
    { weight: 3, arbitrary: run('ABCXYZ', 5) },
    { weight: 3, arbitrary: run('aAzZ', 6) },
    { weight: 3, arbitrary: run('0123456789', 7) },
    { weight: 4, arbitrary: fc.constantFrom(...PUNCTUATION) },
  ];
  if (!asciiOnly) fragments.push({ weight: 2, arbitrary: fc.constantFrom(...NON_ASCII) });
  return fc.array(fc.oneof(...fragments), { maxLength: 30 }).map((parts) => parts.join(''));
};
