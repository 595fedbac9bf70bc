import fc from 'fast-check';
import type { ConversationEntry, ModelProfile } from '../model-profile';
import { anyText, conversationEntry, renderHeader } from '../testing/conversation-arbitraries';
import { createChatTemplateProfile } from './chat-template-profile';
import { loadGgufModelFiles } from './gguf-model-files';
import { endsWithText, headerText } from './prompt-text';
import type { ModelFiles } from './text-tokenizer';
import { parseTemplatePrompt, readTemplatePrompt } from './template-prompt-parser';
import { HERMES_FORMAT, LLAMA3_JSON_FORMAT } from './tool-call-parser';
import { describeWhenAvailable, testModel } from '@fastloop/test-kit';

const testModelFile = testModel();
const describeModel = describeWhenAvailable(testModelFile);

describe("a prompt's header and end read from part of it (a decoder that cleans up spaces)", () => {
  // Like llama.cpp's detokenizer with clean_spaces on an SPM vocabulary: the first piece's leading
  // space is dropped and a space before punctuation goes, so a partial decode differs near its cut.
  const pieces = [' ', '.', 'a', ' x', '<|im_end|>', '<|im_start|>assistant\n'];
  const decode = (ids: readonly number[]) =>
    ids
      .map((i) => pieces[i])
      .join('')
      .replace(/ ([.,])/g, '$1')
      .replace(/^ /, '');

  it('gives the same header and end as decoding the whole prompt', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: pieces.length - 1 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom('.', ' x', 'a.', '<|im_start|>assistant\n', ' a', ''),
        // A marker ending in a space: a prefix cut before a '.' shows a space the whole text cleans away.
        fc.constantFrom(HERMES_FORMAT.endMarkers, ['a ']),
        (tokens, first, suffix, markers) => {
          const text = decode(tokens);
          const at = markers.map((m) => text.indexOf(m)).filter((i) => i >= 0);
          expect(headerText(decode, tokens, markers, first)).toBe(at.length > 0 ? text.slice(0, Math.min(...at)) : '');
          expect(endsWithText(decode, tokens, suffix, first)).toBe(text.endsWith(suffix));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describeModel("a prompt's header and end read from part of it (stories260K's own tokenizer)", () => {
  let files: ModelFiles;
  let profile: ModelProfile;
  let decode: (ids: readonly number[]) => string;
  let generation: string;

  beforeAll(async () => {
    files = await loadGgufModelFiles(testModelFile.path);
    profile = createChatTemplateProfile({ id: 'gguf:test', files });
    decode = (ids) => files.tokenizer.decode(ids);
    generation = decode(profile.renderGenerationPrompt());
  });

  /** A rendered conversation, a cut of it, noise after the cut, or noise alone (any ids of the vocabulary). */
  const prompts = () =>
    fc
      .tuple(
        renderHeader(),
        fc.array(conversationEntry(), { maxLength: 12 }),
        fc.nat(),
        fc.array(fc.integer({ min: 0, max: 511 }), { maxLength: 60 }),
        fc.constantFrom<'whole' | 'cut' | 'cut+noise' | 'noise'>('whole', 'cut', 'cut+noise', 'noise'),
      )
      .map(([h, entries, seed, noise, shape]) => {
        const rendered = profile.render(h, entries as ConversationEntry[]);
        const cut = rendered.slice(0, seed % (rendered.length + 1));
        if (shape === 'whole') return rendered;
        if (shape === 'cut') return cut;
        return shape === 'cut+noise' ? [...cut, ...noise] : noise;
      });

  it('gives the same header and end as decoding the whole prompt, for any prompt, cut and first read', () => {
    const markerSets = [HERMES_FORMAT.endMarkers, LLAMA3_JSON_FORMAT.endMarkers, ['</tools>', '\n'], ['']];
    fc.assert(
      fc.property(
        prompts(),
        fc.constantFrom(...markerSets),
        fc.integer({ min: 1, max: 64 }),
        fc.oneof(fc.constant(generation), anyText()),
        (tokens, markers, first, suffix) => {
          const text = decode(tokens);
          const at = markers.map((m) => text.indexOf(m)).filter((i) => i >= 0);
          expect(headerText(decode, tokens, markers, first)).toBe(at.length > 0 ? text.slice(0, Math.min(...at)) : '');
          expect(endsWithText(decode, tokens, suffix, first)).toBe(text.endsWith(suffix));
          expect(readTemplatePrompt(decode, tokens, generation, markers)).toEqual(
            parseTemplatePrompt(text, generation, markers),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('decodes the header and the end of a long conversation, not what lies between', () => {
    const header = {
      tools: [
        {
          name: 'read_file',
          parameters: { type: 'object' as const, properties: { path: { type: 'string' as const } } },
        },
      ],
      toolChoice: 'required' as const,
    };
    const entries: ConversationEntry[] = Array.from({ length: 400 }, (_, i) =>
      i % 2 === 0
        ? { kind: 'message', role: 'user', text: `turn ${i}: please read the next file and tell me what it does` }
        : { kind: 'message', role: 'assistant', text: `file ${i} parses the prompt and answers with a call` },
    );
    const tokens = profile.render(header, entries);
    let decoded = 0;
    const counting = (ids: readonly number[]) => {
      decoded += ids.length;
      return decode(ids);
    };
    const parsed = readTemplatePrompt(counting, tokens, generation, HERMES_FORMAT.endMarkers);
    expect(parsed).toEqual(parseTemplatePrompt(decode(tokens), generation, HERMES_FORMAT.endMarkers));
    expect(parsed.tools.map((t) => t.name)).toEqual(['read_file']);
    expect(parsed.endsWithGenerationPrompt).toBe(true);
    expect(tokens.length).toBeGreaterThan(10_000);
    expect(decoded).toBeLessThan(2_000);
  });
});
