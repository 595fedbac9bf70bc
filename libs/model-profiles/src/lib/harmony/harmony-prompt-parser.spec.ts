import fc from 'fast-check';
import type { ConversationEntry, ParsedPromptMessage, ParsedTool, RenderHeader, ToolSpec } from '../model-profile';
import { PromptParseError } from '../profile-errors';
import { getProfile } from '../profile-registry';
import { conversationEntry, renderHeader } from '../testing/conversation-arbitraries';
import { HarmonyToken as T } from './harmony-tokens';

const profile = getProfile('harmony-o200k');

/** The message `parsePrompt` should recover for an entry. */
function expectedMessage(entry: ConversationEntry): ParsedPromptMessage {
  switch (entry.kind) {
    case 'message':
      return entry.role === 'assistant'
        ? { author: 'assistant', channel: 'final', content: entry.text }
        : { author: entry.role, content: entry.text };
    case 'reasoning':
      return { author: 'assistant', channel: 'analysis', content: entry.text };
    case 'function_call':
      return {
        author: 'assistant',
        channel: 'commentary',
        recipient: `${entry.namespace ?? 'functions'}.${entry.name}`,
        contentType: 'json',
        content: entry.arguments,
      };
    case 'custom_tool_call':
      return {
        author: 'assistant',
        channel: 'commentary',
        recipient: `${entry.namespace ?? 'functions'}.${entry.name}`,
        content: entry.input,
      };
    case 'function_call_output':
      return {
        author: `${entry.namespace ?? 'functions'}.${entry.name}`,
        channel: 'commentary',
        recipient: 'assistant',
        content: entry.output,
      };
  }
}

/** The tool `parsePrompt` should recover; tools are grouped by namespace in order of first appearance. */
function expectedTools(tools: readonly ToolSpec[]): ParsedTool[] {
  const order = [...new Set(tools.map((t) => t.namespace ?? 'functions'))];
  return order.flatMap((ns) =>
    tools
      .filter((t) => (t.namespace ?? 'functions') === ns)
      .map((t) => ({
        namespace: ns,
        name: t.name,
        parameters: t.freeform ? { type: 'string' } : (t.parameters ?? { type: 'object', properties: {} }),
        ...(t.description ? { description: t.description } : {}),
        ...(t.freeform ? { freeform: t.freeform } : {}),
      })),
  );
}

