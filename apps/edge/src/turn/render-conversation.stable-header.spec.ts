import fc from 'fast-check';
import { getProfile, type ConversationEntry, type RenderHeader } from '@fastloop/model-profiles';
import { conversationEntry, renderHeader, toolSpec } from '@fastloop/model-profiles/testing';
import { extendConversation, renderConversation } from './render-conversation';

// Agents resend the same instructions and tools (as new JSON objects) on almost every turn, so the
// incremental path that matters is the one where the header is unchanged: each turn appends only its
// new entries to what was rendered before. Here most transitions keep the header (a deep copy, as a
// client resends it) and some change it the ways agents do (instructions edited, a tool added or
// dropped, reasoning effort switched, a wholly new header). Every turn is compared with an
// independent full render: the profile's own `render` of the whole conversation.
const profile = getProfile('harmony-o200k');

type Change = (h: RenderHeader) => fc.Arbitrary<RenderHeader>;
const changes: Change[] = [
  (h) => fc.string({ maxLength: 30 }).map((instructions) => ({ ...h, instructions })),
  (h) =>
    toolSpec().map((t) => ({
      ...h,
      tools: [...h.tools.filter((o) => o.name !== t.name || o.namespace !== t.namespace), t],
    })),
  (h) =>
    fc.nat().map((i) => ({ ...h, tools: h.tools.filter((_, j) => h.tools.length === 0 || j !== i % h.tools.length) })),
  (h) => fc.constantFrom('low' as const, 'high' as const).map((reasoningEffort) => ({ ...h, reasoningEffort })),
  () => renderHeader(),
];

interface Turn {
  header: RenderHeader;
  entries: ConversationEntry[];
  kept: boolean;
}

/** A conversation of 2–10 turns whose header is kept (deep-copied) with probability 5/6 per turn. */
const conversation: fc.Arbitrary<Turn[]> = renderHeader().chain((first) =>
  fc
    .array(
      fc.record({
        change: fc.oneof(
          { weight: 5, arbitrary: fc.constant(null) },
          { weight: 1, arbitrary: fc.nat(changes.length - 1) },
        ),
        entries: fc.array(conversationEntry(), { maxLength: 4 }),
      }),
      { minLength: 2, maxLength: 10 },
    )
    .chain((steps) => {
      // Build each turn's header from the previous one; a change is drawn from the previous header.
      const build = (i: number, prev: RenderHeader, acc: Turn[]): fc.Arbitrary<Turn[]> => {
        if (i === steps.length) return fc.constant(acc);
        const { change, entries } = steps[i];
        if (change === null || i === 0) {
          const header = i === 0 ? first : structuredClone(prev);
          return build(i + 1, header, [...acc, { header, entries, kept: i > 0 }]);
        }
        return changes[change](prev).chain((header) =>
          build(i + 1, header, [...acc, { header, entries, kept: false }]),
        );
      };
      return build(0, first, []);
    }),
);

describe('extendConversation with a header that stays the same on most turns', () => {
  it('renders every turn exactly as an independent full render of the whole conversation, token for token', () => {
    let transitions = 0;
    let kept = 0;
    fc.assert(
      fc.property(conversation, (turns) => {
        let state = renderConversation(profile, turns[0].header, turns[0].entries);
        const all: ConversationEntry[] = [...turns[0].entries];
        for (const turn of turns.slice(1)) {
          transitions++;
          if (turn.kept) kept++;
          state = extendConversation(profile, state, turn.header, turn.entries);
          all.push(...turn.entries);
          expect([...state.tokens.slice(), ...profile.renderGenerationPrompt()]).toEqual(
            profile.render(turn.header, all),
          );
          expect(state.entryEnds.length).toBe(all.length);
        }
      }),
      { numRuns: 60 },
    );
    // The generator does what it claims: most transitions keep the header (5/6 expected).
    expect(kept / transitions).toBeGreaterThan(0.7);
  });
});
