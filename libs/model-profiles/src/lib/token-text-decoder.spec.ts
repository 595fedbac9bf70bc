import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { decode as libraryDecode } from 'gpt-tokenizer/encoding/o200k_harmony';
import { encodeO200kText, O200K_HARMONY_TABLE } from './harmony/o200k-harmony-tokenizer';
import { InvalidTokenError } from './profile-errors';
import { isWellFormedText } from './testing/conversation-arbitraries';
import { decodeTokens, incompleteTailLength, TokenTextDecoder } from './token-text-decoder';

describe('TokenTextDecoder', () => {
  it('holds back the bytes of a character split across tokens until it is complete', () => {
    const tokens = encodeO200kText('🦀'); // three byte tokens: F0 9F | A6 | 80
    expect(tokens).toHaveLength(3);
    const decoder = new TokenTextDecoder(O200K_HARMONY_TABLE, true);
    expect(tokens.map((id) => decoder.push(id))).toEqual(['', '', '🦀']);
    expect(decoder.flush()).toBe('');
  });

  it('never emits a lone surrogate or replacement character while decoding valid text token by token', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
        const decoder = new TokenTextDecoder(O200K_HARMONY_TABLE, true);
        const pieces = encodeO200kText(text).map((id) => decoder.push(id));
        pieces.push(decoder.flush());
        expect(pieces.every((piece) => isWellFormedText(piece) && !piece.includes('\uFFFD'))).toBe(true);
        expect(pieces.join('')).toBe(text);
      }),
    );
  });

  it('decodes an unfinished character at the end of the stream as U+FFFD', () => {
    const [first] = encodeO200kText('🦀');
    const decoder = new TokenTextDecoder(O200K_HARMONY_TABLE, true);
    expect(decoder.push(first)).toBe('');
    expect(decoder.flush()).toBe('\uFFFD');
  });

  it('keeps no state between instances, unlike gpt-tokenizer whose decode shares one streaming TextDecoder', () => {
    const [first] = encodeO200kText('ꙮ'); // a lone lead byte E0..EF
    libraryDecode([first]); // leaves the lead byte inside gpt-tokenizer's shared decoder
    const leaked = libraryDecode([first]);
    expect(leaked).toBe('\uFFFD'); // the previous call's byte resurfaced here: why we decode ourselves
    expect(decodeTokens(O200K_HARMONY_TABLE, [first])).toBe('\uFFFD');
    expect(decodeTokens(O200K_HARMONY_TABLE, encodeO200kText('abc'))).toBe('abc');
  });

  it('throws InvalidTokenError for an id outside the vocabulary when strict, and decodes U+FFFD when lenient', () => {
    expect(() => decodeTokens(O200K_HARMONY_TABLE, [201_088])).toThrow(InvalidTokenError);
    expect(() => decodeTokens(O200K_HARMONY_TABLE, [-1])).toThrow(InvalidTokenError);
    expect(() => decodeTokens(O200K_HARMONY_TABLE, [1.5])).toThrow(InvalidTokenError);
    expect(new TokenTextDecoder(O200K_HARMONY_TABLE, false).push(201_088)).toBe('\uFFFD');
  });
});

describe('the memory a decoded text holds', () => {
  it('is about its own size: one flat string, not a rope of a string per token', () => {
    // A heap figure, not a timing: V8's GC is asked for by flag, as --expose-gc would.
    setFlagsFromString('--expose_gc');
    const gc = runInNewContext('gc') as () => void;
    const tokens = encodeO200kText(' const value = compute(input);\n'.repeat(12_000)); // ~100k tokens
    gc();
    const before = process.memoryUsage().heapUsed;
    const held = [1, 2, 3].map(() => decodeTokens(O200K_HARMONY_TABLE, tokens));
    gc();
    const perToken = (process.memoryUsage().heapUsed - before) / (held.length * tokens.length);
    // Flat: about the text's bytes per token (~4 here). A rope: a 32-byte cons string per token.
    expect(held[0].length).toBe(' const value = compute(input);\n'.length * 12_000);
    expect(perToken).toBeLessThan(12);
  });
});

describe('incompleteTailLength', () => {
  it('counts the bytes of an unfinished multi-byte sequence at the end', () => {
    expect(incompleteTailLength([0x61])).toBe(0);
    expect(incompleteTailLength([0xf0])).toBe(1);
    expect(incompleteTailLength([0xf0, 0x9f, 0xa6])).toBe(3);
    expect(incompleteTailLength([0xf0, 0x9f, 0xa6, 0x80])).toBe(0);
    expect(incompleteTailLength([0x61, 0xe6, 0x97])).toBe(2);
  });

  it('does not hold back bytes that can never become valid', () => {
    expect(incompleteTailLength([0x80, 0x80, 0x80, 0x80])).toBe(0);
    expect(incompleteTailLength([0xff])).toBe(0);
  });
});