describe('parseHarmonyPrompt', () => {
  it('recovers every message and every tool from a rendered prompt', () => {
    fc.assert(
      fc.property(renderHeader(), fc.array(conversationEntry(), { maxLength: 6 }), (header, entries) => {
        const parsed = profile.parsePrompt(profile.render(header, entries));
        const headerMessages = parsed.messages.slice(0, parsed.messages.length - entries.length);
        expect(headerMessages.map((m) => m.author)).toEqual(
          header.instructions || header.tools.length > 0 ? ['system', 'developer'] : ['system'],
        );
        expect(parsed.messages.slice(headerMessages.length)).toEqual(entries.map(expectedMessage));
        expect(parsed.tools).toEqual(expectedTools(header.tools));
        expect(parsed.endsWithGenerationPrompt).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('recovers a schema with integers, nullables and defaults in the form it renders them', () => {
    const header: RenderHeader = {
      tools: [
        {
          name: 'book',
          parameters: {
            type: 'object',
            properties: {
              seats: { type: 'integer', default: 1 },
              note: { type: 'string', nullable: true },
              class: { type: 'string', enum: ['eco', 'biz'], default: 'eco' },
              legs: {
                type: 'array',
                items: { type: 'object', properties: { from: { type: 'string' } }, required: ['from'] },
              },
            },
            required: ['legs'],
          },
        },
      ],
    };
    const [tool] = profile.parsePrompt(profile.render(header, [])).tools;
    expect(tool.parameters).toEqual({
      type: 'object',
      properties: {
        seats: { type: 'number', default: 1 },
        note: { type: ['string', 'null'] },
        class: { type: 'string', enum: ['eco', 'biz'], default: 'eco' },
        legs: {
          type: 'array',
          items: { type: 'object', properties: { from: { type: 'string' } }, required: ['from'] },
        },
      },
      required: ['legs'],
    });
  });

  it('finds the tools even when the instructions contain a "# Tools" heading of their own', () => {
    const header: RenderHeader = {
      instructions: 'Read this.\n\n# Tools\n\n## not really\n\nfree text',
      tools: [{ name: 'ping' }],
    };
    expect(profile.parsePrompt(profile.render(header, [])).tools).toEqual([
      { namespace: 'functions', name: 'ping', parameters: { type: 'object', properties: {} } },
    ]);
  });

  it('reports a prompt without the generation prompt', () => {
    const tokens = [
      ...profile.renderHeader({ tools: [] }),
      ...profile.renderEntry({ kind: 'message', role: 'user', text: 'hi' }),
    ];
    expect(profile.parsePrompt(tokens).endsWithGenerationPrompt).toBe(false);
  });

  it('throws PromptParseError on token sequences the renderer does not produce', () => {
    const user = profile.renderEntry({ kind: 'message', role: 'user', text: 'hi' });
    expect(() => profile.parsePrompt(profile.encodeText('hello'))).toThrow(PromptParseError);
    expect(() => profile.parsePrompt(user.slice(0, -1))).toThrow(PromptParseError);
    expect(() => profile.parsePrompt([T.start, ...profile.encodeText('user'), T.end])).toThrow(PromptParseError);
    expect(() => profile.parsePrompt([T.start, ...profile.encodeText('user')])).toThrow(PromptParseError);
  });
});

/** What a parse gives, or the error class it throws. */
function outcome(parse: () => unknown): unknown {
  try {
    return parse();
  } catch (err) {
    return err instanceof PromptParseError ? 'PromptParseError' : err;
  }
}

describe('HarmonyPromptReader', () => {
  const reader = () => profile.createPromptReader!();

  it('reads a growing conversation turn by turn exactly as a full parse of each prompt', () => {
    fc.assert(
      fc.property(
        renderHeader(),
        fc.array(conversationEntry(), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (header, entries, cuts) => {
          // The prompts of successive turns: entries[0:k] each, ending with the generation prompt,
          // appended to one log as the worker does (prompt, then the completion that follows it).
          const r = reader();
          const ks = [...new Set([0, ...cuts.map((c) => c % (entries.length + 1)), entries.length])].sort(
            (a, b) => a - b,
          );
          for (const k of ks) {
            const prompt = profile.render(header, entries.slice(0, k));
            expect(r.read(prompt)).toEqual(profile.parsePrompt(prompt));
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('agrees with a full parse on every prefix of a prompt, torn messages and errors included', () => {
    fc.assert(
      fc.property(
        renderHeader(),
        fc.array(conversationEntry(), { maxLength: 4 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
        (header, entries, cuts) => {
          const full = profile.render(header, entries);
          const r = reader();
          for (const cut of [...cuts.map((c) => c % (full.length + 1))].sort((a, b) => a - b)) {
            const prefix = full.slice(0, cut);
            expect(outcome(() => r.read(prefix))).toEqual(outcome(() => profile.parsePrompt(prefix)));
          }
          expect(r.read(full)).toEqual(profile.parsePrompt(full));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('starts again when given a prompt shorter than what it read', () => {
    const r = reader();
    const long = profile.render({ tools: [] }, [
      { kind: 'message', role: 'user', text: 'one' },
      { kind: 'message', role: 'user', text: 'two' },
    ]);
    const short = profile.render({ tools: [] }, [{ kind: 'message', role: 'user', text: 'three' }]);
    r.read(long);
    expect(r.read(short)).toEqual(profile.parsePrompt(short));
  });

  it('reads a Uint32Array as it reads an array', () => {
    const prompt = profile.render({ instructions: 'be brief', tools: [] }, [
      { kind: 'message', role: 'user', text: 'hi' },
    ]);
    expect(reader().read(Uint32Array.from(prompt))).toEqual(profile.parsePrompt(prompt));
  });
});
