import fc from 'fast-check';
import { getProfile, type ConversationEntry, type ModelProfile, type RenderHeader } from '@fastloop/model-profiles';
import { EntryRenderCache } from './entry-render-cache';
import { extendConversation, headerKeyOf, renderConversation, sameHeader } from './render-conversation';

const profile = getProfile('harmony-o200k');

const text = fc.string({ unit: 'grapheme', maxLength: 40 });
const entry: fc.Arbitrary<ConversationEntry> = fc.oneof(
  fc.record({
    kind: fc.constant('message' as const),
    role: fc.constantFrom('user' as const, 'assistant' as const, 'developer' as const, 'system' as const),
    text,
  }),
  fc.record({ kind: fc.constant('reasoning' as const), text }),
  fc.record({
    kind: fc.constant('function_call' as const),
    name: fc.constantFrom('read_file', 'shell'),
    arguments: fc.json(),
    callId: fc.constant('call_1'),
  }),
  fc.record({
    kind: fc.constant('function_call_output' as const),
    name: fc.constantFrom('read_file', 'shell'),
    output: text,
    callId: fc.constant('call_1'),
  }),
);
const header: fc.Arbitrary<RenderHeader> = fc.record({
  instructions: fc.option(text, { nil: undefined }),
  tools: fc.array(
    fc.record({
      name: fc.constantFrom('read_file', 'shell', 'grep'),
      description: fc.option(text, { nil: undefined }),
    }),
    { maxLength: 3 },
  ),
});

