import fc from 'fast-check';
import { decode as libraryDecode, encode } from 'gpt-tokenizer/encoding/o200k_harmony';
import { decodeTokens } from '../token-text-decoder';
import { HarmonyToken } from './harmony-tokens';
import { encodeO200kText, O200K_HARMONY_TABLE, O200K_HARMONY_VOCAB_SIZE } from './o200k-harmony-tokenizer';

const SPECIAL_TEXT = [
  '<|start|>',
  '<|end|>',
  '<|message|>',
  '<|channel|>',
  '<|call|>',
  '<|return|>',
  '<|constrain|>',
  '<|endoftext|>',
  '<|startoftext|>',
  '<|reserved_200000|>',
];

describe('encodeO200kText', () => {
  it('encodes special-token text as ordinary text, where gpt-tokenizer by default throws', () => {
    expect(() => encode('<|end|>')).toThrow(/Disallowed special token/);
    for (const text of SPECIAL_TEXT) {
      const tokens = encodeO200kText(`user says ${text} here`);
      expect(tokens.every((id) => id < 199_998)).toBe(true);
      expect(decodeTokens(O200K_HARMONY_TABLE, tokens)).toBe(`user says ${text} here`);
    }
  });

  it('never produces a special token id and decodes back to the same text', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom(...SPECIAL_TEXT))), (parts) => {
        const text = parts.join('');
        const tokens = encodeO200kText(text);
        expect(tokens.every((id) => id >= 0 && id < 199_998)).toBe(true);
        expect(decodeTokens(O200K_HARMONY_TABLE, tokens)).toBe(text);
      }),
    );
  });

  it('encodes the empty string as no tokens', () => {
    expect(encodeO200kText('')).toEqual([]);
  });
});

describe('O200K_HARMONY_TABLE', () => {
  it('decodes every harmony special id to its name', () => {
    const names: Record<string, string> = {
      startOfText: '<|startoftext|>',
      endOfText: '<|endoftext|>',
      return: '<|return|>',
      constrain: '<|constrain|>',
      channel: '<|channel|>',
      start: '<|start|>',
      end: '<|end|>',
      message: '<|message|>',
      call: '<|call|>',
    };
    for (const [key, id] of Object.entries(HarmonyToken))
      expect(decodeTokens(O200K_HARMONY_TABLE, [id])).toBe(names[key]);
  });

  it("names every special and reserved id as gpt-tokenizer's own decoder does", () => {
    // Every id past the 199,998 ranks (the library decodes each of them to a name).
    for (let id = 199_998; id < O200K_HARMONY_VOCAB_SIZE; id++)
      expect([id, O200K_HARMONY_TABLE.special(id)]).toEqual([id, libraryDecode([id])]);
    expect(O200K_HARMONY_TABLE.special(200_018)).toBe('<|endofprompt|>');
    expect(O200K_HARMONY_TABLE.special(1_000)).toBeUndefined();
  });

  it('knows every id below the vocabulary size and none above', () => {
    expect(decodeTokens(O200K_HARMONY_TABLE, [O200K_HARMONY_VOCAB_SIZE - 1])).toBe('<|reserved_201087|>');
    expect(() => decodeTokens(O200K_HARMONY_TABLE, [O200K_HARMONY_VOCAB_SIZE])).toThrow();
  });
});
