import fc from 'fast-check';
import type { JsonSchema } from '../json-schema';
import type { RenderHeader } from '../model-profile';
import { RenderLimitError, TokenBudgetExceededError } from '../profile-errors';
import { getProfile } from '../profile-registry';
import { conversationEntry, renderHeader } from '../testing/conversation-arbitraries';

const profile = getProfile('harmony-o200k');

describe('HarmonyRenderer limits', () => {
  it('renders exactly as without limits whenever the limits are not reached', () => {
    const generous = { maxTokens: 1e9, maxToolChars: 1e9, maxHeaderChars: 1e9, maxSchemaDepth: 1e4 };
    fc.assert(
      fc.property(renderHeader(), conversationEntry(), (h, e) => {
        expect(profile.renderHeader(h, generous)).toEqual(profile.renderHeader(h));
        expect(profile.renderEntry(e, generous)).toEqual(profile.renderEntry(e));
      }),
      { numRuns: 300 },
    );
  });

  it('stops an entry at its token budget', () => {
    const entry = { kind: 'message' as const, role: 'user' as const, text: 'hello world '.repeat(10_000) };
    const tokens = profile.renderEntry(entry).length;
    expect(profile.renderEntry(entry, { maxTokens: tokens })).toHaveLength(tokens);
    expect(() => profile.renderEntry(entry, { maxTokens: tokens - 10 })).toThrow(TokenBudgetExceededError);
  });

  it('names the tool whose rendering crosses maxToolChars, and the header crossing maxHeaderChars', () => {
    const wide: JsonSchema = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`p${i}`, { type: 'string' as const }])),
    };
    const header: RenderHeader = { tools: [{ name: 'small' }, { name: 'big', namespace: 'ns', parameters: wide }] };
    let caught: unknown;
    try {
      profile.renderHeader(header, { maxToolChars: 1_000 });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(RenderLimitError);
    expect(caught).toMatchObject({
      limit: 'tool_rendered_chars',
      value: 1_000,
      tool: { name: 'big', namespace: 'ns' },
    });
    expect(() =>
      profile.renderHeader({ instructions: 'x'.repeat(5_000), tools: [] }, { maxHeaderChars: 4_096 }),
    ).toThrow(expect.objectContaining({ limit: 'header_rendered_chars' }));
    expect(() => profile.renderHeader({ tools: [{ name: 't', parameters: wide }] }, { maxHeaderChars: 2_000 })).toThrow(
      expect.objectContaining({ limit: 'header_rendered_chars' }),
    );
  });
});