describe('extendConversation', () => {
  it('renders a conversation split into random turns exactly as one full render, token for token', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ header, entries: fc.array(entry, { maxLength: 5 }) }), { minLength: 1, maxLength: 6 }),
        (turns) => {
          let state = renderConversation(profile, turns[0].header, turns[0].entries);
          const all: ConversationEntry[] = [...turns[0].entries];
          for (const turn of turns.slice(1)) {
            state = extendConversation(profile, state, turn.header, turn.entries);
            all.push(...turn.entries);
            // A changed header (instructions, tools) re-renders from its first changed point.
            const full = renderConversation(profile, turn.header, all);
            expect(Array.from(state.tokens.slice())).toEqual(Array.from(full.tokens.slice()));
            expect(state.entryEnds.slice()).toEqual(full.entryEnds.slice());
          }
          const last = turns[turns.length - 1].header;
          expect(Array.from(state.tokens.slice()).concat(profile.renderGenerationPrompt())).toEqual(
            profile.render(last, all),
          );
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('EntryRenderCache', () => {
  it('returns the same tokens as rendering, and serves repeats from the cache', () => {
    const cache = new EntryRenderCache(10);
    const e: ConversationEntry = { kind: 'message', role: 'user', text: 'hello there' };
    expect(cache.render('t', profile, e)).toEqual(profile.renderEntry(e));
    expect(cache.render('t', profile, { ...e })).toEqual(profile.renderEntry(e));
    expect(cache.hits).toBe(1);
  });

  it("never serves one tenant's rendering to another (a hit would tell it what the other sent)", () => {
    const cache = new EntryRenderCache(10);
    const e: ConversationEntry = { kind: 'message', role: 'user', text: 'a shared document' };
    cache.forTenant('a').render(profile, e);
    expect(cache.peek('b', profile, e)).toBeUndefined();
    expect(cache.forTenant('b').render(profile, { ...e })).toEqual(profile.renderEntry(e));
    expect([cache.hits, cache.misses]).toEqual([0, 2]);
    cache.forTenant('a').render(profile, { ...e });
    expect(cache.hits).toBe(1);
  });

  it('keeps at most its bound of entries', () => {
    const cache = new EntryRenderCache(3);
    for (let i = 0; i < 10; i++) cache.render('t', profile, { kind: 'message', role: 'user', text: `m${i}` });
    expect(cache.size).toBe(3);
  });

  it('holds at most its bound of tokens, and does not keep an entry over an eighth of it', () => {
    const cache = new EntryRenderCache(1000, 800);
    const big: ConversationEntry = { kind: 'message', role: 'user', text: 'word '.repeat(200) };
    expect(cache.render('t', profile, big)).toEqual(profile.renderEntry(big));
    expect(cache.size).toBe(0);
    for (let i = 0; i < 200; i++)
      cache.render('t', profile, { kind: 'message', role: 'user', text: `message number ${i} `.repeat(3) });
    expect(cache.tokens).toBeLessThanOrEqual(800);
    expect(cache.size).toBeGreaterThan(5);
    expect(cache.size).toBeLessThan(200);
  });
});

describe('sameHeader', () => {
  // Small pools so that equal headers, and headers equal but for key order, come up often.
  const params = fc.oneof(
    fc.constant(undefined),
    fc.constantFrom(
      { type: 'object', properties: { path: { type: 'string' } } },
      { properties: { path: { type: 'string' } }, type: 'object' },
    ),
    fc.jsonValue({ maxDepth: 2 }).map((v) => ({ type: 'object', properties: { v } })),
  );
  const tool = fc.record(
    {
      name: fc.constantFrom('read_file', 'grep'),
      description: fc.constantFrom(undefined, 'Reads a file.'),
      parameters: params as fc.Arbitrary<RenderHeader['tools'][number]['parameters']>,
      namespace: fc.constantFrom(undefined, 'fs'),
    },
    { requiredKeys: ['name'] },
  );
  const smallHeader: fc.Arbitrary<RenderHeader> = fc.record({
    instructions: fc.constantFrom(undefined, 'Be brief.', 'Be thorough.'),
    tools: fc.array(tool, { maxLength: 2 }),
    reasoningEffort: fc.constantFrom(undefined, 'low' as const, 'high' as const),
  });

  it('is true exactly when headerKeyOf gives the same key', () => {
    fc.assert(
      fc.property(smallHeader, smallHeader, (a, b) => {
        expect(sameHeader(a, b)).toBe(headerKeyOf(a) === headerKeyOf(b));
        expect(sameHeader(a, structuredClone(a))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('tells key order apart, since the renderer walks keys in order', () => {
    const a: RenderHeader = { tools: [{ name: 'f', parameters: { type: 'object', properties: {} } }] };
    const b: RenderHeader = { tools: [{ name: 'f', parameters: { properties: {}, type: 'object' } }] };
    expect(sameHeader(a, b)).toBe(false);
    expect(sameHeader({ tools: [{ name: 'f', description: undefined }] }, { tools: [{ name: 'f' }] })).toBe(true);
  });
});

describe('renderConversation with a template that is not append-stable', () => {
  // Numbers the conversation's length up front, as templates that count turns do: appending an
  // entry changes the first token, so entries cannot be rendered one by one.
  const countdown: ModelProfile = {
    ...profile,
    appendStable: false,
    render: (h, es) => [es.length, ...profile.render(h, es)],
  };
  const entries: ConversationEntry[] = [
    { kind: 'message', role: 'user', text: 'hi' },
    { kind: 'message', role: 'assistant', text: 'hello' },
  ];

  it('renders the whole conversation with the template, generation prompt left off', () => {
    const rendered = renderConversation(countdown, { tools: [] }, entries);
    const full = countdown.render({ tools: [] }, entries);
    expect(rendered.tokens.slice(0)).toEqual(
      Uint32Array.from(full.slice(0, full.length - profile.renderGenerationPrompt().length)),
    );
  });

  it('never reuses a header key, so the next turn resends and the worker reuses only what still matches', () => {
    const a = renderConversation(countdown, { tools: [] }, entries.slice(0, 1));
    const b = renderConversation(countdown, { tools: [] }, entries);
    expect(a.headerKey).not.toBe(b.headerKey);
    expect(a.tokens.at(0)).not.toBe(b.tokens.at(0));
  });
});
