import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { encode } from 'gpt-tokenizer/encoding/o200k_harmony';
import { trickyText } from '../testing/o200k-text-arbitraries';
import { anyText } from '../testing/conversation-arbitraries';
import { RenderDeadlineError, TokenBudgetExceededError } from '../profile-errors';
import { fastEncodeO200k, O200K_CHUNK_UNITS } from './fast-o200k-encoder';
import { asciiPieceRank } from './o200k-ascii-ranks';
import { heapMergeAscii } from './o200k-heap-merge';
import { O200K_HARMONY_TABLE } from './o200k-harmony-tokenizer';
import { decodeTokens } from '../token-text-decoder';
import { cpuMsOf } from '@fastloop/test-kit';

/** What {@link fastEncodeO200k} must reproduce. */
const libraryEncode = (text: string): number[] => encode(text, { disallowedSpecial: new Set() });

const REPO_ROOT = resolve(__dirname, '../../../../..');

/** This repository's TypeScript sources under `folder`: real code, as tools print it. */
function sourceFiles(folder: string): string[] {
  return readdirSync(join(REPO_ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts') && !path.includes('node_modules'))
    .sort()
    .map((path) => readFileSync(join(REPO_ROOT, folder, path), 'utf8'));
}

/** `cat -n` style, as file-reading tools return code. */
const numberLines = (text: string): string =>
  text
    .split('\n')
    .map((line, i) => `${String(i + 1).padStart(6)}\t${line}`)
    .join('\n');

describe('fastEncodeO200k', () => {
  it.each([
    ['empty text', ''],
    ['contractions', "don't DON'T we'Ve she'LL it'x"],
    ['camel case', 'HTTPServer XMLHttpRequest'],
    ['comments after code', 'x;\n//y\n  // z\n'],
    ['blank lines', 'a  \n  \n  b  '],
    ['numbers', '1234567 3.14159 0x1F'],
    ['CRLF', 'a\r\n\r\nb'],
    ['special-token text', 'say <|end|><|start|>assistant'],
    ['non-ASCII between ASCII', 'café naïve Ünïcödé 日本語 x²+y² 🦀 a\u00a0b c\u2028d e\u0301'],
    ['lone surrogates', 'a\ud800b\udc00 \ud83e'],
    ['a long rare identifier', 'zqxjkvbwpfmlhgtrsdnc_ZQXJKVBWPFMLHGTRSDNC_0987654321'],
  ])('encodes %s exactly as gpt-tokenizer does', (_name, text) => {
    expect(fastEncodeO200k(text)).toEqual(libraryEncode(text));
  });

  it('encodes arbitrary unicode exactly as gpt-tokenizer does', () => {
    const text = fc.oneof(
      fc.string({ unit: 'grapheme' }),
      fc.string({ unit: 'binary' }),
      fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)) }),
      anyText(),
    );
    fc.assert(
      fc.property(text, (s) => expect(fastEncodeO200k(s)).toEqual(libraryEncode(s))),
      { numRuns: 3000 },
    );
  });

  it('encodes text built around the split alternatives exactly as gpt-tokenizer does', () => {
    fc.assert(
      fc.property(trickyText(), (s) => expect(fastEncodeO200k(s)).toEqual(libraryEncode(s))),
      { numRuns: 5000 },
    );
  });

  describe("on this repository's source files", () => {
    const files = [...sourceFiles('libs'), ...sourceFiles('apps')];

    it('encodes whole files, plain and line-numbered, exactly as gpt-tokenizer does', () => {
      expect(files.length).toBeGreaterThan(10);
      for (const file of files) {
        expect(fastEncodeO200k(file)).toEqual(libraryEncode(file));
        const numbered = numberLines(file);
        expect(fastEncodeO200k(numbered)).toEqual(libraryEncode(numbered));
      }
    });

    it('encodes slices cut anywhere exactly as gpt-tokenizer does', () => {
      const slice = fc.tuple(fc.nat(files.length - 1), fc.nat(), fc.nat(8000)).map(([index, from, length]) => {
        const file = files[index];
        const start = from % (file.length + 1);
        return file.slice(start, start + length);
      });
      fc.assert(
        fc.property(slice, (s) => expect(fastEncodeO200k(s)).toEqual(libraryEncode(s))),
        { numRuns: 300 },
      );
    });
  });

  it('stays exact once its piece memo has evicted entries', () => {
    // Distinct lowercase words that are no vocabulary entry, so each takes the BPE path once.
    const letters = (n: number): string =>
      Array.from(n.toString(26), (digit) => String.fromCharCode(0x61 + parseInt(digit, 26))).join('');
    const words = Array.from({ length: 9_000 }, (_, i) => `qz${letters(i)}xv`);
    const text = words.join(' ');
    const expected = libraryEncode(text);
    expect(fastEncodeO200k(text)).toEqual(expected);
    expect(fastEncodeO200k(text)).toEqual(expected);
  });

  describe('on pieces longer than a chunk', () => {
    /** A deterministic run of `length` units drawn from `alphabet`: one regex piece, no single entry. */
    const run = (length: number, alphabet: string, seed = 7): string => {
      let x = seed;
      let text = '';
      for (let i = 0; i < length; i++) {
        x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
        text += alphabet[x % alphabet.length];
      }
      return text;
    };
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const thai = 'กขคงจฉชซฌญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรลวศษสหฬอฮ';

    it('is exact up to the chunk size (the merge runs in a heap above 256 units)', () => {
      // gpt-tokenizer's own merge is quadratic: non-ASCII pieces stay under ~1,500 units to keep this test short.
      const piece = fc.oneof(
        fc.integer({ min: 257, max: O200K_CHUNK_UNITS }).map((n) => run(n, letters, n)),
        fc.integer({ min: 257, max: O200K_CHUNK_UNITS }).map((n) => ` ${' '.repeat(n)}x`),
        fc.integer({ min: 2, max: 1_500 }).map((n) => `x ${run(n, thai, n)} y`),
        fc.integer({ min: 2, max: 700 }).map((n) => `x${'🦀'.repeat(n)}y`),
      );
      fc.assert(
        fc.property(piece, (s) => expect(fastEncodeO200k(s)).toEqual(libraryEncode(s))),
        { numRuns: 12 },
      );
    });

    it('encodes longer pieces in chunks that still decode to the text, at a bounded cost', () => {
      // A 200 KB "word" took minutes in the quadratic merge (40 KB: 2.5 s on an idle machine).
      for (const text of [run(200_000, letters), ' '.repeat(200_000), run(20_000, thai), `a${'🦀'.repeat(5_000)}`]) {
        let tokens: number[] = [];
        expect(cpuMsOf(() => (tokens = fastEncodeO200k(text)))).toBeLessThan(5_000); // CPU, not wall time
        expect(decodeTokens(O200K_HARMONY_TABLE, tokens)).toBe(text);
      }
    });

    it('encodes a run of one unit exactly, at any length (merged on its runs)', () => {
      const rank = (piece: string): number => asciiPieceRank(piece, 0, piece.length);
      const spaces = (n: number): string => ' '.repeat(n);
      const equals = '='.repeat(70_000);
      const letterRun = `x${'a'.repeat(123_457)}y`;
      const cases: [string, number[]][] = [
        // Spaces before a letter: the run less one space, then ` y`.
        [`x${spaces(5_000)}y`, [rank('x'), ...heapMergeAscii(spaces(4_999), 0, 4_999), rank(' y')]],
        [`x${spaces(300_001)}y`, [rank('x'), ...heapMergeAscii(spaces(300_000), 0, 300_000), rank(' y')]],
        [`x${equals}y`, [rank('x'), ...heapMergeAscii(equals, 0, equals.length), rank('y')]],
        [letterRun, heapMergeAscii(letterRun, 0, letterRun.length)],
      ];
      for (const [text, expected] of cases) expect(fastEncodeO200k(text)).toEqual(expected);
    });

    it('stops at the token budget without encoding the rest', () => {
      const huge = run(1_000_000, letters).repeat(30); // 30 MB
      const cpuMs = cpuMsOf(() => {
        expect(() => fastEncodeO200k(huge, 1_000)).toThrow(TokenBudgetExceededError);
        expect(() => fastEncodeO200k('hello world '.repeat(1_000_000), 1_000)).toThrow(
          expect.objectContaining({ code: 'token_budget_exceeded', budget: 1_000 }),
        );
      });
      expect(cpuMs).toBeLessThan(2_000);
      expect(fastEncodeO200k('hello world', 2)).toEqual(libraryEncode('hello world'));
      // A run is counted before its tokens are written out.
      expect(() => fastEncodeO200k(' '.repeat(4 << 20), 1_000)).toThrow(TokenBudgetExceededError);
    });

    it('stops at its deadline with a RenderDeadlineError, within a chunk of work', () => {
      const texts = [run(1_000_000, letters), run(300_000, thai), 'hello world '.repeat(100_000)];
      for (const text of texts) {
        const deadline = performance.now() + 1;
        expect(() => fastEncodeO200k(text, Number.POSITIVE_INFINITY, deadline)).toThrow(
          expect.objectContaining({ code: 'render_deadline_exceeded' }),
        );
        expect(() => fastEncodeO200k(text, Number.POSITIVE_INFINITY, performance.now() - 1)).toThrow(
          RenderDeadlineError,
        );
      }
      expect(fastEncodeO200k('hello world', Number.POSITIVE_INFINITY, performance.now() - 1)).toEqual(
        libraryEncode('hello world'),
      );
    });
  });
});
